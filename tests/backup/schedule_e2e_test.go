//go:build integration

package backup

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller/backupschedule"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// TestScheduleEveryMinuteKeepsTwoBackupsWithTheirData: a BackupSchedule
// "* * * * *" with maxBackups 2 and cleanPolicy Delete, run by the real
// Backup and BackupSchedule controllers whose clock the test moves one
// minute at a time. Each minute's Backup is backed up for real: its
// backup-<name> Job's command line runs the real backup-manager (and the
// stand-in br) against the API server and versitygw. Garbage collection
// deletes the oldest Backups; their clean-<name> Jobs, run the same way,
// empty their prefixes. At the end exactly the newest two Backups are left,
// Complete, with their data under their prefixes; the others' prefixes are
// empty, and nothing else in the bucket was touched.
func TestScheduleEveryMinuteKeepsTwoBackupsWithTheirData(t *testing.T) {
	f := newClusterFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.srv.put(t, ctx, "scheduled-other/keep.sst", 7)
	clk := clocktesting.NewFakeClock(time.Now())
	startClockedOperator(t, f, clk)

	spec := &v1alpha1.BackupSchedule{ObjectMeta: metav1.ObjectMeta{Name: "minutely"}, Spec: v1alpha1.BackupScheduleSpec{
		Schedule: "* * * * *", MaxBackups: ptr.To[int32](2),
		BackupTemplate: v1alpha1.BackupSpec{CleanPolicy: v1alpha1.CleanPolicyTypeDelete,
			BR: &v1alpha1.BRConfig{Cluster: "basic"}, StorageProvider: f.srv.provider("scheduled")},
	}}
	bs, err := f.client.PingcapV1alpha1().BackupSchedules(ns).Create(ctx, spec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 4
	var created []string // in order
	for i := 1; i <= rounds; i++ {
		// The i-th minute boundary after the schedule's creation is due.
		due := bs.CreationTimestamp.Time.UTC().Truncate(time.Minute).Add(time.Duration(i) * time.Minute)
		clk.SetTime(due.Add(time.Second))
		f.poke(t, bs.Name, i)
		name := bs.Name + "-" + due.Format(backupschedule.TimeFormat)
		created = append(created, name)
		f.runScheduledBackup(t, name, due)
		f.runCleanJobs(t, created)
	}

	kept := created[rounds-2:]
	framework.WaitFor(t, ctx, jobTimeout, "only the newest two Backups are left", func(ctx context.Context) (bool, error) {
		f.runCleanJobs(t, created)
		live, err := f.scheduleBackups(ctx, bs.Name)
		framework.Observef(ctx, "live %v, want %v", live, kept)
		return err == nil && slices.Equal(live, kept), err
	})
	for _, name := range created {
		objs := f.srv.list(t, ctx, f.prefixOf(bs, name)+"/")
		wantData := slices.Contains(kept, name)
		if wantData != (len(objs) == 4) || (!wantData && len(objs) != 0) {
			t.Errorf("Backup %s (kept %v): objects under its prefix %v", name, wantData, objs)
		}
	}
	if other := f.srv.list(t, ctx, "scheduled-other/"); len(other) != 1 {
		t.Errorf("an unrelated prefix changed: %v", other)
	}
	for _, name := range kept {
		if b := f.backup(t, name); !condition.IsBackupComplete(b) || b.Status.BackupSize != dataSize(3)+metaSize {
			t.Errorf("kept Backup %s: status %+v", name, b.Status)
		}
	}
	got, err := f.client.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.LastBackup != created[rounds-1] {
		t.Errorf("status.lastBackup %q, want %q", got.Status.LastBackup, created[rounds-1])
	}
}

// poke changes an annotation of the schedule, so that its controller syncs
// now: the controller's own wake-up is a workqueue timer in real time,
// which the moved clock does not shorten.
func (f *jobFixture) poke(t *testing.T, name string, i int) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.kubetidb.io/poke":"%d"}}}`, i)
	if _, err := f.client.PingcapV1alpha1().BackupSchedules(f.env.Namespace).Patch(f.env.Ctx, name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("poking BackupSchedule %s: %v", name, err)
	}
}

// runScheduledBackup waits for the schedule's Backup name and its Job, runs
// the Job's command line, and checks the Backup completed with its data
// under the prefix the schedule gave it.
func (f *jobFixture) runScheduledBackup(t *testing.T, name string, due time.Time) {
	t.Helper()
	job := f.waitJob(t, "backup-"+name)
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job %s's command exited %d:\n%s", job.Name, code, out)
	}
	b := f.backup(t, name)
	prefix := "scheduled/basic-pd." + f.env.Namespace + "-2379-" + due.Format(backupschedule.TimeFormat)
	if !condition.IsBackupComplete(b) || b.Status.BackupPath != "s3://"+bucket+"/"+prefix {
		t.Fatalf("Backup %s after its Job: status %+v, want Complete at %s", name, b.Status, prefix)
	}
	if objs := f.srv.list(t, f.env.Ctx, prefix+"/"); len(objs) != 4 {
		t.Fatalf("Backup %s: objects under %s: %v, want 3 data files and the backupmeta", name, prefix, objs)
	}
}

// runCleanJobs runs, once each, the clean Jobs of the Backups in names that
// are being deleted (garbage-collected by the schedule).
func (f *jobFixture) runCleanJobs(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		b, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Get(f.env.Ctx, name, metav1.GetOptions{})
		if err != nil || b.DeletionTimestamp == nil || f.cleaned[name] {
			continue
		}
		job := f.waitJob(t, "clean-"+name)
		if code, out := f.runJob(t, job); code != 0 {
			t.Fatalf("Job %s's command exited %d:\n%s", job.Name, code, out)
		}
		f.cleaned[name] = true
	}
}

// scheduleBackups lists the names of the schedule's Backups, sorted.
func (f *jobFixture) scheduleBackups(ctx context.Context, schedule string) ([]string, error) {
	list, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: backupschedule.ScheduleLabelKey + "=" + schedule})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range list.Items {
		out = append(out, b.Name)
	}
	sort.Strings(out)
	return out, nil
}

// prefixOf is the bucket prefix of the schedule's Backup name.
func (f *jobFixture) prefixOf(bs *v1alpha1.BackupSchedule, name string) string {
	return "scheduled/basic-pd." + f.env.Namespace + "-2379-" + name[len(bs.Name)+1:]
}
