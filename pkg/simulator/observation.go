package simulator

import (
	"hash/fnv"
	"strings"
)

// Component is a TiDB cluster component as named by the `app.kubernetes.io/component` label.
type Component string

// Components the simulator answers for; pods of other components are ignored.
const (
	ComponentPD      Component = "pd"
	ComponentTiKV    Component = "tikv"
	ComponentTiDB    Component = "tidb"
	ComponentTiFlash Component = "tiflash"
	ComponentTiCDC   Component = "ticdc"
	ComponentTiProxy Component = "tiproxy"
	ComponentPump    Component = "pump"
	// ComponentTSO and ComponentScheduling are PD's micro-services (pdms.go).
	ComponentTSO        Component = "tso"
	ComponentScheduling Component = "scheduling"
)

// simulatedComponents are the components whose pods the simulator watches.
var simulatedComponents = map[Component]bool{
	ComponentPD: true, ComponentTiKV: true, ComponentTiDB: true, ComponentTiFlash: true, ComponentTiCDC: true,
	ComponentTiProxy: true, ComponentPump: true, ComponentTSO: true, ComponentScheduling: true,
}

// ClusterKey identifies a simulated cluster: the namespace and the `app.kubernetes.io/instance` label
// (the TidbCluster name).
type ClusterKey struct {
	Namespace string
	Name      string
}

// String renders the key as namespace/name.
func (k ClusterKey) String() string { return k.Namespace + "/" + k.Name }

// PodObservation is what the simulator needs to know about one pod of a cluster.
type PodObservation struct {
	Name      string
	Component Component
	// Running is phase Running without a deletion timestamp: the simulated process runs.
	Running bool
	// Ready is the pod's Ready condition.
	Ready bool
	// PVCUID is the UID of the pod's data PVC; empty when the pod mounts no PVC. Together with Name it is
	// the identity of the member or store: a new PVC (new UID) is new data, hence a new member or store.
	PVCUID string
	// PVCPending is set when the pod mounts a PVC the simulator has not seen yet; the pod does not join
	// until the PVC is known.
	PVCPending bool
	// Version is the image tag of the component's container, e.g. "v8.5.0"; empty if untagged.
	Version string
	// UID is the pod's UID: a pod deleted and recreated under the same name has a new one.
	UID string
	// IP is the pod's IP (status.podIP); the component metrics of pod_metrics.go are served there.
	IP string
	// Restarts is the restart count of the component's container. Together with UID it tells one run of
	// the process from the next, which matters for components whose identity is per process (a TiCDC
	// capture ID) and for a Pump whose process exited after going offline.
	Restarts int32
	// Owner is the heterogeneous cluster the pod belongs to when it is observed with the cluster whose PD
	// it joins; zero for a pod of the cluster itself.
	Owner ClusterKey
}

// TidbClusterInfo is what the simulator reads from a TidbCluster object, when the CRD exists.
type TidbClusterInfo struct {
	ClusterDomain string
	// TLSCluster is spec.tlsCluster.enabled: the cluster's endpoints speak TLS only.
	TLSCluster bool
	// PDLocationLabels are replication.location-labels of spec.pd.config, which PD starts with.
	PDLocationLabels []string
	// Joins is the cluster whose PD this one joins (spec.cluster without spec.pd): a heterogeneous
	// cluster; nil otherwise.
	Joins *ClusterKey
	// PDMaxReplicas is replication.max-replicas of spec.pd.config; 0 when unset.
	PDMaxReplicas uint64
	// PDPlacementRules is replication.enable-placement-rules of spec.pd.config; nil when unset.
	PDPlacementRules *bool
}

// ClusterObservation is the complete observed state of one cluster, rebuilt from the informer caches on
// every change: pods are the source of truth.
type ClusterObservation struct {
	Pods []PodObservation
	// HasPVCs reports whether any PVC of the cluster still exists; a cluster with neither pods, PVCs nor a
	// TidbCluster is forgotten.
	HasPVCs bool
	// TidbCluster is nil when there is no TidbCluster object (or the CRD is not watched).
	TidbCluster *TidbClusterInfo
}

// empty reports whether nothing of the cluster exists any more.
func (o ClusterObservation) empty() bool {
	return len(o.Pods) == 0 && !o.HasPVCs && o.TidbCluster == nil
}

// identity is the identity of a member or store: the pod name plus the UID of its data PVC.
type identity struct {
	pod    string
	pvcUID string
}

// stableID derives a non-zero 64-bit ID from parts, so that IDs survive simulator restarts.
func stableID(parts ...string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.Join(parts, "\x00")))
	if id := h.Sum64(); id != 0 {
		return id
	}
	return 1
}

// imageVersion returns the tag of image ("pingcap/pd:v8.5.0" gives "v8.5.0"), or "" when untagged.
func imageVersion(image string) string {
	if at := strings.Index(image, "@"); at >= 0 {
		image = image[:at]
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon <= slash {
		return ""
	}
	return image[colon+1:]
}
