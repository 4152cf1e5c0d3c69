package store

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var testKind = Kind{
	Component: "tiflash", TiFlash: true,
	Status:      func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiFlash },
	Spec:        func(tc *v1alpha1.TidbCluster) Spec { return Spec{Replicas: tc.Spec.TiFlash.Replicas} },
	NotUpReason: "TiFlashStoreNotUp", Label: "TiFlash",
}

// TestScaleInDeletesTheLiveStoreOfAReusedOrdinal: an ordinal scaled in
// before (its old store Tombstone) and scaled out again has a new live
// store; scaling it in again must take that store through Tombstone, not
// release the pod because of the old one.
func TestScaleInDeletesTheLiveStoreOfAReusedOrdinal(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "db", "ns"
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 2}
	tc.Status.TiFlash = v1alpha1.TiKVStatus{
		Synced: true,
		Stores: map[string]v1alpha1.TiKVStore{
			"2": {ID: "2", PodName: "db-tiflash-0", State: pdapi.StoreStateNameUp},
			"3": {ID: "3", PodName: "db-tiflash-1", State: pdapi.StoreStateNameUp},
			"5": {ID: "5", PodName: "db-tiflash-2", State: pdapi.StoreStateNameUp},
		},
		TombstoneStores: map[string]v1alpha1.TiKVStore{"4": {ID: "4", PodName: "db-tiflash-2", State: pdapi.StoreStateNameTombstone}},
	}
	ctl := pdapi.NewFakeControl()
	l := New(testKind, &component.Env{PD: ctl, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	err := l.PreScaleIn(context.Background(), tc, 2)
	if _, waiting := flow.AsRequeue(err); !waiting {
		t.Fatalf("PreScaleIn = %v, want a wait for store 5 to become Tombstone", err)
	}
	deleted := false
	for _, c := range ctl.ClusterClient("ns", "db").WriteCalls() {
		if c.Method == pdapi.MethodDeleteStore {
			deleted = true
		}
	}
	if !deleted {
		t.Error("the live store 5 of the reused ordinal was not deleted in PD")
	}
}
