// Package label defines every label and annotation key the operator reads or
// writes, and the label sets that select a cluster's objects. Object names
// live in pkg/names. Nothing here touches the API.
package label

import (
	"k8s.io/apimachinery/pkg/labels"
)

// Recommended Kubernetes label keys, with the values the TiDB Operator uses.
const (
	NameLabelKey      = "app.kubernetes.io/name"
	ManagedByLabelKey = "app.kubernetes.io/managed-by"
	InstanceLabelKey  = "app.kubernetes.io/instance"
	ComponentLabelKey = "app.kubernetes.io/component"
	UsedByLabelKey    = "app.kubernetes.io/used-by"
	NamespaceLabelKey = "app.kubernetes.io/namespace"

	// TiDBOperator is the managed-by value of every object the operator makes.
	TiDBOperator = "tidb-operator"
	// TiDBCluster is the name value of every TidbCluster child.
	TiDBCluster = "tidb-cluster"
	// UsedByEndUser marks client Services; UsedByPeer marks headless Services.
	UsedByEndUser = "end-user"
	UsedByPeer    = "peer"
)

// Component values of app.kubernetes.io/component.
const (
	DiscoveryLabelVal = "discovery"
	PDLabelVal        = "pd"
	TiKVLabelVal      = "tikv"
	TiDBLabelVal      = "tidb"
	TiFlashLabelVal   = "tiflash"
	TiCDCLabelVal     = "ticdc"
	PumpLabelVal      = "pump"
	TiProxyLabelVal   = "tiproxy"
	// TSOLabelVal and SchedulingLabelVal are the PD micro-services (spec.pdms).
	TSOLabelVal        = "tso"
	SchedulingLabelVal = "scheduling"
)

// Labels the operator syncs from PD onto pods, PVCs and PVs.
const (
	ClusterIDLabelKey = "tidb.pingcap.com/cluster-id"
	MemberIDLabelKey  = "tidb.pingcap.com/member-id"
	StoreIDLabelKey   = "tidb.pingcap.com/store-id"
)

// Annotation keys with the TiDB Operator's meaning.
const (
	AnnPodNameKey              = "tidb.pingcap.com/pod-name"
	AnnPVCDeferDeleting        = "tidb.pingcap.com/pvc-defer-deleting"
	AnnPVCPodScheduling        = "tidb.pingcap.com/pod-scheduling"
	AnnForceUpgradeKey         = "tidb.pingcap.com/force-upgrade"
	AnnEvictLeaderBeginTime    = "tidb.pingcap.com/evictLeaderBeginTime"
	AnnStsLastSyncTimestamp    = "tidb.pingcap.com/sync-timestamp"
	AnnOwnerGeneration         = "tidb.pingcap.com/owner-generation"
	AnnScaleInTime             = "tidb.pingcap.com/scale-in-time"
	AnnTiKVNoActiveStoreSince  = "tidb.pingcap.com/tikv-no-active-store-since"
	AnnSysctlInit              = "tidb.pingcap.com/sysctl-init"
	AnnLastAppliedConfig       = "pingcap.com/last-applied-configuration"
	AnnLastAppliedPodTemplate  = "pingcap.com/last-applied-podtemplate"
	AnnPrometheusScrape        = "prometheus.io/scrape"
	AnnPrometheusPath          = "prometheus.io/path"
	AnnPrometheusPort          = "prometheus.io/port"
	AnnPDDeleteSlots           = "pd.tidb.pingcap.com/delete-slots"
	AnnTiKVDeleteSlots         = "tikv.tidb.pingcap.com/delete-slots"
	AnnTiDBDeleteSlots         = "tidb.tidb.pingcap.com/delete-slots"
	AnnTiFlashDeleteSlots      = "tiflash.tidb.pingcap.com/delete-slots"
	AnnTiCDCDeleteSlots        = "ticdc.tidb.pingcap.com/delete-slots"
	AnnTiProxyDeleteSlots      = "tiproxy.tidb.pingcap.com/delete-slots"
	AnnAutoFailureRecovery     = "app.kubernetes.io/auto-failure-recovery"
	AnnConfigMapBeforeDeletePx = "tidb.pingcap.com/configmap-name-before-delete-"
)

// DeleteSlotsAnnotations are the delete-slots annotation keys of every component.
var DeleteSlotsAnnotations = []string{
	AnnPDDeleteSlots, AnnTiKVDeleteSlots, AnnTiDBDeleteSlots,
	AnnTiFlashDeleteSlots, AnnTiCDCDeleteSlots, AnnTiProxyDeleteSlots,
}

// Label is a label set with builder methods for the operator's keys.
type Label map[string]string

// New returns the labels shared by every object of a TidbCluster, without
// the instance: name=tidb-cluster and managed-by=tidb-operator.
func New() Label {
	return Label{NameLabelKey: TiDBCluster, ManagedByLabelKey: TiDBOperator}
}

// ForCluster returns New() with the instance label set to instance.
func ForCluster(instance string) Label {
	return New().Instance(instance)
}

// Instance sets app.kubernetes.io/instance.
func (l Label) Instance(name string) Label { l[InstanceLabelKey] = name; return l }

// Component sets app.kubernetes.io/component.
func (l Label) Component(name string) Label { l[ComponentLabelKey] = name; return l }

// UsedBy sets app.kubernetes.io/used-by.
func (l Label) UsedBy(v string) Label { l[UsedByLabelKey] = v; return l }

// Copy returns an independent copy.
func (l Label) Copy() Label {
	out := make(Label, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

// Selector returns a selector matching exactly these labels.
func (l Label) Selector() labels.Selector { return labels.SelectorFromSet(labels.Set(l)) }

// Labels returns the set as a plain map.
func (l Label) Labels() map[string]string { return map[string]string(l) }
