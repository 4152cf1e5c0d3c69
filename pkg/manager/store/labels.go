package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// FailedSetStoreLabels is the Warning event's reason when a store's labels
// could not be set in PD, or nodes could not be read to know them.
const FailedSetStoreLabels = "FailedSetStoreLabels"

// nodeFallbacks are the node labels a short location-label name falls back
// to when the node has no label of that name (PD's label keys were once
// not allowed a slash): region and zone to the topology keys, stable then
// beta, host to the hostname.
var nodeFallbacks = map[string][]string{
	"region": {corev1.LabelTopologyRegion, corev1.LabelFailureDomainBetaRegion},
	"zone":   {corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone},
	"host":   {corev1.LabelHostname},
}

// ZoneKeys are the location-label names that say PD places replicas by
// zone; TiDB gets server labels only when PD's location-labels hold one.
var ZoneKeys = []string{"zone", corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone}

// NodeLabels returns, for each key, the node's label of that name, or for
// region/zone/host the first fallback the node has (nodeFallbacks). Keys
// the node has no value for are left out; node labels not named by a key
// are ignored.
func NodeLabels(node map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := node[k]; ok {
			out[k] = v
			continue
		}
		for _, fb := range nodeFallbacks[k] {
			if v, ok := node[fb]; ok {
				out[k] = v
				break
			}
		}
	}
	return out
}

// StoreLabelKeys returns PD's location-labels followed by the spec's
// storeLabels not among them.
func StoreLabelKeys(locationLabels, storeLabels []string) []string {
	keys := slices.Clone(locationLabels)
	for _, k := range storeLabels {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Differs returns the labels of want that have is missing or holds with
// another value; nil when have already agrees.
func Differs(have, want map[string]string) map[string]string {
	var out map[string]string
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// LocationLabels returns PD's replication.location-labels, read once per
// sync for every component of tc that asks (flow.Remember).
func LocationLabels(ctx context.Context, client pdapi.Client, tc *v1alpha1.TidbCluster) ([]string, error) {
	cfg, err := flow.Remember(ctx, storesKey(tc)+"/config", func() (*pdapi.Config, error) { return client.GetConfig(ctx) })
	if err != nil {
		return nil, fmt.Errorf("PD config: %w", err)
	}
	if cfg == nil {
		return nil, nil
	}
	return cfg.Replication.LocationLabels, nil
}

// ErrNoNodeAccess is returned by Nodes.Labels when the operator may not
// read nodes (a namespaced operator without clusterPermissions.nodes).
var ErrNoNodeAccess = errors.New("nodes cannot be read: the operator lacks permission to get nodes (the chart's " + component.NodePermission + ")")

// Nodes reads node labels from the API (nodes are not cached: the
// operator's caches hold only the objects it labels), each node once per
// sync, and only when a sync reads its members from PD or TiDB anyway.
type Nodes struct {
	kube     kubernetes.Interface
	recorder record.EventRecorder
}

// noNodeAccessWarned holds the UIDs of the TidbClusters whose missing node
// permission was reported, shared by every Nodes of the process (TiKV,
// TiFlash and TiDB each hold one), so a cluster gets one Warning.
var noNodeAccessWarned sync.Map

// NewNodes returns a node reader over kube; a nil kube reads nothing.
func NewNodes(kube kubernetes.Interface, recorder record.EventRecorder) *Nodes {
	return &Nodes{kube: kube, recorder: recorder}
}

// Labels returns the labels of node name. Without permission to read
// nodes it records one Warning FailedSetStoreLabels event per cluster and
// process, naming the permission, and returns ErrNoNodeAccess; other
// failures are returned wrapped.
func (n *Nodes) Labels(ctx context.Context, tc *v1alpha1.TidbCluster, name string) (map[string]string, error) {
	if n == nil || n.kube == nil {
		return nil, ErrNoNodeAccess
	}
	node, err := flow.Remember(ctx, "node/"+name, func() (*corev1.Node, error) {
		return n.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	})
	if apierrors.IsForbidden(err) {
		if _, seen := noNodeAccessWarned.LoadOrStore(tc.UID, true); !seen && n.recorder != nil {
			n.recorder.Event(tc, corev1.EventTypeWarning, FailedSetStoreLabels,
				"store and server labels are not synced from node topology: "+ErrNoNodeAccess.Error())
		}
		return nil, ErrNoNodeAccess
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return node.Labels, nil
}

// syncStoreLabels gives each of this cluster's Up stores whose pod is
// scheduled the labels of its node under PD's location-labels and the
// spec's storeLabels, through PD's store-label API, when PD's labels of
// the store lack or differ from them. It never fails the sync: a failure
// is a Warning FailedSetStoreLabels event, and the next observation tries
// again. A refresh that reads only failures leaves labels alone: a
// converged cluster's stores keep their nodes, and the next full reading
// checks them again.
func (l *Lifecycle) syncStoreLabels(ctx context.Context, tc *v1alpha1.TidbCluster, live *pdapi.StoresInfo) {
	if l.pods == nil || l.nodes == nil || l.nodes.kube == nil || flow.FailuresOnly(ctx) {
		return
	}
	client := l.Client(tc)
	locations, err := LocationLabels(ctx, client, tc)
	if err != nil {
		klog.FromContext(ctx).Info("store labels not synced", "err", err)
		return
	}
	var storeLabels []string
	if tc.Spec.TiKV != nil {
		storeLabels = tc.Spec.TiKV.StoreLabels // TiFlash has none of its own and follows TiKV's
	}
	keys := StoreLabelKeys(locations, storeLabels)
	if len(keys) == 0 {
		return
	}
	own := l.ownAddress(tc)
	for _, info := range live.Stores {
		if info == nil || info.Store == nil || IsTiFlash(info.Store) != l.kind.TiFlash ||
			info.Store.StateName != pdapi.StoreStateNameUp || !own.MatchString(info.Store.Address) {
			continue
		}
		if err := l.syncStore(ctx, tc, info.Store, keys); errors.Is(err, ErrNoNodeAccess) {
			return
		} else if err != nil && l.recorder != nil {
			l.recorder.Event(tc, corev1.EventTypeWarning, FailedSetStoreLabels, err.Error())
		}
	}
}

func (l *Lifecycle) syncStore(ctx context.Context, tc *v1alpha1.TidbCluster, store *pdapi.MetaStore, keys []string) error {
	st, _ := newStore(&pdapi.StoreInfo{Store: store, Status: &pdapi.StoreStatus{}})
	pod, err := l.pods.Pods(tc.Namespace).Get(st.PodName)
	if err != nil || pod.Spec.NodeName == "" {
		return nil //nolint:nilerr // a pod not cached or not scheduled has no node yet: a later sync labels it
	}
	node, err := l.nodes.Labels(ctx, tc, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, sl := range store.Labels {
		if sl != nil {
			have[sl.Key] = sl.Value
		}
	}
	set := Differs(have, NodeLabels(node, keys))
	if len(set) == 0 {
		return nil
	}
	if err := l.Client(tc).SetStoreLabels(ctx, store.ID, set); err != nil {
		return fmt.Errorf("set labels %v of store %d (pod %s): %w", set, store.ID, st.PodName, err)
	}
	klog.FromContext(ctx).V(2).Info("store labels set", "store", strconv.FormatUint(store.ID, 10), "pod", st.PodName, "labels", set)
	return nil
}

// syncMeta gives this cluster's store pods, their PVCs and PVs the
// cluster-id and store-id labels (pd.Meta).
func (l *Lifecycle) syncMeta(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	ids := map[string]string{}
	for _, s := range l.kind.Status(tc).Stores {
		ids[s.PodName] = s.ID
	}
	return l.meta.SyncStores(ctx, tc, ids)
}
