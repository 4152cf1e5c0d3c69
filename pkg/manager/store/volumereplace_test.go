package store

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPrepareVolumeReplaceReleasesOnlyAtTombstone walks a store through the
// replacement: an Up store is deleted in PD and waited for, Offline is
// waited for, only Tombstone (or a pod that never had a store and is not
// Ready) releases the data; a store with another ID than the pod's label
// is not touched, and too few Up stores left refuse with a Warning.
func TestPrepareVolumeReplaceReleasesOnlyAtTombstone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		state      string // of store 91 (db-tikv-1); "" = no live store
		tombstone  bool   // a Tombstone store of db-tikv-1 exists
		ready      bool
		podLabel   string
		up         int // Up stores in all
		wantNil    bool
		wantDelete bool
		wantEvent  string
	}{
		{name: "up", state: pdapi.StoreStateNameUp, up: 4, wantDelete: true, wantEvent: "Normal StoreDeleted"},
		{name: "down", state: "Down", up: 3, wantDelete: true, wantEvent: "Normal StoreDeleted"},
		{name: "offline", state: pdapi.StoreStateNameOffline, up: 3},
		{name: "tombstone", tombstone: true, up: 3, wantNil: true},
		{name: "never registered, not ready", up: 3, wantNil: true},
		{name: "no store yet, ready", ready: true, up: 3},
		{name: "label of another store", state: pdapi.StoreStateNameUp, podLabel: "99", up: 4},
		{name: "too few left", state: pdapi.StoreStateNameUp, up: 3, wantEvent: "Warning ReplaceVolumeRefused"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{}
			tc.Name, tc.Namespace = "db", "ns"
			tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 3}
			tc.Status.TiKV = v1alpha1.TiKVStatus{Synced: true, Stores: map[string]v1alpha1.TiKVStore{}}
			names := []string{"db-tikv-0", "db-tikv-2", "db-tikv-3", "db-tikv-4"}
			upLeft := tt.up
			if tt.state == pdapi.StoreStateNameUp {
				upLeft--
			}
			for id, s := range upStores(names[:upLeft]...) {
				tc.Status.TiKV.Stores[id] = s
			}
			if tt.state != "" {
				tc.Status.TiKV.Stores["91"] = v1alpha1.TiKVStore{ID: "91", PodName: "db-tikv-1", State: tt.state}
			}
			if tt.tombstone {
				tc.Status.TiKV.TombstoneStores = map[string]v1alpha1.TiKVStore{"7": {ID: "7", PodName: "db-tikv-1", State: pdapi.StoreStateNameTombstone}}
			}
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace = "db-tikv-1", "ns"
			if tt.podLabel != "" {
				pod.Labels = map[string]string{label.StoreIDLabelKey: tt.podLabel}
			}
			if tt.ready {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			ctl := pdapi.NewFakeControl()
			rec := record.NewFakeRecorder(10)
			l := New(tikvKind, &component.Env{PD: ctl, Recorder: rec, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
			err := l.PrepareVolumeReplace(context.Background(), tc, pod)
			if tt.wantNil != (err == nil) {
				t.Fatalf("PrepareVolumeReplace = %v, want nil: %v", err, tt.wantNil)
			}
			if _, waiting := flow.AsRequeue(err); err != nil && !waiting {
				t.Fatalf("PrepareVolumeReplace = %v, want a wait", err)
			}
			deleted := false
			for _, c := range ctl.ClusterClient("ns", "db").WriteCalls() {
				deleted = deleted || c.Method == pdapi.MethodDeleteStore
			}
			if deleted != tt.wantDelete {
				t.Errorf("store deleted in PD: %v, want %v", deleted, tt.wantDelete)
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if got := strings.Join(events, "\n"); tt.wantEvent != "" && !strings.HasPrefix(got, tt.wantEvent) || tt.wantEvent == "" && got != "" {
				t.Errorf("events %q, want %q", got, tt.wantEvent)
			}
		})
	}
}

func TestSpareVolumeReplicas(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{}
	l := New(tikvKind, &component.Env{PD: pdapi.NewFakeControl(), Recorder: record.NewFakeRecorder(1)})
	if got := l.SpareVolumeReplicas(tc); got != 1 {
		t.Errorf("TiKV spare unset = %d, want 1", got)
	}
	two := int32(2)
	tc.Spec.TiKV.SpareVolReplaceReplicas = &two
	if got := l.SpareVolumeReplicas(tc); got != 2 {
		t.Errorf("TiKV spare = %d, want 2", got)
	}
	if got := New(testKind, &component.Env{PD: pdapi.NewFakeControl()}).SpareVolumeReplicas(tc); got != 0 {
		t.Errorf("TiFlash spare = %d, want 0", got)
	}
}
