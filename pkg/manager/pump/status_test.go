package pump

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

func stsOf(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}}
}

// TestObserveMembers: the members are the whole registry by node ID, read from the first pump that
// serves it, Ready pods first; when none does they are kept and the error is returned; before the
// StatefulSet exists they are cleared.
func TestObserveMembers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newHookFixture(t, 3)
	f.pumps.SetState("ns", "basic", "basic-pump-2", pumpapi.StateOffline)
	// A pump of another cluster sharing the PD is in the same registry.
	f.pumps.SetPump("ns", "basic", "other-pump-0", pumpapi.FakePump{NodeID: "other-pump-0:8250",
		Host: "other-pump-0.other-pump:8250", State: pumpapi.StateOnline, Stopped: true})
	pod := f.refresh("basic-pump-0")
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if err := f.indexer.Update(pod); err != nil {
		t.Fatal(err)
	}
	if err := f.comp.Observe(ctx, f.tc, stsOf(3)); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	want := []*v1alpha1.PumpNodeStatus{
		{NodeID: "basic-pump-0:8250", Host: "basic-pump-0.basic-pump:8250", State: "online"},
		{NodeID: "basic-pump-1:8250", Host: "basic-pump-1.basic-pump:8250", State: "online"},
		{NodeID: "basic-pump-2:8250", Host: "basic-pump-2.basic-pump:8250", State: "offline"},
		{NodeID: "other-pump-0:8250", Host: "other-pump-0.other-pump:8250", State: "online"},
	}
	if diff := cmp.Diff(want, f.tc.Status.Pump.Members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if calls := f.pumps.Calls(); len(calls) != 1 || calls[0].PodName != "basic-pump-1" {
		t.Errorf("asked %+v, want the first Ready pod only", calls)
	}

	for _, pod := range []string{"basic-pump-0", "basic-pump-1", "basic-pump-2"} {
		f.pumps.SetError("ns", pod, errors.New("down"))
	}
	if err := f.comp.Observe(ctx, f.tc, stsOf(3)); err == nil {
		t.Error("no pump answered, want the error returned to be logged")
	}
	if diff := cmp.Diff(want, f.tc.Status.Pump.Members); diff != "" {
		t.Errorf("members kept (-want +got):\n%s", diff)
	}
	if err := f.comp.Observe(ctx, f.tc, stsOf(0)); err != nil || len(f.tc.Status.Pump.Members) != 4 {
		t.Errorf("scaled to zero: %v, members %v; want them kept and nothing to log", err, f.tc.Status.Pump.Members)
	}
	if err := f.comp.Observe(ctx, f.tc, nil); err != nil || f.tc.Status.Pump.Members != nil {
		t.Errorf("before the StatefulSet: %v, members %v", err, f.tc.Status.Pump.Members)
	}
	noClient := NewWithClient(&component.Env{}, nil)
	f.tc.Status.Pump.Members = want
	if err := noClient.Observe(ctx, f.tc, stsOf(3)); err != nil || len(f.tc.Status.Pump.Members) != 4 {
		t.Errorf("without a client nothing is asked: %v", err)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	c := NewWithClient(&component.Env{}, nil)
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 1}, Pump: &v1alpha1.PumpSpec{Replicas: 1}}}
	if reason := c.Gate(tc); reason == "" {
		t.Error("Pump must wait for PD")
	}
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	if reason := c.Gate(tc); reason != "" {
		t.Errorf("PD available: %q", reason)
	}
	if got := c.Traits().UpgradeBlockers; !cmp.Equal(got, []string{"pd", "tikv", "tiflash"}) {
		t.Errorf("UpgradeBlockers = %v", got)
	}
	if !c.Traits().NoPartition {
		t.Error("Pump rolls with a plain RollingUpdate")
	}
}
