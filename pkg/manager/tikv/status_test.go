package tikv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var (
	before = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	now    = metav1.NewTime(before.Add(time.Hour))
	beat   = before.Add(30 * time.Minute)
)

const (
	ownAddr0    = "basic-tikv-0.basic-tikv-peer.ns.svc:20160"
	ownAddr1    = "basic-tikv-1.basic-tikv-peer.ns.svc.cluster.local:20160"
	peerAddr    = "other-tikv-0.other-tikv-peer.ns.svc:20160"
	tiflashAddr = "basic-tiflash-0.basic-tiflash-peer.ns.svc:3930"
	lookalike   = "basic-tikv-0.basic-tikv-peer.elsewhere.svc:20160"
)

func pdStore(id uint64, addr, state string, leaders int, labels ...*pdapi.StoreLabel) *pdapi.StoreInfo {
	s := &pdapi.StoreInfo{
		Store:  &pdapi.MetaStore{ID: id, Address: addr, StateName: state, Labels: labels},
		Status: &pdapi.StoreStatus{LeaderCount: leaders, LastHeartbeatTS: &beat},
	}
	if state == pdapi.StoreStateNameTombstone {
		s.Store.State = pdapi.StoreStateTombstone
	}
	return s
}

func statusStore(id, pod, ip, state string, leaders int32, transition metav1.Time) v1alpha1.TiKVStore {
	return v1alpha1.TiKVStore{ID: id, PodName: pod, IP: ip, State: state, LeaderCount: leaders,
		LastTransitionTime: transition}
}

func observedCluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			PD:   &v1alpha1.PDSpec{Replicas: 3},
			TiKV: &v1alpha1.TiKVSpec{Replicas: 3},
		},
	}
}

func TestObserveStores(t *testing.T) {
	t.Parallel()
	up, down := pdapi.StoreStateNameUp, pdapi.StoreStateNameDown
	cases := []struct {
		name    string
		prev    v1alpha1.TiKVStatus
		stores  []*pdapi.StoreInfo
		fail    map[pdapi.Method]error
		noSTS   bool
		want    v1alpha1.TiKVStatus
		wantErr bool

		// noTombstoneCall: PD's tombstone list must not be asked for.
		noTombstoneCall bool
	}{{
		name: "own, peer, TiFlash and tombstone stores are told apart",
		prev: v1alpha1.TiKVStatus{Stores: map[string]v1alpha1.TiKVStore{"6": {ID: "6", State: up}}},
		stores: []*pdapi.StoreInfo{
			pdStore(1, ownAddr0, up, 7),
			pdStore(2, ownAddr1, down, 0),
			pdStore(3, peerAddr, up, 4),
			pdStore(4, tiflashAddr, up, 0, &pdapi.StoreLabel{Key: "engine", Value: "tiflash"}),
			pdStore(5, lookalike, up, 1),
			pdStore(6, "basic-tikv-2.basic-tikv-peer.ns.svc:20160", pdapi.StoreStateNameTombstone, 0),
			pdStore(7, peerAddr, pdapi.StoreStateNameTombstone, 0),
		},
		want: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores: map[string]v1alpha1.TiKVStore{
				"1": statusStore("1", "basic-tikv-0", "basic-tikv-0.basic-tikv-peer.ns.svc", up, 7, now),
				"2": statusStore("2", "basic-tikv-1", "basic-tikv-1.basic-tikv-peer.ns.svc.cluster.local", down, 0, now),
			},
			PeerStores: map[string]v1alpha1.TiKVStore{
				"3": statusStore("3", "other-tikv-0", "other-tikv-0.other-tikv-peer.ns.svc", up, 4, now),
				"5": statusStore("5", "basic-tikv-0", "basic-tikv-0.basic-tikv-peer.elsewhere.svc", up, 1, now),
			},
			TombstoneStores: map[string]v1alpha1.TiKVStore{
				"6": statusStore("6", "basic-tikv-2", "basic-tikv-2.basic-tikv-peer.ns.svc", pdapi.StoreStateNameTombstone, 0, now),
			},
		},
	}, {
		name: "lastTransitionTime is kept while the state holds and moves when it changes",
		prev: v1alpha1.TiKVStatus{
			Stores: map[string]v1alpha1.TiKVStore{
				"1": {ID: "1", State: up, LastTransitionTime: before, LeaderCountBeforeUpgrade: ptr.To[int32](9)},
				"2": {ID: "2", State: up, LastTransitionTime: before},
			},
			PeerStores:      map[string]v1alpha1.TiKVStore{"3": {ID: "3", State: up, LastTransitionTime: before}},
			TombstoneStores: map[string]v1alpha1.TiKVStore{"6": {ID: "6", State: pdapi.StoreStateNameTombstone, LastTransitionTime: before}},
		},
		stores: []*pdapi.StoreInfo{
			pdStore(1, ownAddr0, up, 7),
			pdStore(2, ownAddr1, pdapi.StoreStateNameOffline, 0),
			pdStore(3, peerAddr, up, 4),
			pdStore(6, "basic-tikv-2.basic-tikv-peer.ns.svc:20160", pdapi.StoreStateNameTombstone, 0),
		},
		want: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores: map[string]v1alpha1.TiKVStore{
				"1": withBeforeUpgrade(statusStore("1", "basic-tikv-0", "basic-tikv-0.basic-tikv-peer.ns.svc", up, 7, before), 9),
				"2": statusStore("2", "basic-tikv-1", "basic-tikv-1.basic-tikv-peer.ns.svc.cluster.local", pdapi.StoreStateNameOffline, 0, now),
			},
			PeerStores: map[string]v1alpha1.TiKVStore{
				"3": statusStore("3", "other-tikv-0", "other-tikv-0.other-tikv-peer.ns.svc", up, 4, before),
			},
			TombstoneStores: map[string]v1alpha1.TiKVStore{
				"6": statusStore("6", "basic-tikv-2", "basic-tikv-2.basic-tikv-peer.ns.svc", pdapi.StoreStateNameTombstone, 0, before),
			},
		},
	}, {
		name: "stores that left PD leave the status",
		prev: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores: map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}}},
		want: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true},
	}, {
		name: "PD not bootstrapped: synced, not bootstrapped, stores untouched",
		prev: v1alpha1.TiKVStatus{Stores: map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}}},
		fail: map[pdapi.Method]error{pdapi.MethodGetStores: fmt.Errorf("GET stores: %w", pdapi.ErrTiKVNotBootstrapped)},
		want: v1alpha1.TiKVStatus{Synced: true, BootStrapped: false,
			Stores: map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}}},
	}, {
		name: "PD unreachable: not synced, stores kept",
		prev: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores: map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}}},
		fail: map[pdapi.Method]error{pdapi.MethodGetStores: errors.New("connection refused")},
		want: v1alpha1.TiKVStatus{Synced: false, BootStrapped: true,
			Stores: map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}}},
		wantErr: true,
	}, {
		name: "no store leaving: the tombstone list is not asked for and the last one is kept",
		prev: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores:          map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: up}},
			TombstoneStores: map[string]v1alpha1.TiKVStore{"6": {ID: "6", State: pdapi.StoreStateNameTombstone}}},
		stores: []*pdapi.StoreInfo{pdStore(1, ownAddr0, up, 7)},
		fail:   map[pdapi.Method]error{pdapi.MethodGetTombstoneStores: errors.New("must not be called")},
		want: v1alpha1.TiKVStatus{Synced: true, BootStrapped: true,
			Stores:          map[string]v1alpha1.TiKVStore{"1": statusStore("1", "basic-tikv-0", "basic-tikv-0.basic-tikv-peer.ns.svc", up, 7, now)},
			TombstoneStores: map[string]v1alpha1.TiKVStore{"6": {ID: "6", State: pdapi.StoreStateNameTombstone}}},
		noTombstoneCall: true,
	}, {
		name:    "tombstone list fails while a store leaves: not synced",
		prev:    v1alpha1.TiKVStatus{Synced: true, BootStrapped: true, Stores: map[string]v1alpha1.TiKVStore{"2": {ID: "2", State: up}}},
		stores:  []*pdapi.StoreInfo{pdStore(1, ownAddr0, up, 7)},
		fail:    map[pdapi.Method]error{pdapi.MethodGetTombstoneStores: errors.New("timeout")},
		want:    v1alpha1.TiKVStatus{Synced: false, BootStrapped: true, Stores: map[string]v1alpha1.TiKVStore{"2": {ID: "2", State: up}}},
		wantErr: true,
	}, {
		name:  "no StatefulSet yet: PD is not asked",
		prev:  v1alpha1.TiKVStatus{Synced: true},
		noSTS: true,
		want:  v1alpha1.TiKVStatus{Synced: false},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctl := pdapi.NewFakeControl()
			client := ctl.ClusterClient("ns", "basic")
			client.SetStores(c.stores...)
			for m, err := range c.fail {
				client.SetError(m, err)
			}
			tc := observedCluster()
			tc.Status.TiKV = c.prev
			sts := &appsv1.StatefulSet{}
			if c.noSTS {
				sts = nil
			}
			err := New(&component.Env{PD: ctl, Clock: clocktesting.NewFakePassiveClock(now.Time)}).Observe(context.Background(), tc, sts)
			if (err != nil) != c.wantErr {
				t.Fatalf("Observe error = %v, want error: %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, tc.Status.TiKV); diff != "" {
				t.Errorf("status.tikv (-want +got):\n%s", diff)
			}
			if c.noTombstoneCall && slices.ContainsFunc(client.Calls(), func(c pdapi.Call) bool { return c.Method == pdapi.MethodGetTombstoneStores }) {
				t.Errorf("the tombstone list was asked for: %v", client.Calls())
			}
			if c.noSTS && len(client.Calls()) > 0 {
				t.Errorf("PD was asked before the StatefulSet exists: %v", client.Calls())
			}
		})
	}
}

func withBeforeUpgrade(s v1alpha1.TiKVStore, n int32) v1alpha1.TiKVStore {
	s.LeaderCountBeforeUpgrade = &n
	return s
}

// A cluster without its own PD reads the stores of the PD it joins.
func TestObserveStoresOfJoinedPD(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec v1alpha1.TidbClusterSpec
		want func(*pdapi.FakeControl) *pdapi.FakeClient
	}{
		{"referenced cluster", v1alpha1.TidbClusterSpec{Cluster: &v1alpha1.TidbClusterRef{Name: "main", Namespace: "other"}},
			func(c *pdapi.FakeControl) *pdapi.FakeClient { return c.ClusterClient("other", "main") }},
		{"external PD", v1alpha1.TidbClusterSpec{PDAddresses: []string{"http://pd.example:2379"}},
			func(c *pdapi.FakeControl) *pdapi.FakeClient {
				return c.ClientFor("ns", "basic", pdapi.ClusterOptions{ClientURL: "http://pd.example:2379"})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctl := pdapi.NewFakeControl()
			c.want(ctl).SetStores(pdStore(1, ownAddr0, pdapi.StoreStateNameUp, 1))
			tc := observedCluster()
			tc.Spec.PD, tc.Spec.Cluster, tc.Spec.PDAddresses = nil, c.spec.Cluster, c.spec.PDAddresses
			if err := New(&component.Env{PD: ctl, Clock: clocktesting.NewFakePassiveClock(now.Time)}).Observe(context.Background(), tc, &appsv1.StatefulSet{}); err != nil {
				t.Fatal(err)
			}
			if _, ok := tc.Status.TiKV.Stores["1"]; !ok {
				t.Errorf("store 1 of the joined PD not observed: %+v", tc.Status.TiKV)
			}
		})
	}
}
