//go:build integration

package faults

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller/backupschedule"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// schedulePeriod is the period of the BackupSchedule of `schedule/kill-between-backups`: short, so
// that two scheduled times pass in a scenario on the real clock.
const schedulePeriod = 20 * time.Second

// jobScenarios: a Restore and a BackupSchedule whose operator is killed mid-way.
func jobScenarios() []scenario {
	return []scenario{
		{name: "restore/kill-while-job-runs",
			asserts: "a snapshot Restore from S3 into the cluster; operator cancelled once its Job exists; KWOK completes the Job, the backup-manager's Complete is written: the Restore Complete, one Job (`job-once`)",
			run:     runRestoreKill},
		{name: "schedule/kill-between-backups",
			asserts: "a BackupSchedule `@every 20s`; operator cancelled once its first Backup is Complete; a second Backup follows: scheduled times at least a period apart, one Job per Backup (`job-once`)",
			run:     runScheduleKill},
	}
}

// runRestoreKill creates Restore rt, kills the operator once its Job exists, completes the Job's
// work as the backup-manager would and waits until the Restore is Complete with its only Job.
func runRestoreKill(t *testing.T) {
	s := start(t, scOptions{})
	s.applyBackupRBAC()
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt"}, Spec: v1alpha1.RestoreSpec{
		BR: &v1alpha1.BRConfig{Cluster: "basic"},
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
			Provider: "aws", Bucket: "backups", Prefix: "src", SecretName: "s3-secret"}},
	}}
	if _, err := s.pc.PingcapV1alpha1().Restores(s.env.Namespace).Create(s.env.Ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Restore rt: %v", err)
	}
	s.waitJob("restore-rt", nil)
	s.restartManager()
	s.waitJob("restore-rt", jobComplete)
	s.completeRestore("rt")
	s.waitConverged("the cluster stays converged")
	s.expectJobs("restore-rt")
}

// completeRestore writes what the backup-manager writes during and at the end of its run (Running,
// then Complete with the commit TS), and waits until the Restore reads Complete.
func (s *sc) completeRestore(name string) {
	s.t.Helper()
	rs := s.pc.PingcapV1alpha1().Restores(s.env.Namespace)
	for _, typ := range []v1alpha1.RestoreConditionType{v1alpha1.RestoreRunning, v1alpha1.RestoreComplete} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			r, err := rs.Get(s.env.Ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.Now()
			condition.SetRestoreCondition(&r.Status, v1alpha1.RestoreCondition{Type: typ, Status: corev1.ConditionTrue}, now)
			if typ == v1alpha1.RestoreComplete {
				r.Status.CommitTs, r.Status.TimeCompleted = "450000000000000000", now
			}
			_, err = rs.UpdateStatus(s.env.Ctx, r, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			s.t.Fatalf("write %s of Restore %s: %v", typ, name, err)
		}
	}
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "Restore "+name+" Complete", func(ctx context.Context) (bool, error) {
		r, err := rs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s conditions %+v", r.Status.Phase, r.Status.Conditions)
		return r.Status.Phase == v1alpha1.RestoreComplete && condition.IsRestoreComplete(r) && !condition.IsRestoreFailed(r), nil
	})
}

// runScheduleKill creates a BackupSchedule every schedulePeriod, completes its first Backup, kills
// the operator, completes the second one, pauses the schedule and checks the Backups it made.
func runScheduleKill(t *testing.T) {
	s := start(t, scOptions{})
	s.applyBackupRBAC()
	bs := &v1alpha1.BackupSchedule{ObjectMeta: metav1.ObjectMeta{Name: "every"}, Spec: v1alpha1.BackupScheduleSpec{
		Schedule: "@every 20s",
		BackupTemplate: v1alpha1.BackupSpec{CleanPolicy: v1alpha1.CleanPolicyTypeRetain, BR: &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
				Provider: "aws", Bucket: "backups", Prefix: "every", SecretName: "s3-secret"}}},
	}}
	if _, err := s.pc.PingcapV1alpha1().BackupSchedules(s.env.Namespace).Create(s.env.Ctx, bs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create BackupSchedule: %v", err)
	}
	first := s.nextScheduled(nil)
	s.waitJob("backup-"+first, jobComplete)
	s.completeBackup(first)
	s.restartManager()
	second := s.nextScheduled([]string{first})
	s.waitJob("backup-"+second, jobComplete)
	s.completeBackup(second)
	s.pauseSchedule("every")
	s.waitConverged("the cluster stays converged")
	s.expectScheduled("every")
}

// nextScheduled waits until schedule every has a Backup not in seen and returns its name.
func (s *sc) nextScheduled(seen []string) string {
	s.t.Helper()
	var got string
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "a new scheduled Backup", func(ctx context.Context) (bool, error) {
		names, err := s.scheduledBackups(ctx, "every")
		framework.Observef(ctx, "Backups %v, seen %v", names, seen)
		for _, n := range names {
			if !slices.Contains(seen, n) {
				got = n
				return true, nil
			}
		}
		return false, err
	})
	return got
}

// scheduledBackups lists the names of the Backups schedule name created, sorted.
func (s *sc) scheduledBackups(ctx context.Context, name string) ([]string, error) {
	l, err := s.pc.PingcapV1alpha1().Backups(s.env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: backupschedule.ScheduleLabelKey + "=" + name})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, b := range l.Items {
		names = append(names, b.Name)
	}
	sort.Strings(names)
	return names, nil
}

// pauseSchedule sets spec.pause of schedule name, so that no Backup follows the scenario's end.
func (s *sc) pauseSchedule(name string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		bs, err := s.pc.PingcapV1alpha1().BackupSchedules(s.env.Namespace).Get(s.env.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		bs.Spec.Pause = true
		_, err = s.pc.PingcapV1alpha1().BackupSchedules(s.env.Namespace).Update(s.env.Ctx, bs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("pause BackupSchedule %s: %v", name, err)
	}
}

// expectScheduled fails when two Backups of schedule name are less than schedulePeriod apart (two
// Backups for one scheduled time, or a catch-up burst after the restart), or when a Job is left
// that is not the Job of one of them. (The schedule deletes the Job of a Complete Backup; the checker's `job-once`
// judged every Job when it was created.)
func (s *sc) expectScheduled(name string) {
	s.t.Helper()
	names, err := s.scheduledBackups(s.env.Ctx, name)
	if err != nil {
		s.t.Fatal(err)
	}
	var prev time.Time
	var wantJobs []string
	for _, n := range names {
		at, err := time.ParseInLocation(backupschedule.TimeFormat, n[len(name)+1:], time.UTC)
		if err != nil {
			s.t.Fatalf("Backup %s: no scheduled time in its name: %v", n, err)
		}
		if !prev.IsZero() && at.Sub(prev) < schedulePeriod {
			s.t.Errorf("Backups %v: %s only %s after the one before", names, n, at.Sub(prev))
		}
		prev = at
		wantJobs = append(wantJobs, "backup-"+n)
	}
	if len(names) < 2 {
		s.t.Errorf("Backups %v, want at least 2", names)
	}
	jobs, err := s.env.Kube.BatchV1().Jobs(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if !slices.Contains(wantJobs, j.Name) {
			s.t.Errorf("Job %s is not the Job of a Backup of %v", j.Name, names)
		}
	}
}
