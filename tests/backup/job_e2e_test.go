//go:build integration

package backup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const jobTimeout = time.Minute

// jobFixture is a namespace with the operator running, a paused TidbCluster
// "basic" for Backups to target (the controller only reads its version), the
// S3 server and its credentials Secret.
type jobFixture struct {
	*fixture
	srv *s3Server
	op  *operator.Manager
	// cleaned names the Backups whose clean Job the test ran.
	cleaned map[string]bool
	// extraEnv is added to every Job's env by runJob: the loopback endpoint
	// of a storage emulator (STORAGE_EMULATOR_HOST), which a real pod would
	// not need.
	extraEnv []string
}

func newJobFixture(t *testing.T) *jobFixture {
	t.Helper()
	f := newClusterFixture(t)
	f.op = operator.StartManager(t, f.env.Namespace, nil)
	return f
}

// newClusterFixture is newJobFixture without the operator: the namespace,
// the backup RBAC, the paused TidbCluster "basic", the S3 server and its
// credentials Secret.
func newClusterFixture(t *testing.T) *jobFixture {
	t.Helper()
	f := &jobFixture{fixture: newFixture(t), cleaned: map[string]bool{}}
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.srv = startS3(t, ctx)
	framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), "manifests", "backup", "backup-rbac.yaml"), ns)
	framework.ApplyYAML(t, ctx, `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec:
  version: v8.5.0
  paused: true
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 1Gi}}
  tidb: {replicas: 1}
`, ns)
	if _, err := f.env.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-secret"},
		Data: map[string][]byte{"access_key": []byte(accessKey), "secret_key": []byte(secretKey)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitJob waits until Job name exists and returns it.
func (f *jobFixture) waitJob(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	framework.WaitFor(t, f.env.Ctx, jobTimeout, "Job "+name, func(ctx context.Context) (bool, error) {
		j, err := f.env.Kube.BatchV1().Jobs(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		job = j
		return err == nil, err
	})
	return job
}

// waitBackup waits until Backup name satisfies cond (a nil Backup: it is gone).
func (f *jobFixture) waitBackup(t *testing.T, name, desc string, cond func(*v1alpha1.Backup) bool) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, jobTimeout, desc, func(ctx context.Context) (bool, error) {
		b, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return cond(nil), nil
		}
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s conditions %+v finalizers %v", b.Status.Phase, b.Status.Conditions, b.Finalizers)
		return cond(b), nil
	})
}

// runJob runs what job's pod would run: its main container's command (the
// image's /backup-manager is the binary built from cmd/backup-manager) with
// exactly its args plus --kubeconfig, and only its env, resolved as the
// kubelet would (Secret keys read from the API, the downward API's
// namespace and a pod name); the stand-in br is `br` on PATH, as the
// contract allows. It returns the exit code and output.
func (f *jobFixture) runJob(t *testing.T, job *batchv1.Job) (int, string) {
	t.Helper()
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/backup-manager"}) {
		t.Fatalf("Job %s runs %v, want [/backup-manager]", job.Name, c.Command)
	}
	if len(c.EnvFrom) != 0 {
		t.Fatalf("Job %s has envFrom %v, which this test does not resolve", job.Name, c.EnvFrom)
	}
	env := []string{"PATH=" + f.bins + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"STANDIN_BR_ARGS_FILE=" + f.args}
	for _, e := range c.Env {
		env = append(env, e.Name+"="+f.envValue(t, job, e))
	}
	env = append(env, f.extraEnv...)
	ctx, cancel := context.WithTimeout(f.env.Ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(f.bins, "backup-manager"), append(slices.Clone(c.Args), "--kubeconfig="+framework.KubeconfigPath())...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("running Job %s's command %v: %v\n%s", job.Name, c.Args, err, out)
	return -1, ""
}

// envValue resolves env var e of job's pod: a literal, a Secret key, or the
// pod's namespace or name from the downward API.
func (f *jobFixture) envValue(t *testing.T, job *batchv1.Job, e corev1.EnvVar) string {
	t.Helper()
	switch src := e.ValueFrom; {
	case src == nil:
		return e.Value
	case src.SecretKeyRef != nil:
		s, err := f.env.Kube.CoreV1().Secrets(job.Namespace).Get(f.env.Ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("env %s: reading Secret %s: %v", e.Name, src.SecretKeyRef.Name, err)
		}
		v, ok := s.Data[src.SecretKeyRef.Key]
		if !ok {
			t.Fatalf("env %s: Secret %s has no key %s", e.Name, src.SecretKeyRef.Name, src.SecretKeyRef.Key)
		}
		return string(v)
	case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.namespace":
		return job.Namespace
	case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.name":
		return job.Name + "-x7k2p"
	}
	t.Fatalf("env %s of Job %s: unsupported source %+v", e.Name, job.Name, e.ValueFrom)
	return ""
}

// restartOperator stops the operator (as a killed pod would stop) and starts
// a new one, waiting until it reports ready.
func (f *jobFixture) restartOperator(t *testing.T) {
	t.Helper()
	if err := f.op.Stop(); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}
	f.op = operator.StartManager(t, f.env.Namespace, nil)
	framework.WaitFor(t, f.env.Ctx, jobTimeout, "the new operator is ready", func(ctx context.Context) (bool, error) {
		code, _, err := f.op.Get(ctx, f.op.Options.HealthAddr, "/readyz")
		return err == nil && code == 200, nil
	})
}

// TestJobCommandLinesBackupAndClean runs the controller's own Jobs with the
// real backup-manager, API server and S3 server.
func TestJobCommandLinesBackupAndClean(t *testing.T) { runJobFlow(t, "") }

// TestJobOperatorRestartMidBackupLosesNothing is the same flow with the
// operator killed after it created the backup Job and a new one started
// before the Job's pod runs: the backup completes, with exactly one Job
// (the first, never recreated), and the new operator cleans on deletion.
func TestJobOperatorRestartMidBackupLosesNothing(t *testing.T) { runJobFlow(t, restartMidBackup) }

// TestJobOperatorRestartMidCleanLosesNothing is the same flow with the
// operator killed after it created the clean Job of the deleted Backup
// (the finalizer still holding it) and a new one started before the Job's
// pod runs: there is exactly one clean Job ever (watched from before the
// deletion), it empties the prefix, and the new operator removes the
// finalizer, so the Backup is gone.
func TestJobOperatorRestartMidCleanLosesNothing(t *testing.T) { runJobFlow(t, restartMidClean) }

// Where runJobFlow restarts the operator.
const (
	restartMidBackup = "backup"
	restartMidClean  = "clean"
)

// runJobFlow: a cleanPolicy Delete Backup to S3; the controller's
// backup-<name> Job, run as its pod would, leaves the Backup Complete with
// the path and the size of the objects in the bucket under its prefix;
// deleting the Backup makes the controller create clean-<name> while the
// finalizer holds it; that Job, run the same way, empties the prefix (an
// unrelated prefix survives), and the controller then lets the Backup go.
func runJobFlow(t *testing.T, restartAt string) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.srv.put(t, ctx, "cluster-a/snap0/keep.sst", 5)
	f.createBackup(t, "snap", f.srv.provider("cluster-a/snap"), func(b *v1alpha1.Backup) {
		b.Spec.CleanPolicy = v1alpha1.CleanPolicyTypeDelete
	})

	job := f.waitJob(t, "backup-snap")
	if want := []string{"backup", "--namespace=" + ns, "--backupName=snap", "--tikvVersion=v8.5.0"}; !slices.Equal(job.Spec.Template.Spec.Containers[0].Args, want) {
		t.Fatalf("Job backup-snap args %v, want %v", job.Spec.Template.Spec.Containers[0].Args, want)
	}
	if restartAt == restartMidBackup {
		f.restartOperator(t)
	}
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job backup-snap's command exited %d:\n%s", code, out)
	}
	b := f.backup(t, "snap")
	objs := f.srv.list(t, ctx, "cluster-a/snap/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if !condition.IsBackupComplete(b) || b.Status.BackupPath != "s3://backups/cluster-a/snap" ||
		b.Status.BackupSize != dataSize(3)+metaSize || b.Status.BackupSize != sum || len(objs) != 4 {
		t.Fatalf("after the backup Job: status %+v; bucket %v (sum %d), want 3 data files and the backupmeta, %d bytes",
			b.Status, objs, sum, dataSize(3)+metaSize)
	}
	if args := strings.Fields(f.brArgs(t)[0]); !slices.Contains(args, "--storage=s3://backups/cluster-a/snap?force-path-style=true") {
		t.Errorf("br args %v lack the Backup's storage", args)
	}
	if restartAt == restartMidBackup {
		f.assertOneBackupJob(t, job)
	}

	cleanJobs := f.watchCleanJobs(t, "snap")
	if err := f.client.PingcapV1alpha1().Backups(ns).Delete(ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clean := f.waitJob(t, "clean-snap")
	if b := f.backup(t, "snap"); b.DeletionTimestamp == nil || !slices.Contains(b.Finalizers, backup.Finalizer) {
		t.Fatalf("the Backup is not held by its finalizer while clean runs: deletion %v finalizers %v", b.DeletionTimestamp, b.Finalizers)
	}
	if restartAt == restartMidClean {
		f.restartOperator(t)
	}
	if code, out := f.runJob(t, clean); code != 0 {
		t.Fatalf("Job clean-snap's command exited %d:\n%s", code, out)
	}
	if left := f.srv.list(t, ctx, "cluster-a/snap/"); len(left) != 0 {
		t.Errorf("clean left %v", left)
	}
	if kept := f.srv.list(t, ctx, "cluster-a/snap0/"); len(kept) != 1 {
		t.Errorf("clean touched an unrelated prefix: %v", kept)
	}
	f.waitBackup(t, "snap", "the cleaned Backup loses its finalizer and is gone", func(b *v1alpha1.Backup) bool { return b == nil })
	if uids := cleanJobs(); len(uids) != 1 || uids[0] != clean.UID {
		t.Errorf("clean Jobs created %v, want only %s", uids, clean.UID)
	}
}

// watchCleanJobs watches the clean Jobs of Backup name from now on and
// returns a function that stops the watch and lists the UIDs of every clean
// Job it saw, in order.
func (f *jobFixture) watchCleanJobs(t *testing.T, name string) func() []types.UID {
	t.Helper()
	w, err := f.env.Kube.BatchV1().Jobs(f.env.Namespace).Watch(f.env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/component=clean,tidb.pingcap.com/backup=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		uids []types.UID
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mu.Lock()
			if j, ok := ev.Object.(*batchv1.Job); ok && !slices.Contains(uids, j.UID) {
				uids = append(uids, j.UID)
			}
			mu.Unlock()
		}
	}()
	stop := func() []types.UID {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(uids)
	}
	t.Cleanup(func() { stop() })
	return stop
}

// assertOneBackupJob checks the new operator did not recreate the backup Job:
// it is still first (same UID, run 0), the only backup Job of the Backup,
// created once (at most one JobCreated event), and the Backup never got RetryFailed.
func (f *jobFixture) assertOneBackupJob(t *testing.T, first *batchv1.Job) {
	t.Helper()
	ctx, ns := f.env.Ctx, f.env.Namespace
	jobs, err := f.env.Kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: "tidb.pingcap.com/backup=snap,app.kubernetes.io/component=backup"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].UID != first.UID || jobs.Items[0].Annotations[backup.AnnRetryNum] != "0" {
		t.Errorf("backup Jobs after the restart: %d, want only the first (UID %s, retry 0)", len(jobs.Items), first.UID)
	}
	evs, err := f.env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=snap,reason=" + backup.ReasonJobCreated})
	if err != nil {
		t.Fatal(err)
	}
	var created int32
	for _, ev := range evs.Items {
		created += max(ev.Count, 1)
	}
	if created > 1 { // 0 when the stopped operator dropped its queued event
		t.Errorf("%d JobCreated events, want 1: %+v", created, evs.Items)
	}
	if b := f.backup(t, "snap"); condition.GetBackupCondition(&b.Status, v1alpha1.BackupRetryFailed) != nil {
		t.Errorf("the Backup got RetryFailed across the restart: %+v", b.Status.Conditions)
	}
}
