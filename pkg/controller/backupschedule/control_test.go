package backupschedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

func TestFirstBackupAtTheNextCronTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-30*time.Minute)) // created 23:30, hourly
	f.seedSchedule(bs)

	f.deps.FakeClock.SetTime(epoch.Add(-time.Minute)) // 23:59: nothing due yet
	res, err := f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("before the first cron time: writes %v, want none", got)
	}
	if res.RequeueAfter != time.Minute {
		t.Fatalf("RequeueAfter = %v, want 1m (the wake-up at 00:00)", res.RequeueAfter)
	}

	f.deps.FakeClock.SetTime(epoch) // 00:00
	res, err = f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"create backups bs-2026-01-01t00-00-00", "patch backupschedules/status bs"}
	if diff := cmp.Diff(want, f.writes()); diff != "" {
		t.Fatalf("writes (-want +got):\n%s", diff)
	}
	st := f.status()
	if st.LastBackup != "bs-2026-01-01t00-00-00" || st.LastBackupTime == nil || !st.LastBackupTime.Time.Equal(epoch) {
		t.Fatalf("status = %+v, want lastBackup bs-2026-01-01t00-00-00 at %v", st, epoch)
	}
	if res.RequeueAfter != time.Hour {
		t.Fatalf("RequeueAfter = %v, want 1h (01:00)", res.RequeueAfter)
	}
	if ev := f.events(); !hasEvent(ev, "Normal", ReasonSuccessfulCreate, "Backup bs-2026-01-01t00-00-00") {
		t.Fatalf("events %v lack the creation", ev)
	}
}

func TestNothingDueWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-48*time.Hour))
	bs.Spec.MaxBackups = ptr.To[int32](3)
	bs.Status.LastBackup = "bs-2026-01-01t00-00-00"
	bs.Status.LastBackupTime = timePtr(epoch)
	f.seedSchedule(bs)
	f.seedBackup(scheduled(bs, epoch.Add(-time.Hour), v1alpha1.BackupComplete, "100"))
	f.seedBackup(scheduled(bs, epoch, v1alpha1.BackupComplete, "200"))
	f.deps.FakeClock.SetTime(epoch.Add(40 * time.Minute))

	res, err := f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("converged schedule: writes %v, want none", got)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Fatalf("converged schedule: events %v, want none", ev)
	}
	if res.RequeueAfter != 20*time.Minute {
		t.Fatalf("RequeueAfter = %v, want 20m", res.RequeueAfter)
	}
}

func TestOneBackupAtATime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("*/10 * * * *", epoch.Add(-time.Hour))
	bs.Status.LastBackup = "bs-2026-01-01t00-00-00"
	bs.Status.LastBackupTime = timePtr(epoch)
	f.seedSchedule(bs)
	running := scheduled(bs, epoch, v1alpha1.BackupRunning, "")
	f.seedBackup(running)
	f.deps.FakeClock.SetTime(epoch.Add(25 * time.Minute)) // 00:10 and 00:20 passed

	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("last Backup running: writes %v, want none", got)
	}

	for _, phase := range []v1alpha1.BackupConditionType{v1alpha1.BackupFailed, v1alpha1.BackupComplete} {
		f.resetActions()
		done := scheduled(bs, epoch, phase, "1")
		if err := f.deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer().Update(done); err != nil {
			t.Fatal(err)
		}
		if _, err := f.sync(bs); err != nil {
			t.Fatal(err)
		}
		// The latest time passed (00:20), not one per missed time.
		want := []string{"create backups bs-2026-01-01t00-20-00", "patch backupschedules/status bs"}
		if phase == v1alpha1.BackupComplete {
			want = append(want, "delete jobs backup-bs-2026-01-01t00-00-00")
		}
		if diff := cmp.Diff(want, f.writes()); diff != "" {
			t.Fatalf("last Backup %s: writes (-want +got):\n%s", phase, diff)
		}
	}
}

func TestPauseCreatesNothingButCollectsGarbage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-24*time.Hour))
	bs.Spec.Pause = true
	bs.Spec.MaxBackups = ptr.To[int32](1)
	bs.Spec.LogBackupTemplate = bs.Spec.BackupTemplate.DeepCopy()
	bs.Status.LastBackup = "bs-2025-12-31t22-00-00"
	bs.Status.LastBackupTime = timePtr(epoch.Add(-2 * time.Hour))
	f.seedSchedule(bs)
	f.seedBackup(scheduled(bs, epoch.Add(-3*time.Hour), v1alpha1.BackupComplete, "1"))
	f.seedBackup(scheduled(bs, epoch.Add(-2*time.Hour), v1alpha1.BackupComplete, "2"))

	res, err := f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"delete backups bs-2025-12-31t21-00-00"}
	if diff := cmp.Diff(want, f.writes()); diff != "" {
		t.Fatalf("paused: writes (-want +got):\n%s", diff)
	}
	if res.RequeueAfter != 0 {
		t.Fatalf("paused: RequeueAfter = %v, want none (resuming is an update)", res.RequeueAfter)
	}
}

func TestFastForwardAfterLongDowntime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		missed    int
		wantWrite []string
	}{
		// 500 minutes missed: one Backup, for the latest.
		{name: "below the limit", missed: 500,
			wantWrite: []string{"create backups bs-2026-01-01t00-00-00", "patch backupschedules/status bs"}},
		// 2000 minutes missed: none of them is served.
		{name: "beyond the limit", missed: 2000, wantWrite: []string{"patch backupschedules/status bs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			bs := newSchedule("* * * * *", epoch.Add(-48*time.Hour))
			bs.Status.LastBackupTime = timePtr(epoch.Add(-time.Duration(tc.missed) * time.Minute))
			f.seedSchedule(bs)
			f.deps.FakeClock.SetTime(epoch.Add(30 * time.Second))

			res, err := f.sync(bs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWrite, f.writes()); diff != "" {
				t.Fatalf("writes (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != 30*time.Second {
				t.Fatalf("RequeueAfter = %v, want 30s (00:01)", res.RequeueAfter)
			}
			st := f.status()
			events := f.events()
			if tc.missed > MaxMissedSchedules {
				if !st.LastBackupTime.Time.Equal(epoch.Add(30*time.Second)) || st.LastBackup != "" {
					t.Fatalf("status = %+v, want lastBackupTime fast-forwarded to now and no lastBackup", st)
				}
				if !hasEvent(events, "Warning", ReasonFastForwarded) {
					t.Fatalf("events %v lack %s", events, ReasonFastForwarded)
				}
				// The next sync owes nothing until 00:01.
				bs.Status = st
				f.resetActions()
				if _, err := f.sync(bs); err != nil {
					t.Fatal(err)
				}
				if got := f.writes(); len(got) != 0 {
					t.Fatalf("after fast-forward: writes %v, want none", got)
				}
			}
		})
	}
}

func TestInvalidScheduleIsReportedOnceAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("61 * * * *", epoch.Add(-time.Hour))
	f.seedSchedule(bs)
	for range 2 {
		res, err := f.sync(bs)
		if !flow.IsIgnore(err) {
			t.Fatalf("err = %v, want an IgnoreError", err)
		}
		if res.RequeueAfter != 0 {
			t.Fatalf("invalid: RequeueAfter = %v, want none", res.RequeueAfter)
		}
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("invalid: writes %v, want none", got)
	}
	ev := f.events()
	if len(ev) != 1 || !hasEvent(ev, "Warning", ReasonFailedValidation, "spec.schedule") {
		t.Fatalf("events %v, want one FailedValidation naming spec.schedule", ev)
	}
}

func TestCompactionWithoutItsCompanionsIsReportedIdle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-time.Minute))
	bs.Spec.CompactBackupTemplate = &runtime.RawExtension{Raw: []byte(`{"concurrency":4}`)}
	bs.Spec.MinCompactStartTs = "443669038716944385"
	f.seedSchedule(bs)
	for range 2 {
		if _, err := f.sync(bs); err != nil {
			t.Fatal(err)
		}
	}
	ev := f.events()
	want := "spec.compactBackupTemplate is set without spec.logBackupTemplate and spec.compactInterval"
	if !hasEvent(ev, "Warning", ReasonCompactionIdle, want) || hasEvent(ev, ReasonUnsupported) {
		t.Fatalf("events %v, want one CompactionIdle warning naming %q and no Unsupported", ev, want)
	}
	var idle int
	for _, e := range ev {
		if strings.Contains(e, ReasonCompactionIdle) {
			idle++
		}
	}
	if idle != 1 {
		t.Fatalf("CompactionIdle reported %d times in two syncs, want once", idle)
	}
}

func TestAdoptsABackupItCreatedButDidNotRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-30*time.Minute))
	f.seedSchedule(bs)
	// A previous sync created the Backup, then failed to write the status;
	// the cache has not seen the Backup yet.
	if err := f.deps.FakePingcap.Tracker().Add(scheduled(bs, epoch, "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if st := f.status(); st.LastBackup != "bs-2026-01-01t00-00-00" {
		t.Fatalf("lastBackup = %q, want the adopted Backup", st.LastBackup)
	}
	if names := f.backupNames(); len(names) != 1 {
		t.Fatalf("Backups %v, want one", names)
	}
}

func TestStatusWriteKeepsUnownedFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-30*time.Minute))
	bs.Status.LastCompact = "compact-1"
	f.seedSchedule(bs)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if st := f.status(); st.LastCompact != "compact-1" || st.LastBackup == "" {
		t.Fatalf("status = %+v, want lastCompact kept and lastBackup set", st)
	}
}

func TestCreateRefusedByTheAPIServerIsNotRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-30*time.Minute))
	f.seedSchedule(bs)
	f.deps.FakePingcap.PrependReactor("create", "backups", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(v1alpha1.SchemeGroupVersion.WithKind("Backup").GroupKind(), "x",
			field.ErrorList{field.TooLong(field.NewPath("metadata", "name"), "x", 63)})
	})
	_, err := f.sync(bs)
	if !flow.IsIgnore(err) {
		t.Fatalf("err = %v, want an IgnoreError", err)
	}
	if ev := f.events(); !hasEvent(ev, "Warning", ReasonFailedCreate, "bs-2026-01-01t00-00-00") {
		t.Fatalf("events %v lack FailedCreate", ev)
	}
	if st := f.status(); st.LastBackup != "" {
		t.Fatalf("status.lastBackup = %q after a refused create", st.LastBackup)
	}
}
