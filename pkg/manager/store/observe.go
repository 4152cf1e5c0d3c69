package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Observe reads the stores PD knows into the kind's status: this cluster's
// stores (matched by advertised address), stores of the same engine of
// other clusters sharing the PD (peer stores), and this cluster's
// tombstones (asked for only while one of its stores is leaving: Offline,
// or gone from the live list since the last observation). PD's store list
// is read once per sync for TiKV and TiFlash together (flow.Remember). A
// store's lastTransitionTime moves only when its state changes, because
// failover timers start there. Before the first store registers PD is not
// bootstrapped: bootStrapped=false, stores untouched. PD unreachable ⇒
// synced=false and the old stores kept. Before the StatefulSet exists no
// store can have registered, so PD is not asked. Unless the cluster is
// paused, the stores then get their node's topology labels in PD
// (syncStoreLabels) and their pods, PVCs and PVs the meta labels.
func (l *Lifecycle) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	s := l.kind.Status(tc)
	if sts == nil {
		s.Synced = false
		return nil
	}
	client := l.Client(tc)
	live, err := flow.Remember(ctx, storesKey(tc), func() (*pdapi.StoresInfo, error) { return client.GetStores(ctx) })
	if errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		s.Synced, s.BootStrapped = true, false
		return nil
	}
	if err != nil {
		s.Synced = false
		return fmt.Errorf("PD stores: %w", err)
	}
	now := metav1.NewTime(l.clock.Now())
	own := l.ownAddress(tc)
	gone := s.TombstoneStores
	if storeLeaving(s.Stores, live, own) {
		tombstones, err := flow.Remember(ctx, storesKey(tc)+"/tombstones", func() (*pdapi.StoresInfo, error) {
			return client.GetTombstoneStores(ctx)
		})
		if err != nil {
			s.Synced = false
			return fmt.Errorf("PD tombstone stores: %w", err)
		}
		gone = ownTombstones(tombstones, own, s.TombstoneStores, now)
	}
	stores, peers := map[string]v1alpha1.TiKVStore{}, map[string]v1alpha1.TiKVStore{}
	for _, info := range live.Stores {
		store, ok := newStore(info)
		if !ok || IsTiFlash(info.Store) != l.kind.TiFlash {
			continue
		}
		prev, seen := s.Stores[store.ID]
		if !seen {
			prev, seen = s.PeerStores[store.ID]
		}
		store.LastTransitionTime = now
		if seen {
			store.LeaderCountBeforeUpgrade = prev.LeaderCountBeforeUpgrade
			if prev.State == store.State && !prev.LastTransitionTime.IsZero() {
				store.LastTransitionTime = prev.LastTransitionTime
			}
		}
		if own.MatchString(info.Store.Address) {
			stores[store.ID] = store
		} else {
			peers[store.ID] = store
		}
	}
	s.Stores, s.PeerStores, s.TombstoneStores = nilIfEmpty(stores), nilIfEmpty(peers), nilIfEmpty(gone)
	s.Synced, s.BootStrapped = true, true
	if tc.Spec.Paused {
		return nil
	}
	l.syncStoreLabels(ctx, tc, live)
	return l.syncMeta(ctx, tc)
}

// storesKey names the PD whose stores tc reads, for the per-sync memo.
func storesKey(tc *v1alpha1.TidbCluster) string {
	switch {
	case tc.Spec.PD != nil:
		return "pd-stores/" + tc.Namespace + "/" + tc.Name
	case tc.Spec.Cluster != nil && tc.Spec.Cluster.Name != "":
		ns := tc.Spec.Cluster.Namespace
		if ns == "" {
			ns = tc.Namespace
		}
		return "pd-stores/" + ns + "/" + tc.Spec.Cluster.Name
	case len(tc.Spec.PDAddresses) > 0:
		return "pd-stores/" + tc.Spec.PDAddresses[0]
	}
	return "pd-stores/" + tc.Namespace + "/" + tc.Name
}

// storeLeaving reports whether one of this cluster's stores is Offline in
// live or was in prev and is no longer in live (it became a Tombstone).
func storeLeaving(prev map[string]v1alpha1.TiKVStore, live *pdapi.StoresInfo, own names.PeerAddress) bool {
	seen := map[string]bool{}
	for _, info := range live.Stores {
		if info == nil || info.Store == nil || !own.MatchString(info.Store.Address) {
			continue
		}
		if info.Store.StateName == pdapi.StoreStateNameOffline {
			return true
		}
		seen[strconv.FormatUint(info.Store.ID, 10)] = true
	}
	for id := range prev {
		if !seen[id] {
			return true
		}
	}
	return false
}

// ownTombstones returns this cluster's tombstones; a store that is already
// a tombstone in prev keeps its lastTransitionTime.
func ownTombstones(info *pdapi.StoresInfo, own names.PeerAddress, prev map[string]v1alpha1.TiKVStore,
	now metav1.Time) map[string]v1alpha1.TiKVStore {
	out := map[string]v1alpha1.TiKVStore{}
	for _, si := range info.Stores {
		store, ok := newStore(si)
		if !ok || !own.MatchString(si.Store.Address) {
			continue
		}
		store.LastTransitionTime = now
		if old, seen := prev[store.ID]; seen && !old.LastTransitionTime.IsZero() {
			store.LastTransitionTime = old.LastTransitionTime
		}
		out[store.ID] = store
	}
	return out
}

// newStore converts PD's store; the pod name is the first label of the
// advertised host, e.g. basic-tikv-0 for basic-tikv-0.basic-tikv-peer.ns.svc:20160.
func newStore(info *pdapi.StoreInfo) (v1alpha1.TiKVStore, bool) {
	if info == nil || info.Store == nil || info.Status == nil {
		return v1alpha1.TiKVStore{}, false
	}
	host := info.Store.Address
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	podName, _, _ := strings.Cut(host, ".")
	store := v1alpha1.TiKVStore{
		ID:          strconv.FormatUint(info.Store.ID, 10),
		PodName:     podName,
		IP:          host,
		LeaderCount: int32(min(info.Status.LeaderCount, math.MaxInt32)), //nolint:gosec // clamped above
		State:       info.Store.StateName,
	}
	// The heartbeat time is not recorded: it changes every few seconds, and
	// status must not be rewritten while nothing changed.
	return store, true
}

// ownAddress matches the addresses of this cluster's pods of the kind.
func (l *Lifecycle) ownAddress(tc *v1alpha1.TidbCluster) names.PeerAddress {
	return names.NewPeerAddress(tc.Name, tc.Namespace, l.kind.Component)
}

// IsTiFlash reports whether a store is TiFlash's (label engine=tiflash).
func IsTiFlash(store *pdapi.MetaStore) bool {
	for _, l := range store.Labels {
		if l != nil && l.Key == "engine" && l.Value == "tiflash" {
			return true
		}
	}
	return false
}

func nilIfEmpty(m map[string]v1alpha1.TiKVStore) map[string]v1alpha1.TiKVStore {
	if len(m) == 0 {
		return nil
	}
	return m
}
