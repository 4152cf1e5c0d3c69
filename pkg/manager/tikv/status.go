package tikv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// pdClient returns the client of the PD that tc's stores register with:
// the cluster's own PD, the PD of the cluster spec.cluster names, or the
// first of spec.pdAddresses.
func pdClient(ctl pdapi.Control, tc *v1alpha1.TidbCluster) pdapi.Client {
	opts := pd.ClientOptions(tc)
	if tc.Spec.PD != nil {
		return ctl.GetPDClient(tc.Namespace, tc.Name, opts)
	}
	if ref := tc.Spec.Cluster; ref != nil && ref.Name != "" {
		ns := ref.Namespace
		if ns == "" {
			ns = tc.Namespace
		}
		opts.ClusterDomain = ref.ClusterDomain
		return ctl.GetPDClient(ns, ref.Name, opts)
	}
	if len(tc.Spec.PDAddresses) > 0 {
		opts.ClientURL = tc.Spec.PDAddresses[0]
	}
	return ctl.GetPDClient(tc.Namespace, tc.Name, opts)
}

// observeStores reads the stores PD knows into status.tikv: this cluster's
// stores (matched by advertised address), stores of other clusters sharing
// the PD (peer stores; TiFlash stores excluded), and this cluster's
// tombstones (asked for only while one of its stores is leaving: Offline, or
// gone from the live list since the last observation). A store's lastTransitionTime moves only when its state
// changes, because failover timers start there. Before the first store
// registers PD is not bootstrapped: bootStrapped=false, stores untouched.
// PD unreachable ⇒ synced=false and the old stores kept.
func observeStores(ctx context.Context, ctl pdapi.Control, clk clock.PassiveClock, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.TiKV
	client := pdClient(ctl, tc)
	live, err := client.GetStores(ctx)
	if errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		s.Synced, s.BootStrapped = true, false
		return nil
	}
	if err != nil {
		s.Synced = false
		return fmt.Errorf("PD stores: %w", err)
	}
	now := metav1.NewTime(clk.Now())
	own := ownStoreAddress(tc)
	gone := s.TombstoneStores
	if storeLeaving(s.Stores, live, own) {
		tombstones, err := client.GetTombstoneStores(ctx)
		if err != nil {
			s.Synced = false
			return fmt.Errorf("PD tombstone stores: %w", err)
		}
		gone = ownTombstones(tombstones, own, s.TombstoneStores, now)
	}
	stores, peers := map[string]v1alpha1.TiKVStore{}, map[string]v1alpha1.TiKVStore{}
	for _, info := range live.Stores {
		store, ok := newStore(info)
		if !ok {
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
		switch {
		case own.MatchString(info.Store.Address):
			stores[store.ID] = store
		case !isTiFlash(info.Store):
			peers[store.ID] = store
		}
	}
	s.Stores, s.PeerStores, s.TombstoneStores = nilIfEmpty(stores), nilIfEmpty(peers), nilIfEmpty(gone)
	s.Synced, s.BootStrapped = true, true
	return nil
}

// storeLeaving reports whether one of this cluster's stores is Offline in
// live or was in prev and is no longer in live (it became a Tombstone).
func storeLeaving(prev map[string]v1alpha1.TiKVStore, live *pdapi.StoresInfo, own *regexp.Regexp) bool {
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
func ownTombstones(info *pdapi.StoresInfo, own *regexp.Regexp, prev map[string]v1alpha1.TiKVStore,
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

// ownStoreAddress matches the addresses of this cluster's TiKV pods:
// <tc>-tikv-<n>.<tc>-tikv-peer.<ns>.svc[.<domain>]:<port>.
func ownStoreAddress(tc *v1alpha1.TidbCluster) *regexp.Regexp {
	q := regexp.QuoteMeta
	return regexp.MustCompile(fmt.Sprintf(`^%s-tikv-\d+\.%s-tikv-peer\.%s\.svc(\..+)?:\d+$`,
		q(tc.Name), q(tc.Name), q(tc.Namespace)))
}

// isTiFlash reports whether a store is TiFlash's (label engine=tiflash):
// those belong to status.tiflash, never to TiKV's peer stores.
func isTiFlash(store *pdapi.MetaStore) bool {
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

// UpStores counts the Up stores of this cluster and of peer clusters.
func UpStores(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, stores := range []map[string]v1alpha1.TiKVStore{tc.Status.TiKV.Stores, tc.Status.TiKV.PeerStores} {
		for _, s := range stores {
			if s.State == pdapi.StoreStateNameUp {
				n++
			}
		}
	}
	return n
}

// Available reports whether TiKV can serve: at least one Up store (peer
// stores count) and at least one Ready TiKV pod. It is the gate TiDB waits
// on, and returns why not when it is not. A cluster without spec.tikv
// (TiDB joining another cluster's TiKV) is always available.
func Available(tc *v1alpha1.TidbCluster) (bool, string) {
	if tc.Spec.TiKV == nil {
		return true, ""
	}
	ready := int32(0)
	if sts := tc.Status.TiKV.StatefulSet; sts != nil {
		ready = sts.ReadyReplicas
	}
	if ready < 1 {
		return false, "waiting for TiKV pods: none Ready"
	}
	if UpStores(tc) < 1 {
		return false, "waiting for TiKV stores: none Up in PD"
	}
	return true, ""
}
