package ticdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

func observedSet(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &replicas}}
}

func (f *fixture) observe(replicas int32) {
	f.t.Helper()
	if err := f.comp.Observe(context.Background(), f.tc, observedSet(replicas)); err != nil {
		f.t.Fatalf("Observe: %v", err)
	}
}

// TestObserveCaptures: every existing pod gets a capture from one captures list; versions are read
// once per capture ID; another cluster's capture is ignored.
func TestObserveCaptures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 1}, 1)
	f.cdc.SetCapture("ns", "basic", "stranger", ticdcapi.FakeCapture{ID: "x", Address: "other-ticdc-0.other-ticdc-peer.ns.svc:8301"})
	f.observe(3)
	s := f.tc.Status.TiCDC
	want := map[string]v1alpha1.TiCDCCapture{
		"basic-ticdc-0": {PodName: "basic-ticdc-0", ID: "capture-0", Version: "v8.5.0", Ready: true},
		"basic-ticdc-1": {PodName: "basic-ticdc-1", ID: "capture-1", Version: "v8.5.0", Ready: true, IsOwner: true},
		"basic-ticdc-2": {PodName: "basic-ticdc-2", ID: "capture-2", Version: "v8.5.0", Ready: true},
	}
	if diff := cmp.Diff(want, s.Captures); diff != "" || !s.Synced {
		t.Fatalf("synced %v, captures (-want +got):\n%s", s.Synced, diff)
	}
	if n := len(f.cdc.CallsOf(ticdcapi.MethodGetCaptures)); n != 1 {
		t.Errorf("captures listed %d times, want once", n)
	}
	if n := len(f.cdc.CallsOf(ticdcapi.MethodGetStatus)); n != 3 {
		t.Errorf("/status asked %d times, want once per new capture", n)
	}

	// A restart gives a capture a new ID: only its version is read again.
	f.cdc.SetCapture("ns", "basic", "basic-ticdc-2", ticdcapi.FakeCapture{ID: "capture-2b", Version: "v8.5.1"})
	f.observe(3)
	if got := f.tc.Status.TiCDC.Captures["basic-ticdc-2"]; got.ID != "capture-2b" || got.Version != "v8.5.1" {
		t.Errorf("restarted capture = %+v", got)
	}
	if n := len(f.cdc.CallsOf(ticdcapi.MethodGetStatus)); n != 4 {
		t.Errorf("/status asked %d times in all, want 4", n)
	}
}

// TestObserveNotReady: a pod whose capture is not listed is not ready, and so is every capture when
// no pod answers; neither fails the sync.
func TestObserveNotReady(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1}, 0)
	f.cdc.RemoveCapture("ns", "basic", "basic-ticdc-1")
	f.observe(2)
	s := f.tc.Status.TiCDC
	if !s.Captures["basic-ticdc-0"].Ready || s.Captures["basic-ticdc-1"].Ready || s.Synced {
		t.Errorf("status = %+v, synced %v", s.Captures, s.Synced)
	}
	if reason, msg := f.comp.NotReady(f.tc); reason != "TiCDCCaptureNotReady" || !strings.Contains(msg, "1 of 2") {
		t.Errorf("NotReady = %q, %q", reason, msg)
	}

	for _, pod := range []string{"basic-ticdc-0", "basic-ticdc-1"} {
		f.cdc.SetError("ns", pod, errors.New("connection refused"))
	}
	f.observe(2)
	s = f.tc.Status.TiCDC
	if len(s.Captures) != 2 || s.Captures["basic-ticdc-0"].Ready || s.Synced {
		t.Errorf("unreachable TiCDC: status = %+v, synced %v", s.Captures, s.Synced)
	}
}

// TestObserveAsksAtMostThreePods: each unreachable pod costs a timeout.
func TestObserveAsksAtMostThreePods(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1, 1, 1, 1}, 0)
	for o := range int32(5) {
		f.cdc.SetError("ns", names.Pod("basic", names.TiCDC, o), errors.New("timeout"))
	}
	f.observe(5)
	if n := len(f.cdc.CallsOf(ticdcapi.MethodGetCaptures)); n != maxListAttempts {
		t.Errorf("asked %d pods, want %d", n, maxListAttempts)
	}
}

// TestObserveWithoutTheCapturesAPI: an old TiCDC is asked pod by pod, as the TiDB Operator does.
func TestObserveWithoutTheCapturesAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1}, 0)
	f.cdc.SetMethodError(ticdcapi.MethodGetCaptures, fmt.Errorf("404: %w", ticdcapi.ErrNotServed))
	f.observe(2)
	s := f.tc.Status.TiCDC
	if !s.Synced || !s.Captures["basic-ticdc-0"].IsOwner || s.Captures["basic-ticdc-1"].ID != "capture-1" {
		t.Errorf("status = %+v, synced %v", s.Captures, s.Synced)
	}
}

// TestObserveOnlyExistingPods: a missing pod has no capture; no StatefulSet clears the captures.
func TestObserveOnlyExistingPods(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1}, 0)
	f.tc.Spec.TiCDC.Replicas = 3
	f.observe(3)
	if s := f.tc.Status.TiCDC; len(s.Captures) != 2 || s.Synced {
		t.Errorf("status = %+v, synced %v; want 2 captures, not synced", s.Captures, s.Synced)
	}
	if err := f.comp.Observe(context.Background(), f.tc, nil); err != nil || f.tc.Status.TiCDC.Captures != nil {
		t.Errorf("without a StatefulSet: %v, %+v", err, f.tc.Status.TiCDC.Captures)
	}
}

// TestPostUpgradePodWaitsForTheCapture: the rollout goes on once the restarted pod's capture is listed.
func TestPostUpgradePodWaitsForTheCapture(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 1}, 0)
	f.cdc.RemoveCapture("ns", "basic", "basic-ticdc-1")
	f.observe(2)
	if _, waiting := flow.AsRequeue(f.comp.PostUpgradePod(context.Background(), f.tc, 1)); !waiting {
		t.Error("the rollout went on before the capture rejoined")
	}
	f.cdc.SetCapture("ns", "basic", "basic-ticdc-1", ticdcapi.FakeCapture{ID: "new", Version: "v8.5.0"})
	f.observe(2)
	if err := f.comp.PostUpgradePod(context.Background(), f.tc, 1); err != nil {
		t.Errorf("PostUpgradePod = %v once the capture is back", err)
	}
}

func TestNotReadyCountsReadyCaptures(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{TiCDC: &v1alpha1.TiCDCSpec{Replicas: 2}}}
	tc.Status.TiCDC.Captures = map[string]v1alpha1.TiCDCCapture{"a": {Ready: true}, "b": {Ready: true}, "c": {}}
	if reason, _ := (&Component{}).NotReady(tc); reason != "" {
		t.Errorf("NotReady = %q with 2 of 2 ready", reason)
	}
	tc.Spec.TiCDC.Replicas = 0
	tc.Status.TiCDC.Captures = nil
	if reason, _ := (&Component{}).NotReady(tc); reason != "" {
		t.Errorf("NotReady = %q with no replica", reason)
	}
}
