//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// newTestSchedule returns a BR schedule of cluster basic to S3 prefix
// "scheduled" that retains what the Backup controller leaves (cleanPolicy
// Retain: a deleted Backup goes at once, with no clean Job to wait for).
func newTestSchedule(name, schedule string) *v1alpha1.BackupSchedule {
	return &v1alpha1.BackupSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.BackupScheduleSpec{
			Schedule: schedule,
			BackupTemplate: v1alpha1.BackupSpec{
				CleanPolicy: v1alpha1.CleanPolicyTypeRetain,
				BR:          &v1alpha1.BRConfig{Cluster: "basic"},
				StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
					Provider: "ceph", Endpoint: "http://127.0.0.1:9", Bucket: "backups", Prefix: "scheduled", SecretName: "s3-secret"}},
			},
		},
	}
}

// scheduleBackups lists the snapshot Backups the schedule name created.
func scheduleBackups(ctx context.Context, pc versioned.Interface, ns, name string) ([]v1alpha1.Backup, error) {
	list, err := pc.PingcapV1alpha1().Backups(ns).List(ctx, metav1.ListOptions{LabelSelector: "tidb.pingcap.com/backup-schedule=" + name})
	if err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// completeBackup does what the backup-manager does at the end of a
// snapshot backup: status Complete with a commitTs, through the status
// subresource.
func completeBackup(ctx context.Context, pc versioned.Interface, b *v1alpha1.Backup, commitTs uint64) error {
	now := metav1.Now()
	b.Status.Phase = v1alpha1.BackupComplete
	b.Status.CommitTs = fmt.Sprint(commitTs)
	b.Status.TimeCompleted = now
	b.Status.Conditions = append(b.Status.Conditions, v1alpha1.BackupCondition{
		Type: v1alpha1.BackupComplete, Status: corev1.ConditionTrue, LastTransitionTime: now})
	_, err := pc.PingcapV1alpha1().Backups(b.Namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{})
	return err
}

// TestBackupScheduleCatchesUpOnceAfterDowntime: a daily schedule whose last
// Backup was three days ago (as after an operator outage) gets ONE Backup,
// for today's 00:00 UTC, named and prefixed as the TiDB Operator does.
func TestBackupScheduleCatchesUpOnceAfterDowntime(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx, ns := env.Ctx, env.Namespace

	bs, err := pc.PingcapV1alpha1().BackupSchedules(ns).Create(ctx, newTestSchedule("daily", "0 0 * * *"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	threeDaysAgo := time.Now().UTC().Add(-72 * time.Hour)
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"lastBackupTime": metav1.NewTime(threeDaysAgo)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.PingcapV1alpha1().BackupSchedules(ns).Patch(ctx, bs.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	// The latest 00:00 UTC passed (a run exactly at midnight could see the
	// next one; then the name differs and the check below says so).
	due := time.Now().UTC().Truncate(24 * time.Hour)
	wantName := "daily-" + due.Format("2006-01-02t15-04-05")
	framework.WaitFor(t, ctx, 30*time.Second, "the schedule records its Backup", func(ctx context.Context) (bool, error) {
		got, err := pc.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "status %+v", got.Status)
		return got.Status.LastBackup != "", nil
	})
	backups, err := scheduleBackups(ctx, pc, ns, bs.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(backups) != 1 || backups[0].Name != wantName {
		t.Fatalf("Backups %v, want exactly %s", backupNames(backups), wantName)
	}
	b := backups[0]
	wantPrefix := "scheduled/basic-pd." + ns + "-2379-" + due.Format("2006-01-02t15-04-05")
	if b.Spec.S3 == nil || b.Spec.S3.Prefix != wantPrefix {
		t.Errorf("S3 = %+v, want prefix %s", b.Spec.S3, wantPrefix)
	}
	if b.Labels["app.kubernetes.io/name"] != "backup-schedule" || b.Labels["app.kubernetes.io/managed-by"] != "backup-schedule-operator" {
		t.Errorf("labels = %v", b.Labels)
	}
	if ref := metav1.GetControllerOf(&b); ref == nil || ref.UID != bs.UID {
		t.Errorf("owner = %+v, want the schedule", ref)
	}
	got, err := pc.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.LastBackup != wantName || got.Status.LastBackupTime == nil || !got.Status.LastBackupTime.Time.Equal(due) {
		t.Errorf("status = %+v, want lastBackup %s at %v", got.Status, wantName, due)
	}
}

// TestBackupScheduleKeepsMaxBackups: an "@every 1s" schedule with
// maxBackups 2 creates one Backup at a time (the next only once the last is
// Complete, which the test writes as the backup-manager would), and garbage
// collection leaves the newest two.
func TestBackupScheduleKeepsMaxBackups(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx, ns := env.Ctx, env.Namespace

	spec := newTestSchedule("every", "@every 1s")
	spec.Spec.MaxBackups = ptr.To[int32](2)
	bs, err := pc.PingcapV1alpha1().BackupSchedules(ns).Create(ctx, spec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var commitTs uint64
	framework.WaitFor(t, ctx, 45*time.Second, "five Backups created one at a time", func(ctx context.Context) (bool, error) {
		backups, err := scheduleBackups(ctx, pc, ns, bs.Name)
		if err != nil {
			return false, err
		}
		var running []v1alpha1.Backup
		for _, b := range backups {
			seen[b.Name] = true
			if b.Status.Phase != v1alpha1.BackupComplete {
				running = append(running, b)
			}
		}
		if len(running) > 1 {
			return false, fmt.Errorf("%d Backups unfinished at once: %v", len(running), backupNames(running))
		}
		if len(backups) > 3 {
			// Newest two kept, plus at most the one just created before
			// the sync that collects the oldest.
			return false, fmt.Errorf("maxBackups 2: %d Backups live: %v", len(backups), backupNames(backups))
		}
		framework.Observef(ctx, "seen %d, live %v", len(seen), backupNames(backups))
		if len(seen) >= 5 {
			return true, nil
		}
		for i := range running {
			commitTs++
			if err := completeBackup(ctx, pc, &running[i], commitTs); err != nil {
				framework.Observef(ctx, "complete %s: %v", running[i].Name, err)
			}
		}
		return false, nil
	})

	// Pause, let the last one finish: GC still runs and keeps the newest two.
	if _, err := pc.PingcapV1alpha1().BackupSchedules(ns).Patch(ctx, bs.Name, types.MergePatchType,
		[]byte(`{"spec":{"pause":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, ctx, 20*time.Second, "paused: the newest two Backups are left", func(ctx context.Context) (bool, error) {
		backups, err := scheduleBackups(ctx, pc, ns, bs.Name)
		if err != nil {
			return false, err
		}
		for i := range backups {
			seen[backups[i].Name] = true
			if backups[i].Status.Phase != v1alpha1.BackupComplete {
				commitTs++
				if err := completeBackup(ctx, pc, &backups[i], commitTs); err != nil {
					framework.Observef(ctx, "complete %s: %v", backups[i].Name, err)
				}
			}
		}
		all := sortedKeys(seen)
		newest := all[len(all)-2:]
		framework.Observef(ctx, "live %v, newest created %v", backupNames(backups), newest)
		return slices.Equal(backupNames(backups), newest), nil
	})
	got, err := pc.PingcapV1alpha1().BackupSchedules(ns).Get(ctx, bs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := sortedKeys(seen)
	if got.Status.LastBackup != all[len(all)-1] {
		t.Errorf("status.lastBackup = %q, want the newest %q", got.Status.LastBackup, all[len(all)-1])
	}
	// Events are written asynchronously: wait for every creation and deletion.
	framework.WaitFor(t, ctx, 15*time.Second, "an event per Backup created and deleted", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + bs.Name})
		if err != nil {
			return false, err
		}
		var created, deleted int
		for _, e := range events.Items {
			switch {
			case e.Reason == "SuccessfulCreate" && strings.Contains(e.Message, "Backup"):
				created += int(max(e.Count, 1))
			case e.Reason == "SuccessfulDelete" && strings.Contains(e.Message, "Backup"):
				deleted += int(max(e.Count, 1))
			}
		}
		framework.Observef(ctx, "%d creations, %d deletions; want %d and %d", created, deleted, len(all), len(all)-2)
		return created == len(all) && deleted == len(all)-2, nil
	})
}

func backupNames(backups []v1alpha1.Backup) []string {
	out := make([]string, 0, len(backups))
	for _, b := range backups {
		out = append(out, b.Name)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
