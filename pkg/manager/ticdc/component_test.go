package ticdc

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// TestGate: TiCDC waits for a PD quorum, then for TiKV, and not for a PD or TiKV it does not own.
func TestGate(t *testing.T) {
	t.Parallel()
	healthyPD := map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	upStore := map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: "Up"}}
	cases := []struct {
		name         string
		noPD, noTiKV bool
		pd           map[string]v1alpha1.PDMember
		pdReady      int32
		stores       map[string]v1alpha1.TiKVStore
		tikvReady    int32
		wait         string
	}{
		{name: "PD and TiKV available", pd: healthyPD, pdReady: 1, stores: upStore, tikvReady: 1},
		{name: "no PD member yet", stores: upStore, tikvReady: 1, wait: "PD quorum"},
		{name: "PD pods not Ready", pd: healthyPD, stores: upStore, tikvReady: 1, wait: "PD pods"},
		{name: "no Up store", pd: healthyPD, pdReady: 1, tikvReady: 1, wait: "TiKV stores"},
		{name: "no Ready TiKV pod", pd: healthyPD, pdReady: 1, stores: upStore, wait: "TiKV pods"},
		{name: "neither of its own", noPD: true, noTiKV: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 1},
				TiKV: &v1alpha1.TiKVSpec{Replicas: 1}, TiCDC: &v1alpha1.TiCDCSpec{Replicas: 1}}}
			if c.noPD {
				tc.Spec.PD = nil
			}
			if c.noTiKV {
				tc.Spec.TiKV = nil
			}
			tc.Status.PD.Members = c.pd
			tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: c.pdReady}
			tc.Status.TiKV.Stores = c.stores
			tc.Status.TiKV.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: c.tikvReady}
			got := New(&component.Env{}).Gate(tc)
			if c.wait == "" && got != "" || c.wait != "" && !strings.Contains(got, c.wait) {
				t.Errorf("Gate = %q, want %q", got, c.wait)
			}
		})
	}
}

// TestUpgradeBlockers is spec §6.3: TiCDC restarts after every other component settled.
func TestUpgradeBlockers(t *testing.T) {
	t.Parallel()
	got := New(&component.Env{}).Traits().UpgradeBlockers
	if want := []string{"pd", "tikv", "tiflash", "pump", "tidb"}; !slices.Equal(got, want) {
		t.Errorf("UpgradeBlockers = %v, want %v", got, want)
	}
}

// TestWithoutClient: a component built without HTTP (render) observes and prepares nothing.
func TestWithoutClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []int{1, 5}, 0)
	c := New(&component.Env{Pods: f.comp.pods})
	if err := c.Observe(t.Context(), f.tc, observedSet(2)); err != nil || f.tc.Status.TiCDC.Captures != nil {
		t.Errorf("Observe = %v, %+v", err, f.tc.Status.TiCDC.Captures)
	}
	if err := c.PreUpgradePod(t.Context(), f.tc, 1); err != nil {
		t.Errorf("PreUpgradePod = %v", err)
	}
	if err := c.PostUpgradePod(t.Context(), f.tc, 1); err != nil {
		t.Errorf("PostUpgradePod = %v", err)
	}
}
