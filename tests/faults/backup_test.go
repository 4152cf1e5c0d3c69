//go:build integration

package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// invBackupJobOnce: a Backup (or a Restore, a TidbInitializer) gets one Job; another only after the previous one
// Failed (a retry).
const invBackupJobOnce invariant = "job-once"

// jobLedger is what the checker knows of the Jobs of each Backup (by its UID). Guarded by checker.mu.
type jobLedger struct {
	jobs map[types.UID]map[types.UID]string // Backup UID → Job UID → Job name
	// failed are the Jobs the informer has seen Failed: a retry deletes the failed Job before it
	// creates the next one of the same name, so the cache alone no longer shows that it failed.
	failed map[types.UID]bool
}

// addJobHandler judges every Job the informer sees for the first time that a Backup, a Restore or a
// TidbInitializer controls.
func (c *checker) addJobHandler(f informers.SharedInformerFactory) error {
	jobs := f.Batch().V1().Jobs().Informer()
	idx := jobs.GetIndexer()
	_, err := jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onJob(idx, obj.(*batchv1.Job)) },
		UpdateFunc: func(_, obj any) { c.noteJobFailed(obj) },
		DeleteFunc: c.noteJobFailed,
	})
	if err != nil {
		return fmt.Errorf("add the Job handler: %w", err)
	}
	return nil
}

func (c *checker) onJob(idx cache.Indexer, job *batchv1.Job) {
	owner := metav1.GetControllerOf(job)
	if owner == nil || (owner.Kind != "Backup" && owner.Kind != "Restore" && owner.Kind != "TidbInitializer") {
		return
	}
	c.mu.Lock()
	if c.ledger.jobs == nil {
		c.ledger.jobs = map[types.UID]map[types.UID]string{}
	}
	seen := c.ledger.jobs[owner.UID]
	if seen == nil {
		seen = map[types.UID]string{}
		c.ledger.jobs[owner.UID] = seen
	}
	var live []string
	for uid, name := range seen {
		if uid == job.UID {
			c.mu.Unlock()
			return
		}
		if !c.ledger.failed[uid] && !jobFailed(idx, name, uid) {
			live = append(live, name)
		}
	}
	seen[job.UID] = job.Name
	c.mu.Unlock()
	c.check(invBackupJobOnce, len(live) == 0, "Job %s created for %s %s while its earlier Job(s) %v had not failed",
		job.Name, owner.Kind, owner.Name, live)
}

// noteJobFailed records a Job seen Failed (on an update, or in its last state when deleted).
func (c *checker) noteJobFailed(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	job, ok := obj.(*batchv1.Job)
	if !ok || !jobHasFailed(job) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ledger.failed == nil {
		c.ledger.failed = map[types.UID]bool{}
	}
	c.ledger.failed[job.UID] = true
}

func jobHasFailed(j *batchv1.Job) bool {
	for _, cd := range j.Status.Conditions {
		if cd.Type == batchv1.JobFailed && cd.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobFailed: the Job name (with uid) is in the cache and Failed; one gone from the cache was deleted
// (by the operator's retry, after it failed) and counts as failed only if the cache saw it fail.
func jobFailed(idx cache.Indexer, name string, uid types.UID) bool {
	for _, o := range idx.List() {
		j := o.(*batchv1.Job)
		if j.Name == name && j.UID == uid {
			return jobHasFailed(j)
		}
	}
	return false
}

// startBackup applies the backup-manager's RBAC and creates Backup name of the scenario's cluster, to
// S3, edited by mutate.
func (s *sc) startBackup(name string, mutate ...func(*v1alpha1.Backup)) {
	s.t.Helper()
	s.applyBackupRBAC()
	b := &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.BackupSpec{
			CleanPolicy: v1alpha1.CleanPolicyTypeRetain,
			BR:          &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
				Provider: "aws", Bucket: "backups", Prefix: name, SecretName: "s3-secret"}},
		},
	}
	for _, m := range mutate {
		m(b)
	}
	if _, err := s.pc.PingcapV1alpha1().Backups(s.env.Namespace).Create(s.env.Ctx, b, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create Backup %s: %v", name, err)
	}
}

// applyBackupRBAC applies the backup-manager's RBAC to the scenario's namespace.
func (s *sc) applyBackupRBAC() {
	s.t.Helper()
	framework.ApplyYAMLFileTo(s.t, s.env.Ctx, s.kubeconfig(), filepath.Join(framework.RepoRoot(), "manifests", "backup", "backup-rbac.yaml"), s.env.Namespace)
}

// waitJob waits until Job name exists and satisfies cond (nil: exists).
func (s *sc) waitJob(name string, cond func(*batchv1.Job) bool) *batchv1.Job {
	s.t.Helper()
	var job *batchv1.Job
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "Job "+name, func(ctx context.Context) (bool, error) {
		j, err := s.env.Kube.BatchV1().Jobs(s.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "Job %s status %+v", name, j.Status)
		job = j
		return cond == nil || cond(j), nil
	})
	return job
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// completeBackup writes what the backup-manager writes at the end of its run, and waits until the
// operator shows the Backup Complete with its Scheduled condition kept.
func (s *sc) completeBackup(name string) {
	s.t.Helper()
	bks := s.pc.PingcapV1alpha1().Backups(s.env.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := bks.Get(s.env.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		condition.SetBackupCondition(&b.Status, v1alpha1.BackupCondition{Type: v1alpha1.BackupComplete, Status: corev1.ConditionTrue}, now)
		b.Status.BackupPath, b.Status.BackupSize, b.Status.CommitTs, b.Status.TimeCompleted = "s3://backups/"+name, 1024, "450000000000000000", now
		_, err = bks.UpdateStatus(s.env.Ctx, b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("complete Backup %s: %v", name, err)
	}
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "Backup "+name+" Complete", func(ctx context.Context) (bool, error) {
		b, err := bks.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s conditions %+v", b.Status.Phase, b.Status.Conditions)
		return b.Status.Phase == v1alpha1.BackupComplete && condition.IsBackupComplete(b) && b.Status.BackupSize == 1024, nil
	})
}

// expectJobs fails unless the namespace has exactly the Jobs named.
func (s *sc) expectJobs(want ...string) {
	s.t.Helper()
	jobs, err := s.env.Kube.BatchV1().Jobs(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var got []string
	for _, j := range jobs.Items {
		got = append(got, j.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		s.t.Errorf("Jobs %v, want %v", got, want)
	}
}

// deleteJobPods deletes the pods of Job name, as a node drain or a user would.
func (s *sc) deleteJobPods(name string) int {
	s.t.Helper()
	pods, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if err := s.env.Kube.CoreV1().Pods(s.env.Namespace).Delete(s.env.Ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			s.t.Fatalf("delete pod %s: %v", p.Name, err)
		}
	}
	return len(pods.Items)
}

// backupScenarios: a Backup whose operator is killed while its Job runs, or once the Job completed
// and before the backup-manager's status; and a Backup whose Job's pod is deleted.
func backupScenarios() []scenario {
	run := func(name string, fault func(s *sc)) func(t *testing.T) {
		return func(t *testing.T) {
			s := start(t, scOptions{})
			s.startBackup(name)
			s.waitJob("backup-"+name, nil)
			fault(s)
			s.waitJob("backup-"+name, jobComplete)
			s.completeBackup(name)
			s.waitConverged("the cluster stays converged")
			s.expectJobs("backup-" + name)
		}
	}
	return append([]scenario{
		{name: "backup/kill-while-job-runs", representative: true,
			asserts: "operator context cancelled once the Backup's Job exists; the Job completes, the new operator keeps it (one Job, `backup-job-once`) and shows the Backup Complete",
			run:     run("snap", func(s *sc) { s.restartManager() })},
		{name: "backup/kill-after-job-complete",
			asserts: "operator context cancelled once the Backup's Job completed, before the backup-manager's status: no second Job, the Backup Complete",
			run: run("done", func(s *sc) {
				s.waitJob("backup-done", jobComplete)
				s.restartManager()
			})},
		{name: "initializer/kill-while-job-runs",
			asserts: "a TidbInitializer of the cluster; operator context cancelled once its Job exists: one Job (`job-once`), the initializer Completed",
			run:     runInitializer},
		{name: "backup/job-pod-deleted",
			asserts: "the pod of the Backup's Job deleted while it runs: the Job controller replaces it, the operator creates no second Job, the Backup Complete",
			run:     run("pod", func(s *sc) { s.deleteJobPods("backup-pod") })},
	}, jobScenarios()...)
}

// runInitializer creates a TidbInitializer (root's password from a Secret, inline SQL) for the
// converged cluster, kills the operator once its Job exists, and waits until it is Completed.
func runInitializer(t *testing.T) {
	s := start(t, scOptions{})
	framework.ApplyYAML(t, s.env.Ctx, `
apiVersion: v1
kind: Secret
metadata: {name: tidb-secret}
stringData: {root: faults-root}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbInitializer
metadata: {name: init}
spec:
  image: tnir/mysqlclient
  cluster: {name: basic}
  passwordSecret: tidb-secret
  initSql: "CREATE DATABASE app;"
`, s.env.Namespace)
	s.waitJob("basic-tidb-initializer", nil)
	s.restartManager()
	s.waitJob("basic-tidb-initializer", jobComplete)
	framework.WaitFor(t, s.env.Ctx, stepTimeout, "the TidbInitializer Completed", func(ctx context.Context) (bool, error) {
		ti, err := s.pc.PingcapV1alpha1().TidbInitializers(s.env.Namespace).Get(ctx, "init", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s", ti.Status.Phase)
		return ti.Status.Phase == v1alpha1.InitializePhaseCompleted, nil
	})
	s.waitConverged("the cluster stays converged")
	s.expectJobs("basic-tidb-initializer")
}
