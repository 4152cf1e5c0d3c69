package ticdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// prepare runs PreUpgradePod (or PreScaleIn) for ordinal and refreshes the pod cache, as the next
// sync would see it.
func (f *fixture) prepare(ordinal int32, scaleIn bool) error {
	f.t.Helper()
	var err error
	if scaleIn {
		err = f.comp.PreScaleIn(context.Background(), f.tc, ordinal)
	} else {
		err = f.comp.PreUpgradePod(context.Background(), f.tc, ordinal)
	}
	f.refresh()
	return err
}

func mustWait(t *testing.T, err error, want string) {
	t.Helper()
	re, waiting := flow.AsRequeue(err)
	if !waiting {
		t.Fatalf("err = %v, want a wait mentioning %q", err, want)
	}
	if !strings.Contains(re.Reason, want) {
		t.Fatalf("wait %q does not mention %q", re.Reason, want)
	}
}

func hasEvent(events []string, reason string) bool {
	for _, e := range events {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}

// TestDrainWaitsUntilNoTableLeft: the capture is drained through the owner's pod, its pod annotated
// once with the start, and the pod may go only when TiCDC answers 0 tables.
func TestDrainWaitsUntilNoTableLeft(t *testing.T) {
	t.Parallel()
	for _, scaleIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("scaleIn=%v", scaleIn), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, []int{4, 4, 5}, 0)
			mustWait(t, f.prepare(2, scaleIn), "5 table(s) left")
			if got := f.begin("basic-ticdc-2"); got != t0.Format(time.RFC3339) {
				t.Errorf("begin time = %q, want %s", got, t0.Format(time.RFC3339))
			}
			drains := f.cdc.CallsOf(ticdcapi.MethodDrainCapture)
			if len(drains) != 1 || drains[0].CaptureID != "capture-2" || drains[0].PodName != "basic-ticdc-0" {
				t.Errorf("drain calls = %+v, want capture-2 through the owner's pod", drains)
			}
			if ev := f.events(); !hasEvent(ev, ReasonDrainStarted) || len(ev) != 1 {
				t.Errorf("events = %q, want one %s", ev, ReasonDrainStarted)
			}

			f.clock.Step(time.Minute)
			f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 1)
			mustWait(t, f.prepare(2, scaleIn), "1 table(s) left")
			f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 0)
			if err := f.prepare(2, scaleIn); err != nil {
				t.Fatalf("drained capture: %v", err)
			}
			if f.patches() != 1 || f.begin("basic-ticdc-2") != t0.Format(time.RFC3339) {
				t.Errorf("the pod was annotated %d times (begin %q), want once at the start", f.patches(), f.begin("basic-ticdc-2"))
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("events while waiting: %q", ev)
			}
		})
	}
}

// TestOwnerResignsFirst: TiCDC does not drain its owner, so the owner role goes first, then the
// capture is drained.
func TestOwnerResignsFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 3}, 2)
	mustWait(t, f.prepare(2, false), "handing the owner role over")
	if n := len(f.cdc.CallsOf(ticdcapi.MethodDrainCapture)); n != 0 {
		t.Errorf("the owner was drained %d times before resigning", n)
	}
	if r := f.cdc.CallsOf(ticdcapi.MethodResignOwner); len(r) != 1 || r[0].PodName != "basic-ticdc-2" {
		t.Errorf("resign calls = %+v", r)
	}
	if ev := f.events(); !hasEvent(ev, ReasonDrainStarted) || !hasEvent(ev, ReasonOwnerResigned) {
		t.Errorf("events = %q, want %s and %s", ev, ReasonDrainStarted, ReasonOwnerResigned)
	}
	if f.cdc.Captures("ns", "basic")["basic-ticdc-2"].Owner {
		t.Fatal("the fake did not move the owner role")
	}
	mustWait(t, f.prepare(2, false), "3 table(s) left")
	if d := f.cdc.CallsOf(ticdcapi.MethodDrainCapture); len(d) != 1 || d[0].PodName != "basic-ticdc-0" {
		t.Errorf("drain calls = %+v, want one through the new owner basic-ticdc-0", d)
	}
	f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 0)
	if err := f.prepare(2, false); err != nil {
		t.Fatal(err)
	}
}

// TestTimeoutFromTheAnnotatedStart: the wait is bounded from the time on the pod, not from when this
// operator first saw it; past the timeout the pod goes with a Warning event and without asking TiCDC.
func TestTimeoutFromTheAnnotatedStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 5}, 0)
	f.annotate("basic-ticdc-2", t0.Add(-9*time.Minute))
	mustWait(t, f.prepare(2, false), "at most 1m0s more")
	if f.patches() != 0 {
		t.Error("a started wait was annotated again")
	}
	f.clock.Step(time.Minute)
	calls := len(f.cdc.Calls())
	if err := f.prepare(2, false); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
	if len(f.cdc.Calls()) != calls {
		t.Error("TiCDC was asked after the timeout")
	}
	if ev := f.events(); !hasEvent(ev, ReasonDrainTimedOut) {
		t.Errorf("events = %q, want %s", ev, ReasonDrainTimedOut)
	}
}

// TestResumeAfterOperatorRestart: a new operator process finds the begin time on the pod and keeps
// the same deadline.
func TestResumeAfterOperatorRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 7}, 0)
	mustWait(t, f.prepare(1, true), "7 table(s) left")

	f.clock.Step(6 * time.Minute)
	f.comp = f.newComponent() // the operator restarted
	mustWait(t, f.prepare(1, true), "at most 4m0s more")
	if f.patches() != 1 {
		t.Errorf("the restarted operator annotated the pod again (%d patches)", f.patches())
	}
	f.clock.Step(4 * time.Minute)
	if err := f.prepare(1, true); err != nil {
		t.Fatalf("the resumed wait did not end at the first deadline: %v", err)
	}
}

// TestLeftoverBeginTimeStartsANewWait: a begin time older than twice the timeout, or unreadable, is a
// leftover of an undone scale-in or rollout, not a wait to resume.
func TestLeftoverBeginTimeStartsANewWait(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 2}, 0)
	f.annotate("basic-ticdc-1", t0.Add(-25*time.Minute))
	mustWait(t, f.prepare(1, false), "2 table(s) left")
	if got := f.begin("basic-ticdc-1"); got != t0.Format(time.RFC3339) {
		t.Errorf("begin time = %q, want a new wait at %s", got, t0.Format(time.RFC3339))
	}
}

// TestNothingToDrain: a single capture, a pod without a running capture, a missing pod, a zero
// timeout and a TiCDC without the API all let the pod go at once, without annotating it.
func TestNothingToDrain(t *testing.T) {
	t.Parallel()
	cases := map[string]func(f *fixture) int32{
		"single capture": func(f *fixture) int32 {
			f.cdc.RemoveCapture("ns", "basic", "basic-ticdc-1")
			f.cdc.SetTables("ns", "basic", "basic-ticdc-0", 9)
			return 0
		},
		"capture not running": func(f *fixture) int32 { f.cdc.RemoveCapture("ns", "basic", "basic-ticdc-1"); return 1 },
		"no pod":              func(*fixture) int32 { return 5 },
		"zero timeout": func(f *fixture) int32 {
			f.tc.Spec.TiCDC.GracefulShutdownTimeout = &metav1.Duration{}
			return 1
		},
		"TiCDC without the captures API": func(f *fixture) int32 {
			f.cdc.SetMethodError(ticdcapi.MethodGetCaptures, fmt.Errorf("404: %w", ticdcapi.ErrNotServed))
			return 1
		},
		"TiCDC without the drain API": func(f *fixture) int32 {
			f.cdc.SetMethodError(ticdcapi.MethodDrainCapture, fmt.Errorf("404: %w", ticdcapi.ErrNotServed))
			f.cdc.SetMethodError(ticdcapi.MethodIsHealthy, fmt.Errorf("404: %w", ticdcapi.ErrNotServed))
			return 1
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, []int{3, 3}, 0)
			ordinal := setup(f)
			if err := f.prepare(ordinal, false); err != nil {
				t.Fatalf("PreUpgradePod = %v, want nil", err)
			}
			if name != "TiCDC without the drain API" && f.patches() != 0 {
				t.Error("the pod was annotated although there was nothing to wait for")
			}
		})
	}
}

// TestUnreachableTiCDCWaitsAtMostTheTimeout: when no capture answers, the wait starts anyway and ends
// at the timeout.
func TestUnreachableTiCDCWaitsAtMostTheTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 1}, 0)
	down := errors.New("connection refused")
	for _, pod := range []string{"basic-ticdc-0", "basic-ticdc-1", "basic-ticdc-2"} {
		f.cdc.SetError("ns", pod, down)
	}
	mustWait(t, f.prepare(1, true), "cannot list the TiCDC captures")
	if f.begin("basic-ticdc-1") == "" {
		t.Error("the wait did not start")
	}
	f.clock.Step(10 * time.Minute)
	if err := f.prepare(1, true); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
}

// TestWaitsForOwnerAndHealth: no drain while TiCDC has no owner or is unhealthy.
func TestWaitsForOwnerAndHealth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 2}, -1)
	mustWait(t, f.prepare(2, false), "elect an owner")
	f.cdc.SetCapture("ns", "basic", "basic-ticdc-0", ticdcapi.FakeCapture{ID: "capture-0", Version: "v8.5.0", Owner: true})
	f.cdc.SetHealthy("ns", "basic", false)
	mustWait(t, f.prepare(2, false), "to be healthy")
	if n := len(f.cdc.CallsOf(ticdcapi.MethodDrainCapture)); n != 0 {
		t.Errorf("drained %d times while TiCDC had no owner or was unhealthy", n)
	}
	f.cdc.SetHealthy("ns", "basic", true)
	mustWait(t, f.prepare(2, false), "2 table(s) left")
}

// TestUpgradeDrainsOnlyAcrossCompatibleVersions follows the TiDB Operator: the same version always
// drains; another version only from v6.3.0 and below the next-but-one major; unknown versions never.
func TestUpgradeDrainsOnlyAcrossCompatibleVersions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		running, target string
		drain           bool
	}{
		{"v8.5.0", "v8.5.0", true},
		{"v6.1.0", "v6.5.0", false},
		{"v6.3.0", "v6.5.0", true},
		{"v6.5.0", "v7.5.1", true},
		{"v6.5.0", "v8.1.0", false},
		{"v7.5.0", "v7.1.0", true},
		{"v8.5.0-pre", "v8.5.0", true},
		{"v8.5.0", "latest", false},
		{"", "v8.5.0", false},
	}
	for _, c := range cases {
		t.Run(c.running+"→"+c.target, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, []int{1, 2}, 0)
			f.tc.Spec.Version = c.target
			f.cdc.SetCapture("ns", "basic", "basic-ticdc-1", ticdcapi.FakeCapture{ID: "capture-1", Version: c.running, Tables: 2})
			err := f.prepare(1, false)
			if _, waiting := flow.AsRequeue(err); waiting != c.drain || !waiting && err != nil {
				t.Errorf("PreUpgradePod = %v, want a drain: %v", err, c.drain)
			}
		})
	}
	// A scale-in drains whatever the versions.
	f := newFixture(t, []int{1, 2}, 0)
	f.tc.Spec.Version = "latest"
	mustWait(t, f.prepare(1, true), "2 table(s) left")
}

// TestVersionFromStatusWhenTheCaptureIsKnown: the observed version is used, and /status is asked only
// for a capture status does not know.
func TestVersionFromStatusWhenTheCaptureIsKnown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 2}, 0)
	if err := f.comp.Observe(context.Background(), f.tc, observedSet(2)); err != nil {
		t.Fatal(err)
	}
	before := len(f.cdc.CallsOf(ticdcapi.MethodGetStatus))
	mustWait(t, f.prepare(1, false), "2 table(s) left")
	if after := len(f.cdc.CallsOf(ticdcapi.MethodGetStatus)); after != before {
		t.Errorf("/status asked %d times although status knew the version", after-before)
	}
}
