package tikv

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// newTiKV is TiKV built by New over an Env of the fakes given: PD through
// ctl, pods from pods (both may be nil when unused), events into rec, the
// clock at now, and failover as configured.
func newTiKV(ctl pdapi.Control, pods corelisters.PodLister, rec record.EventRecorder, now time.Time, failover component.FailoverConfig) *Component {
	return New(&component.Env{PD: ctl, Pods: pods, Recorder: rec, Clock: clocktesting.NewFakeClock(now),
		AutoFailover: failover.Enabled, FailoverPeriods: map[string]time.Duration{names.TiKV: failover.Period}})
}

func storesTC(states map[string]string, since time.Time) *v1alpha1.TidbCluster {
	one := int32(1)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{TiKV: &v1alpha1.TiKVSpec{Replicas: 3, MaxFailoverCount: &one}}}
	tc.Status.TiKV.Synced = true
	tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{}
	id := 0
	for pod, state := range states {
		id++
		sid := string(rune('0' + id))
		tc.Status.TiKV.Stores[sid] = v1alpha1.TiKVStore{ID: sid, PodName: pod, State: state, LastTransitionTime: metav1.NewTime(since)}
	}
	return tc
}

func TestTiKVFailoverMarksDownStoresAndRecoversOnRequest(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	tc := storesTC(map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Down", "basic-tikv-2": "Down"}, now.Add(-time.Hour))
	rec := record.NewFakeRecorder(10)
	h := newTiKV(nil, nil, rec, now, component.FailoverConfig{Enabled: true, Period: 5 * time.Minute})
	for i := 0; i < 3; i++ {
		if err := h.Failover(context.Background(), tc); err != nil {
			t.Fatal(err)
		}
	}
	if h.FailoverReplicas(tc) != 1 || tc.Status.TiKV.FailoverUID == "" {
		t.Fatalf("want one failure (maxFailoverCount 1) and a failover UID: %v %q", tc.Status.TiKV.FailureStores, tc.Status.TiKV.FailoverUID)
	}
	for id, s := range tc.Status.TiKV.Stores {
		if s.State == "Down" {
			s.State = "Up"
			tc.Status.TiKV.Stores[id] = s
		}
	}
	if err := h.Failover(context.Background(), tc); err != nil || h.FailoverReplicas(tc) != 1 {
		t.Fatalf("without recoverFailover the failure must stay: %v", tc.Status.TiKV.FailureStores)
	}
	tc.Spec.TiKV.Failover = &v1alpha1.Failover{RecoverByUID: tc.Status.TiKV.FailoverUID}
	if err := h.Failover(context.Background(), tc); err != nil || h.FailoverReplicas(tc) != 0 || tc.Status.TiKV.FailoverUID != "" {
		t.Fatalf("recoverByUID must recover: %v", tc.Status.TiKV.FailureStores)
	}
}

func TestTiKVFailoverIgnoresRecentAndUndesired(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	tc := storesTC(map[string]string{"basic-tikv-0": "Down", "basic-tikv-5": "Down"}, now.Add(-time.Minute))
	h := newTiKV(nil, nil, record.NewFakeRecorder(10), now, component.FailoverConfig{Enabled: true, Period: 5 * time.Minute})
	if err := h.Failover(context.Background(), tc); err != nil || h.FailoverReplicas(tc) != 0 {
		t.Fatalf("a store Down for less than the period, or beyond the desired ordinals, must not fail over: %v", tc.Status.TiKV.FailureStores)
	}
}
