package tidb

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TiDB waits for TiKV (an Up store and a Ready pod), not in recovery mode,
// and not at all for a TiKV it does not own.
func TestGate(t *testing.T) {
	t.Parallel()
	upStore := map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: "Up"}}
	cases := []struct {
		name     string
		noTiKV   bool
		recovery bool
		ready    int32
		stores   map[string]v1alpha1.TiKVStore
		peers    map[string]v1alpha1.TiKVStore
		wait     string
	}{
		{name: "TiKV available", ready: 1, stores: upStore},
		{name: "TiKV available through a peer store", ready: 1, peers: upStore},
		{name: "no Ready TiKV pod", stores: upStore, wait: "TiKV pods"},
		{name: "no Up store", ready: 3, stores: map[string]v1alpha1.TiKVStore{"1": {State: "Offline"}}, wait: "TiKV stores"},
		{name: "no TiKV of its own", noTiKV: true},
		{name: "recovery mode blocks TiDB", recovery: true, ready: 1, stores: upStore, wait: "recovery mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := observedCluster()
			if c.noTiKV {
				tc.Spec.TiKV = nil
			}
			tc.Spec.RecoveryMode = c.recovery
			tc.Status.TiKV.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: c.ready}
			tc.Status.TiKV.Stores, tc.Status.TiKV.PeerStores = c.stores, c.peers
			got := (&Component{}).Gate(tc)
			if c.wait == "" && got != "" || c.wait != "" && !strings.Contains(got, c.wait) {
				t.Errorf("Gate = %q, want %q", got, c.wait)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	healthy := map[string]v1alpha1.TiDBMember{"basic-tidb-0": {Name: "basic-tidb-0", Health: true}}
	unhealthy := map[string]v1alpha1.TiDBMember{"basic-tidb-0": {Name: "basic-tidb-0"}}
	cases := []struct {
		name    string
		ready   int32
		members map[string]v1alpha1.TiDBMember
		want    bool
	}{
		{"healthy and Ready", 1, healthy, true},
		{"healthy, not Ready", 0, healthy, false},
		{"Ready, not healthy", 1, unhealthy, false},
	}
	for _, c := range cases {
		tc := observedCluster()
		tc.Status.TiDB.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: c.ready}
		tc.Status.TiDB.Members = c.members
		if got, reason := Available(tc); got != c.want || got == (reason != "") {
			t.Errorf("%s: Available = %v, %q; want %v", c.name, got, reason, c.want)
		}
	}
}
