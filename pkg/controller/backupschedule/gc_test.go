package backupschedule

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestPlanGC(t *testing.T) {
	t.Parallel()
	bs := newSchedule("0 * * * *", epoch.Add(-24*time.Hour))
	h := func(n int) time.Time { return epoch.Add(-time.Duration(n) * time.Hour) }
	backups := []*v1alpha1.Backup{ // scheduled 4h, 3h, 2h, 1h ago and now (running)
		scheduled(bs, h(2), v1alpha1.BackupFailed, ""),
		scheduled(bs, h(4), v1alpha1.BackupComplete, "1"),
		scheduled(bs, h(0), v1alpha1.BackupRunning, ""),
		scheduled(bs, h(1), v1alpha1.BackupComplete, "4"),
		scheduled(bs, h(3), v1alpha1.BackupComplete, "2"),
	}
	names := func(bb []*v1alpha1.Backup) []string {
		var out []string
		for _, b := range bb {
			out = append(out, b.Name[len("bs-"):])
		}
		return out
	}
	for _, tc := range []struct {
		name              string
		r                 retention
		wantDel, wantKeep []string
	}{
		{name: "maxBackups 2 keeps the newest two", r: retention{MaxBackups: 2},
			wantDel:  []string{"2025-12-31t22-00-00", "2025-12-31t21-00-00", "2025-12-31t20-00-00"},
			wantKeep: []string{"2026-01-01t00-00-00", "2025-12-31t23-00-00"}},
		{name: "maxReservedTime 150m", r: retention{Reserved: 150 * time.Minute},
			wantDel:  []string{"2025-12-31t21-00-00", "2025-12-31t20-00-00"},
			wantKeep: []string{"2026-01-01t00-00-00", "2025-12-31t23-00-00", "2025-12-31t22-00-00"}},
		{name: "maxReservedTime wins over maxBackups", r: retention{Reserved: 150 * time.Minute, MaxBackups: 1},
			wantDel:  []string{"2025-12-31t21-00-00", "2025-12-31t20-00-00"},
			wantKeep: []string{"2026-01-01t00-00-00", "2025-12-31t23-00-00", "2025-12-31t22-00-00"}},
		{name: "a running Backup is never deleted", r: retention{Reserved: time.Nanosecond},
			wantDel:  []string{"2025-12-31t23-00-00", "2025-12-31t22-00-00", "2025-12-31t21-00-00", "2025-12-31t20-00-00"},
			wantKeep: []string{"2026-01-01t00-00-00"}},
		{name: "no policy keeps all", r: retention{},
			wantKeep: []string{"2026-01-01t00-00-00", "2025-12-31t23-00-00", "2025-12-31t22-00-00", "2025-12-31t21-00-00", "2025-12-31t20-00-00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := planGC(bs, backups, tc.r, epoch.Add(time.Second))
			if diff := cmp.Diff(tc.wantDel, names(plan.Delete)); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKeep, names(plan.Keep)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
	if ts, ok := truncateUntil(backups[2:]); !ok || ts != 2 {
		t.Errorf("truncateUntil = %d %v, want 2 (the oldest Complete commitTs)", ts, ok)
	}
}

func TestGCSync(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.BackupSchedule)
		want   []string
		// wake is the expected RequeueAfter.
		wake time.Duration
	}{
		{name: "maxBackups", mutate: func(bs *v1alpha1.BackupSchedule) { bs.Spec.MaxBackups = ptr.To[int32](2) },
			want: []string{"delete backups bs-2025-12-31t22-00-00"}, wake: 30 * time.Minute},
		// At 00:30, 100m keeps 23:00 and 00:00, and wakes when 23:00 expires
		// (00:40:01), before the next cron time (01:00).
		{name: "maxReservedTime preferred, wakes at the next expiry", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.MaxBackups = ptr.To[int32](1)
			bs.Spec.MaxReservedTime = ptr.To("100m")
		}, want: []string{"delete backups bs-2025-12-31t22-00-00"}, wake: 10*time.Minute + time.Second},
		{name: "maxReservedTime deletes every expired one", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.MaxReservedTime = ptr.To("75m")
		}, want: []string{"delete backups bs-2025-12-31t23-00-00", "delete backups bs-2025-12-31t22-00-00"},
			wake: 30 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			bs := newSchedule("0 * * * *", epoch.Add(-24*time.Hour))
			tc.mutate(bs)
			bs.Status.LastBackup = "bs-2026-01-01t00-00-00"
			bs.Status.LastBackupTime = timePtr(epoch)
			f.seedSchedule(bs)
			for i := 2; i >= 0; i-- {
				f.seedBackup(scheduled(bs, epoch.Add(-time.Duration(i)*time.Hour), v1alpha1.BackupComplete, "1"))
			}
			// Not the schedule's: another owner, and a manual Backup.
			foreign := scheduled(bs, epoch.Add(-5*time.Hour), v1alpha1.BackupComplete, "1")
			foreign.OwnerReferences[0].UID = "old-schedule"
			f.seedBackup(foreign)
			f.deps.FakeClock.SetTime(epoch.Add(30 * time.Minute))

			res, err := f.sync(bs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.writes()); diff != "" {
				t.Fatalf("writes (-want +got):\n%s", diff)
			}
			if ev := f.events(); !hasEvent(ev, "Normal", ReasonSuccessfulDelete, "bs-2025-12-31t22-00-00") {
				t.Fatalf("events %v lack the deletion", ev)
			}
			if res.RequeueAfter != tc.wake {
				t.Fatalf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.wake)
			}
		})
	}
}

func TestGCDeletingEveryBackupResetsLastBackup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 0 * * *", epoch.Add(-72*time.Hour)) // daily
	bs.Spec.MaxReservedTime = ptr.To("1h")
	bs.Status.LastBackup = "bs-2026-01-01t00-00-00"
	bs.Status.LastBackupTime = timePtr(epoch)
	f.seedSchedule(bs)
	f.seedBackup(scheduled(bs, epoch, v1alpha1.BackupComplete, "1"))
	now := epoch.Add(2 * time.Hour)
	f.deps.FakeClock.SetTime(now)

	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	want := []string{"delete backups bs-2026-01-01t00-00-00", "patch backupschedules/status bs"}
	if diff := cmp.Diff(want, f.writes()); diff != "" {
		t.Fatalf("writes (-want +got):\n%s", diff)
	}
	st := f.status()
	if st.LastBackup != "" || st.LastBackupTime != nil || st.AllBackupCleanTime == nil || !st.AllBackupCleanTime.Time.Equal(now) {
		t.Fatalf("status = %+v, want lastBackup reset and allBackupCleanTime %v", st, now)
	}
	// The next Backup is the next cron time after the clean-up, not at once.
	bs.Status = st
	indexer := f.deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer()
	if err := indexer.Delete(scheduled(bs, epoch, "", "")); err != nil {
		t.Fatal(err)
	}
	f.resetActions()
	res, err := f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("after the clean-up: writes %v, want none", got)
	}
	if res.RequeueAfter != 22*time.Hour {
		t.Fatalf("RequeueAfter = %v, want 22h", res.RequeueAfter)
	}
}

func TestLogBackupCreatedOnceAndTruncatedForward(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newSchedule("0 * * * *", epoch.Add(-24*time.Hour))
	bs.Spec.MaxBackups = ptr.To[int32](2)
	bs.Spec.LogBackupTemplate = bs.Spec.BackupTemplate.DeepCopy()
	bs.Status.LastBackup = "bs-2026-01-01t00-00-00"
	bs.Status.LastBackupTime = timePtr(epoch)
	f.seedSchedule(bs)
	for i, ts := range []string{"300", "200", "100"} { // 00:00, 23:00, 22:00
		f.seedBackup(scheduled(bs, epoch.Add(-time.Duration(i)*time.Hour), v1alpha1.BackupComplete, ts))
	}
	f.deps.FakeClock.SetTime(epoch.Add(time.Minute))

	// First sync: the log backup is created (its truncation waits for the
	// cache to see it); the oldest snapshot goes.
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	want := []string{"create backups log-bs", "delete backups bs-2025-12-31t22-00-00", "patch backupschedules/status bs"}
	if diff := cmp.Diff(want, f.writes()); diff != "" {
		t.Fatalf("first sync: writes (-want +got):\n%s", diff)
	}
	st := f.status()
	if st.LogBackup == nil || *st.LogBackup != "log-bs" {
		t.Fatalf("status.logBackup = %v, want log-bs", st.LogBackup)
	}
	lb, err := f.deps.FakePingcap.PingcapV1alpha1().Backups("ns1").Get(t.Context(), "log-bs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Spec.BackupMode != v1alpha1.BackupModeLog {
		t.Fatalf("log backup mode %q, want log", lb.Spec.BackupMode)
	}

	// Second sync, with the cache caught up: truncate until 200, the
	// oldest kept snapshot; the log backup is not created again.
	bs.Status = st
	indexer := f.deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer()
	if err := indexer.Add(lb); err != nil {
		t.Fatal(err)
	}
	old, _, _ := indexer.GetByKey("ns1/bs-2025-12-31t22-00-00")
	if err := indexer.Delete(old); err != nil {
		t.Fatal(err)
	}
	f.resetActions()
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch backups log-bs"}, f.writes()); diff != "" {
		t.Fatalf("second sync: writes (-want +got):\n%s", diff)
	}
	lb, err = f.deps.FakePingcap.PingcapV1alpha1().Backups("ns1").Get(t.Context(), "log-bs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Spec.LogTruncateUntil != "200" {
		t.Fatalf("logTruncateUntil = %q, want 200", lb.Spec.LogTruncateUntil)
	}

	// Never backwards: a log backup already truncated further is left alone.
	lb.Spec.LogTruncateUntil = "250"
	if err := indexer.Update(lb); err != nil {
		t.Fatal(err)
	}
	f.resetActions()
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("truncated further already: writes %v, want none", got)
	}
}

func TestParseTS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{in: "443669038716944385", want: 443669038716944385, ok: true},
		{in: "1970-01-01 00:00:01", want: 1000 << 18, ok: true},
		{in: "1970-01-01 08:00:01+0800", want: 1000 << 18, ok: true},
		{in: "", ok: false},
		{in: "yesterday", ok: false},
	} {
		got, ok := parseTS(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseTS(%q) = %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
