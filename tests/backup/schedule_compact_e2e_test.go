//go:build integration

package backup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller/backupschedule"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// compactingScheduleYAML is a BackupSchedule with log compaction as a TiDB
// Operator v1.6 user writes it (endpoint filled in; every storage the same
// S3 bucket).
const compactingScheduleYAML = `apiVersion: pingcap.com/v1alpha1
kind: BackupSchedule
metadata:
  name: compacting
spec:
  schedule: "@yearly"
  maxBackups: 2
  compactInterval: "1m"
  backupTemplate:
    br: {cluster: basic}
    s3: {provider: minio, secretName: s3-secret, region: us-east-1, bucket: backups, prefix: snaps, endpoint: %[1]s, forcePathStyle: true}
  logBackupTemplate:
    br: {cluster: basic}
    s3: {provider: minio, secretName: s3-secret, region: us-east-1, bucket: backups, prefix: logs, endpoint: %[1]s, forcePathStyle: true}
  compactBackupTemplate:
    concurrency: 2
    maxRetryTimes: 1
    s3: {provider: minio, secretName: s3-secret, region: us-east-1, bucket: backups, prefix: logs, endpoint: %[1]s, forcePathStyle: true}
`

// TestScheduleCompactsItsLogBackupAndKeepsTwoCompactions: a BackupSchedule
// applied as v1.6 YAML, with a log backup, a compactBackupTemplate (its own
// S3 storage, as v1.6 users write it), compactInterval 1m and maxBackups 2, run by the real
// BackupSchedule and CompactBackup controllers whose clock the test moves.
// Each minute the test advances the log backup's checkpoint (standing in
// for the checkpoint tracker); the schedule then creates one CompactBackup
// compact-<bs>-<now> of the log backup's folder, whose Job, run with the
// stand-in br and tikv-ctl against versitygw, completes it. Garbage
// collection deletes the oldest of three, and the schedule's status names
// the last compaction and its progress.
func TestScheduleCompactsItsLogBackupAndKeepsTwoCompactions(t *testing.T) {
	f := newClusterFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := clocktesting.NewFakeClock(t0)
	startClockedOperator(t, f, clk)

	framework.ApplyYAML(t, ctx, fmt.Sprintf(compactingScheduleYAML, f.srv.endpoint), ns)
	bs := &v1alpha1.BackupSchedule{ObjectMeta: metav1.ObjectMeta{Name: "compacting"}}
	logName := "log-" + bs.Name
	framework.WaitFor(t, ctx, jobTimeout, "the log backup is recorded with its start", func(ctx context.Context) (bool, error) {
		got, err := f.client.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
		return err == nil && got.Status.LogBackup != nil && *got.Status.LogBackup == logName &&
			got.Status.LogBackupStartTs != nil && got.Status.LogBackupStartTs.Equal(&metav1.Time{Time: t0}), err
	})
	folder := "logs/basic-pd." + ns + "-2379-log-" + t0.Format(backupschedule.TimeFormat)
	f.putLogBackup(t, folder)

	var created []string
	for i := 1; i <= 3; i++ {
		now := t0.Add(time.Duration(i+1) * time.Minute)
		clk.SetTime(now)
		f.setCheckpoint(t, logName, now) // wakes the schedule (its log backup changed)
		name := "compact-" + bs.Name + "-" + now.Format(backupschedule.TimeFormat)
		created = append(created, name)
		job := f.waitJob(t, name)
		cb := f.compactBackup(t, name)
		// The stand-in's compactions reach only their start (+2 logical), so
		// each starts at the log start and covers at most 3 intervals.
		end := now
		if limit := t0.Add(3 * time.Minute); limit.Before(end) {
			end = limit
		}
		if want := folder; cb.Spec.S3 == nil || cb.Spec.S3.Prefix != want || cb.Spec.BR == nil || cb.Spec.BR.Cluster != "basic" ||
			cb.Spec.EndTs != end.Format("2006-01-02 15:04:05") || cb.Spec.Concurrency != 2 {
			t.Fatalf("CompactBackup %s: spec %+v, want the log folder %s, cluster basic, endTs at the checkpoint", name, cb.Spec, want)
		}
		if code, out := f.runJob(t, job); code != 0 {
			t.Fatalf("Job %s's command exited %d:\n%s", job.Name, code, out)
		}
		f.waitCompact(t, name, "Complete", func(cb *v1alpha1.CompactBackup) bool {
			return cb != nil && cb.Status.State == v1alpha1.CompactComplete
		})
	}

	kept := created[1:]
	framework.WaitFor(t, ctx, jobTimeout, "only the newest two CompactBackups are left", func(ctx context.Context) (bool, error) {
		list, err := f.client.PingcapV1alpha1().CompactBackups(ns).List(ctx, metav1.ListOptions{
			LabelSelector: backupschedule.ScheduleLabelKey + "=" + bs.Name})
		if err != nil {
			return false, err
		}
		var live []string
		for _, cb := range list.Items {
			live = append(live, cb.Name)
		}
		slices.Sort(live)
		framework.Observef(ctx, "live %v, want %v", live, kept)
		return slices.Equal(live, kept), nil
	})
	framework.WaitFor(t, ctx, jobTimeout, "the status names the last compaction and its progress", func(ctx context.Context) (bool, error) {
		got, err := f.client.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := got.Status
		framework.Observef(ctx, "status %+v", st)
		return st.LastCompact == created[2] && st.LastCompactExecutionTs != nil &&
			st.LastCompactExecutionTs.Equal(&metav1.Time{Time: t0.Add(4 * time.Minute)}) &&
			st.LastCompactProgress != nil && !st.LastCompactProgress.Before(st.LogBackupStartTs), nil
	})
	evs, err := f.env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + bs.Name})
	if err != nil {
		t.Fatal(err)
	}
	var deleted bool
	for _, ev := range evs.Items {
		deleted = deleted || (ev.Reason == backupschedule.ReasonSuccessfulDelete && strings.Contains(ev.Message, created[0]))
	}
	if !deleted {
		t.Errorf("no SuccessfulDelete event for %s", created[0])
	}
}

// setCheckpoint sets Backup name's status.logCheckpointTs to the TSO of at.
func (f *jobFixture) setCheckpoint(t *testing.T, name string, at time.Time) {
	t.Helper()
	ts := strconv.FormatUint(uint64(at.UnixMilli())<<v1alpha1.TSOPhysicalShift, 10)
	patch := fmt.Sprintf(`{"status":{"logCheckpointTs":%q}}`, ts)
	if _, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Patch(f.env.Ctx, name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("set the checkpoint of Backup %s: %v", name, err)
	}
}
