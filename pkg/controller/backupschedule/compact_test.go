package backupschedule

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// tso is the TSO of t.
func tso(t time.Time) string {
	return strconv.FormatUint(uint64(t.UnixMilli())<<v1alpha1.TSOPhysicalShift, 10)
}

// newCompactingSchedule is newSchedule with a log backup started at
// logStart (recorded in status), a compaction template and interval 1h.
func newCompactingSchedule(logStart time.Time) *v1alpha1.BackupSchedule {
	bs := newSchedule("@yearly", epoch.Add(-24*time.Hour))
	bs.Spec.LogBackupTemplate = bs.Spec.BackupTemplate.DeepCopy()
	bs.Spec.CompactBackupTemplate = &runtime.RawExtension{Raw: []byte(`{"concurrency":8}`)}
	bs.Spec.CompactInterval = ptr.To("1h")
	bs.Status.LogBackup = ptr.To("log-bs")
	bs.Status.LogBackupStartTs = timePtr(logStart)
	bs.Status.LastBackupTime = timePtr(epoch.Add(-time.Hour)) // no snapshot due
	return bs
}

// seedLogBackup seeds bs's log backup at checkpoint.
func (f *fixture) seedLogBackup(bs *v1alpha1.BackupSchedule, checkpoint time.Time) {
	f.t.Helper()
	lb := newLogBackup(bs, bs.Status.LogBackupStartTs.Time)
	lb.UID = "log-uid"
	lb.Status.LogCheckpointTs = tso(checkpoint)
	f.seedBackup(lb)
}

// seedCompact seeds a CompactBackup of bs named for created, in state,
// ending at end.
func (f *fixture) seedCompact(bs *v1alpha1.BackupSchedule, created, end time.Time, state v1alpha1.CompactState) *v1alpha1.CompactBackup {
	f.t.Helper()
	cb := &v1alpha1.CompactBackup{ObjectMeta: newChildMeta(bs, compactName(bs, created))}
	cb.UID = types.UID(cb.Name + "-uid")
	cb.CreationTimestamp = metav1.NewTime(created)
	cb.Spec.StartTs = created.Add(-time.Hour).UTC().Format(compactTimeFormat)
	cb.Spec.EndTs = end.UTC().Format(compactTimeFormat)
	cb.Status.State = state
	cb.Status.EndTs = tso(end)
	if err := f.deps.InformerFactory.Pingcap().V1alpha1().CompactBackups().Informer().GetIndexer().Add(cb); err != nil {
		f.t.Fatal(err)
	}
	if err := f.deps.FakePingcap.Tracker().Add(cb.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
	return cb
}

// compacts lists the CompactBackups in the fake clientset.
func (f *fixture) compacts() []v1alpha1.CompactBackup {
	f.t.Helper()
	list, err := f.deps.FakePingcap.PingcapV1alpha1().CompactBackups("ns1").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

func TestCompactWindow(t *testing.T) {
	t.Parallel()
	start := epoch.Add(-10 * time.Hour)
	cases := []struct {
		name            string
		progress, last  time.Duration // from start; 0: unset
		minStart        string
		checkpoint, now time.Duration // from start
		wantStart       time.Duration
		wantEnd         time.Duration
		wantSkip        bool
		wantWake        time.Duration // 0: none
	}{
		{name: "catching up covers three intervals", checkpoint: 10 * time.Hour, now: 10 * time.Hour, wantEnd: 3 * time.Hour},
		{name: "near the checkpoint ends there", progress: 9 * time.Hour, checkpoint: 10 * time.Hour, now: 10 * time.Hour,
			wantStart: 9 * time.Hour, wantEnd: 10 * time.Hour},
		{name: "log started less than an interval ago", checkpoint: 30 * time.Minute, now: 30 * time.Minute, wantSkip: true},
		{name: "checkpoint not past progress", progress: 5 * time.Hour, checkpoint: 5 * time.Hour, now: 6 * time.Hour, wantSkip: true},
		{name: "last created less than an interval ago", progress: 3 * time.Hour, last: 9*time.Hour + 30*time.Minute,
			checkpoint: 10 * time.Hour, now: 10 * time.Hour, wantSkip: true, wantWake: 10*time.Hour + 30*time.Minute},
		{name: "minCompactStartTs later than the log start", minStart: tso(start.Add(8 * time.Hour)), checkpoint: 10 * time.Hour,
			now: 10 * time.Hour, wantStart: 8 * time.Hour, wantEnd: 10 * time.Hour},
		{name: "minCompactStartTs as a datetime, earlier: ignored", minStart: "2020-01-01 00:00:00", checkpoint: 2 * time.Hour,
			now: 2 * time.Hour, wantEnd: 2 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := &v1alpha1.BackupScheduleStatus{LogBackupStartTs: timePtr(start)}
			if tc.progress != 0 {
				st.LastCompactProgress = timePtr(start.Add(tc.progress))
			}
			if tc.last != 0 {
				st.LastCompactExecutionTs = timePtr(start.Add(tc.last))
			}
			r := compactWindow(st, tc.minStart, start.Add(tc.checkpoint), time.Hour, start.Add(tc.now))
			if (r.Skip != "") != tc.wantSkip {
				t.Fatalf("skip %q, want skip %v", r.Skip, tc.wantSkip)
			}
			if tc.wantSkip {
				if wantWake := start.Add(tc.wantWake); (tc.wantWake == 0) != r.Wake.IsZero() || (tc.wantWake != 0 && !r.Wake.Equal(wantWake)) {
					t.Fatalf("wake %v, want %v", r.Wake, tc.wantWake)
				}
				return
			}
			if !r.Start.Equal(start.Add(tc.wantStart)) || !r.End.Equal(start.Add(tc.wantEnd)) {
				t.Fatalf("range [%v, %v], want [+%v, +%v]", r.Start, r.End, tc.wantStart, tc.wantEnd)
			}
		})
	}
}

func TestCreatesTheFirstCompactBackupFromTheTemplate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logStart := epoch.Add(-5 * time.Hour)
	bs := newCompactingSchedule(logStart)
	bs.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	f.seedSchedule(bs)
	f.seedLogBackup(bs, epoch.Add(-time.Minute))
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	cbs := f.compacts()
	if len(cbs) != 1 {
		t.Fatalf("CompactBackups %d, want 1", len(cbs))
	}
	cb := cbs[0]
	ref := metav1.GetControllerOf(&cb)
	if cb.Name != "compact-bs-2026-01-01t00-00-00" || ref == nil || ref.UID != bs.UID || cb.Labels[ScheduleLabelKey] != "bs" {
		t.Errorf("meta %+v, want compact-bs-<now>, labelled and controlled by the schedule", cb.ObjectMeta)
	}
	if cb.Spec.StartTs != "2025-12-31 19:00:00" || cb.Spec.EndTs != "2025-12-31 22:00:00" || cb.Spec.Concurrency != 8 ||
		cb.Spec.MaxRetryTimes != v1alpha1.DefaultCompactMaxRetryTimes {
		t.Errorf("spec %+v, want the log start + 3 intervals, concurrency 8, maxRetryTimes defaulted", cb.Spec)
	}
	if cb.Spec.BR == nil || cb.Spec.BR.Cluster != "basic" || cb.Spec.BR.ClusterNamespace != "ns1" ||
		cb.Spec.S3 == nil || cb.Spec.S3.Prefix != "daily/basic-pd.ns1-2379-log-2025-12-31t19-00-00" ||
		len(cb.Spec.ImagePullSecrets) != 1 {
		t.Errorf("spec %+v, want the log backup's cluster and storage folder and the schedule's pull secrets", cb.Spec)
	}
	st := f.status()
	if st.LastCompact != cb.Name || st.LastCompactExecutionTs == nil || !st.LastCompactExecutionTs.Equal(&metav1.Time{Time: epoch}) {
		t.Errorf("status %+v, want lastCompact and lastCompactExecutionTs of the new CompactBackup", st)
	}

	// It has not finished: a second sync creates nothing.
	bs.Status = st
	f.deps.FakeClock.Step(2 * time.Hour)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.compacts()); n != 1 {
		t.Fatalf("CompactBackups %d while the first runs, want 1", n)
	}
}

func TestCompleteCompactionMovesProgressAndTheNextWaitsAnInterval(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logStart := epoch.Add(-5 * time.Hour)
	bs := newCompactingSchedule(logStart)
	prev := f.seedCompact(bs, epoch.Add(-30*time.Minute), epoch.Add(-2*time.Hour), v1alpha1.CompactComplete)
	bs.Status.LastCompact = prev.Name
	bs.Status.LastCompactExecutionTs = timePtr(epoch.Add(-30 * time.Minute))
	f.seedSchedule(bs)
	f.seedLogBackup(bs, epoch)
	res, err := f.sync(bs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.compacts()); n != 1 {
		t.Fatalf("CompactBackups %d, want none created within the interval", n)
	}
	if st := f.status(); st.LastCompactProgress == nil || !st.LastCompactProgress.Time.Equal(epoch.Add(-2*time.Hour)) {
		t.Fatalf("lastCompactProgress %v, want the Complete one's endTs", st.LastCompactProgress)
	}
	if res.RequeueAfter != 30*time.Minute {
		t.Fatalf("RequeueAfter %v, want the 30m left of the interval", res.RequeueAfter)
	}
	bs.Status = f.status()
	f.deps.FakeClock.Step(30 * time.Minute)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	cbs := f.compacts()
	if len(cbs) != 2 {
		t.Fatalf("CompactBackups %d after the interval, want 2", len(cbs))
	}
	next := cbs[1]
	if next.Name == prev.Name {
		next = cbs[0]
	}
	if next.Spec.StartTs != "2025-12-31 22:00:00" || next.Spec.EndTs != "2026-01-01 00:00:00" {
		t.Fatalf("next range [%s, %s], want from the progress to the checkpoint", next.Spec.StartTs, next.Spec.EndTs)
	}
}

func TestPausedScheduleCompactsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newCompactingSchedule(epoch.Add(-5 * time.Hour))
	bs.Spec.Pause = true
	f.seedSchedule(bs)
	f.seedLogBackup(bs, epoch)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.compacts()); n != 0 {
		t.Fatalf("a paused schedule created %d CompactBackups", n)
	}
}

func TestCompactionGC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		set       func(*v1alpha1.BackupSchedule)
		lastState v1alpha1.CompactState
		wantLeft  int
		wantLast  string
	}{
		{name: "maxBackups keeps the newest two", set: func(bs *v1alpha1.BackupSchedule) { bs.Spec.MaxBackups = ptr.To[int32](2) },
			lastState: v1alpha1.CompactComplete, wantLeft: 2, wantLast: "compact-bs-2025-12-31t23-00-00"},
		{name: "maxReservedTime deletes the leading expired finished run", lastState: v1alpha1.CompactRunning,
			set:      func(bs *v1alpha1.BackupSchedule) { bs.Spec.MaxReservedTime = ptr.To("150m") },
			wantLeft: 2, wantLast: "compact-bs-2025-12-31t23-00-00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			bs := newCompactingSchedule(epoch.Add(-10 * time.Hour))
			tc.set(bs)
			for i := 3; i >= 1; i-- {
				state := v1alpha1.CompactComplete
				if i == 1 {
					state = tc.lastState
				}
				f.seedCompact(bs, epoch.Add(-time.Duration(i)*time.Hour), epoch.Add(-time.Duration(i)*time.Hour), state)
			}
			bs.Status.LastCompact = "compact-bs-2025-12-31t23-00-00"
			bs.Status.LastCompactExecutionTs = timePtr(epoch.Add(-30 * time.Minute)) // none due: only GC acts
			f.seedSchedule(bs)
			f.seedLogBackup(bs, epoch.Add(-59*time.Minute))
			if _, err := f.sync(bs); err != nil {
				t.Fatal(err)
			}
			left := f.compacts()
			if len(left) != tc.wantLeft || hasCompact(left, "compact-bs-2025-12-31t21-00-00") {
				t.Fatalf("left %d CompactBackups, want %d without the oldest", len(left), tc.wantLeft)
			}
			if ev := f.events(); !hasEvent(ev, "Normal", ReasonSuccessfulDelete, "CompactBackup ns1/compact-bs-2025-12-31t21-00-00") {
				t.Fatalf("events %v lack the deletion", ev)
			}
			if st := f.status(); st.LastCompact != tc.wantLast {
				t.Fatalf("lastCompact %q, want %q", st.LastCompact, tc.wantLast)
			}
		})
	}
}

func TestCompactionGCOfEveryOneResetsLastCompact(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newCompactingSchedule(epoch.Add(-10 * time.Hour))
	bs.Spec.MaxReservedTime = ptr.To("30m")
	bs.Spec.Pause = true // GC still runs
	cb := f.seedCompact(bs, epoch.Add(-time.Hour), epoch.Add(-time.Hour), v1alpha1.CompactFailed)
	bs.Status.LastCompact = cb.Name
	f.seedSchedule(bs)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if left := f.compacts(); len(left) != 0 {
		t.Fatalf("left %d CompactBackups, want none", len(left))
	}
	if st := f.status(); st.LastCompact != "" {
		t.Fatalf("lastCompact %q after deleting every CompactBackup", st.LastCompact)
	}
}

func TestInvalidCompactionFieldsWriteNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, field string
		set         func(*v1alpha1.BackupSchedule)
	}{
		{"concurrency 0", "spec.compactBackupTemplate.concurrency", func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.CompactBackupTemplate = &runtime.RawExtension{Raw: []byte(`{"concurrency":0}`)}
		}},
		{"not an object", "spec.compactBackupTemplate", func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.CompactBackupTemplate = &runtime.RawExtension{Raw: []byte(`{"concurrency":"many"}`)}
		}},
		{"minCompactStartTs", "spec.minCompactStartTs", func(bs *v1alpha1.BackupSchedule) { bs.Spec.MinCompactStartTs = "yesterday" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			bs := newCompactingSchedule(epoch.Add(-5 * time.Hour))
			tc.set(bs)
			f.seedSchedule(bs)
			f.seedLogBackup(bs, epoch)
			f.resetActions()
			if _, err := f.sync(bs); err == nil {
				t.Fatal("an invalid compaction synced without error")
			}
			if w := f.writes(); len(w) != 0 {
				t.Fatalf("writes %v, want none", w)
			}
			if ev := f.events(); !hasEvent(ev, "Warning", ReasonFailedValidation, tc.field) {
				t.Fatalf("events %v, want FailedValidation naming %s", ev, tc.field)
			}
		})
	}
}

func TestTruncationWaitsForCompactionProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newCompactingSchedule(epoch.Add(-10 * time.Hour))
	bs.Spec.MaxBackups = ptr.To[int32](5)
	bs.Spec.Pause = true
	f.seedBackup(scheduled(bs, epoch.Add(-2*time.Hour), v1alpha1.BackupComplete, tso(epoch.Add(-2*time.Hour))))
	f.seedSchedule(bs)
	f.seedLogBackup(bs, epoch)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	for _, w := range f.writes() {
		if w == "patch backups log-bs" {
			t.Fatalf("truncated before any compaction completed: %v", f.writes())
		}
	}
	bs.Status.LastCompactProgress = timePtr(epoch.Add(-3 * time.Hour))
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	lb, err := f.deps.FakePingcap.PingcapV1alpha1().Backups("ns1").Get(context.Background(), "log-bs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := tso(epoch.Add(-3 * time.Hour)); lb.Spec.LogTruncateUntil != want {
		t.Fatalf("logTruncateUntil %q, want the compaction progress %s (before the oldest snapshot)", lb.Spec.LogTruncateUntil, want)
	}
}

func hasCompact(cbs []v1alpha1.CompactBackup, name string) bool {
	for _, cb := range cbs {
		if cb.Name == name {
			return true
		}
	}
	return false
}

func TestStaleCachedStatusCreatesNoSecondCompaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bs := newCompactingSchedule(epoch.Add(-5 * time.Hour))
	f.seedLogBackup(bs, epoch)
	live := bs.DeepCopy()
	// The API server has the status of the sync that created the last
	// CompactBackup; the cache (bs) has not seen it yet.
	live.Status.LastCompact = "compact-bs-2025-12-31t23-59-59"
	live.Status.LastCompactExecutionTs = timePtr(epoch.Add(-time.Second))
	f.seedSchedule(live)
	if _, err := f.sync(bs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.compacts()); n != 0 {
		t.Fatalf("created %d CompactBackups from a stale status, want none", n)
	}
}
