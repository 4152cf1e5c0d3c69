package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MemberPhase is the lifecycle phase of a component.
// +kubebuilder:validation:Enum="";Normal;Upgrade;Scale;Suspend
type MemberPhase string

const (
	// NormalPhase means the component is neither scaling nor upgrading.
	NormalPhase MemberPhase = "Normal"
	// UpgradePhase means pods are being rolled to a new revision.
	UpgradePhase MemberPhase = "Upgrade"
	// ScalePhase means the desired replicas differ from the StatefulSet's.
	ScalePhase MemberPhase = "Scale"
	// SuspendPhase means the component's StatefulSet is suspended.
	SuspendPhase MemberPhase = "Suspend"
)

// Condition types of a TidbCluster.
const (
	// TidbClusterReady is True when every component is up and healthy.
	TidbClusterReady = "Ready"
	// TidbClusterProgressing is True while the operator is still converging the cluster.
	TidbClusterProgressing = "Progressing"
	// TidbClusterDegraded is True when the operator cannot make progress (invalid spec, errors).
	TidbClusterDegraded = "Degraded"
	// TidbClusterUnsupported is True when the spec sets fields or components
	// this operator version accepts but does not act on yet; its message
	// names them.
	TidbClusterUnsupported = "Unsupported"
)

// ComponentDataVolumeDeleting is a component condition (status.<component>.conditions),
// True while the data PVC of a wanted member is being deleted: that member's
// data goes as soon as its pod stops, so the cluster is not Ready.
const ComponentDataVolumeDeleting = "DataVolumeDeleting"

// TidbClusterStatus is the observed state of a TiDB cluster.
type TidbClusterStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ClusterID is PD's cluster ID.
	// +optional
	ClusterID string `json:"clusterID,omitempty"`
	// Conditions are Ready, Progressing and Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// PD is the observed PD component.
	// +optional
	PD PDStatus `json:"pd,omitempty"`
	// TiKV is the observed TiKV component.
	// +optional
	TiKV TiKVStatus `json:"tikv,omitempty"`
	// TiDB is the observed TiDB component.
	// +optional
	TiDB TiDBStatus `json:"tidb,omitempty"`
	// TiFlash is the observed TiFlash component.
	// +optional
	TiFlash TiKVStatus `json:"tiflash,omitempty"`
	// TiCDC is the observed TiCDC component.
	// +optional
	TiCDC TiCDCStatus `json:"ticdc,omitempty"`
	// Pump is the observed Pump component.
	// +optional
	Pump PumpStatus `json:"pump,omitempty"`
	// TiProxy is the observed TiProxy component.
	// +optional
	TiProxy TiProxyStatus `json:"tiproxy,omitempty"`
	// PDMS are the observed PD micro-services (spec.pdms), by service name
	// (tso, scheduling).
	// +optional
	PDMS map[string]*PDMSStatus `json:"pdms,omitempty"`
}

// PDMSStatus is one observed PD micro-service.
type PDMSStatus struct {
	ComponentStatus `json:",inline"`
	// Name is the service: tso or scheduling.
	Name string `json:"name"`
	// Synced is true once PD listed the service's members; a failed
	// listing keeps the value before it, as the TiDB Operator does.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Members are the service addresses PD lists for the service.
	// +optional
	Members []string `json:"members,omitempty"`
	// Healthy is true when the tso service answered its health check
	// during the last sync (TiKV waits for it); always false for
	// scheduling, which has none.
	// +optional
	Healthy bool `json:"healthy,omitempty"`
}

// TiProxyStatus is the observed TiProxy component.
type TiProxyStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when the proxies answered during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Members are the proxies, by pod name.
	// +optional
	Members map[string]TiProxyMember `json:"members,omitempty"`
}

// TiProxyMember is one TiProxy server.
type TiProxyMember struct {
	// Name of the member (the pod name).
	Name string `json:"name"`
	// Health is true when the proxy answered its status API.
	Health bool `json:"health"`
	// Info is the proxy's self-description.
	// +optional
	Info string `json:"info,omitempty"`
	// LastTransitionTime is when Health last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ComponentStatus holds what every StatefulSet-backed component reports.
type ComponentStatus struct {
	// Phase is Normal, Upgrade, Scale or Suspend.
	// +optional
	Phase MemberPhase `json:"phase,omitempty"`
	// StatefulSet is a copy of the component StatefulSet's status (apps/v1 StatefulSetStatus).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	StatefulSet *appsv1.StatefulSetStatus `json:"statefulSet,omitempty"`
	// Image is the main container's image in the StatefulSet.
	// +optional
	Image string `json:"image,omitempty"`
	// Conditions of the component, such as LeaderEvicting (meta/v1 Condition list).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Volumes summarises the component's PVCs, by volume name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Volumes map[StorageVolumeName]*StorageVolumeStatus `json:"volumes,omitempty"`
	// VolReplaceInProgress is true while PVCs are being replaced.
	// +optional
	VolReplaceInProgress bool `json:"volReplaceInProgress,omitempty"`
}

// StorageVolumeName is the name of a pod volume backed by PVCs.
type StorageVolumeName string

// StorageVolumeStatus summarises the PVCs of one volume over the component's pods.
type StorageVolumeStatus struct {
	// Name of the volume.
	Name StorageVolumeName `json:"name"`
	// BoundCount is the number of Bound PVCs.
	// +optional
	BoundCount int `json:"boundCount"`
	// CurrentCount is the number of PVCs with the current size and class.
	// +optional
	CurrentCount int `json:"currentCount"`
	// ModifiedCount is the number of PVCs already at the desired size and class.
	// +optional
	ModifiedCount int `json:"modifiedCount"`
	// CurrentCapacity is the size of the current PVCs.
	// +optional
	CurrentCapacity resource.Quantity `json:"currentCapacity"`
	// ModifiedCapacity is the desired size.
	// +optional
	ModifiedCapacity resource.Quantity `json:"modifiedCapacity"`
	// CurrentStorageClass of the current PVCs.
	// +optional
	CurrentStorageClass string `json:"currentStorageClass"`
	// ModifiedStorageClass is the desired storage class.
	// +optional
	ModifiedStorageClass string `json:"modifiedStorageClass"`
}

// PDStatus is the observed PD component.
type PDStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when PD's API answered during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Members are the PD members of this cluster, by name.
	// +optional
	Members map[string]PDMember `json:"members,omitempty"`
	// PeerMembers are PD members of other clusters sharing this PD cluster.
	// +optional
	PeerMembers map[string]PDMember `json:"peerMembers,omitempty"`
	// Leader is the PD leader.
	// +optional
	Leader PDMember `json:"leader,omitempty"`
	// FailureMembers are members failover has recorded, by name.
	// +optional
	FailureMembers map[string]PDFailureMember `json:"failureMembers,omitempty"`
	// UnjoinedMembers are pods that are not PD members, by pod name.
	// +optional
	UnjoinedMembers map[string]UnjoinedMember `json:"unjoinedMembers,omitempty"`
}

// PDMember is one PD member.
type PDMember struct {
	// Name of the member (the pod name).
	// +optional
	Name string `json:"name,omitempty"`
	// ID is the member ID, in decimal.
	// +optional
	ID string `json:"id,omitempty"`
	// ClientURL is the member's advertised client URL.
	// +optional
	ClientURL string `json:"clientURL,omitempty"`
	// Health is PD's view of the member's health.
	// +optional
	Health bool `json:"health,omitempty"`
	// LastTransitionTime is when Health last changed; failover timers start here.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// PDFailureMember records a PD member that failover acted on.
type PDFailureMember struct {
	// PodName of the failed member.
	// +optional
	PodName string `json:"podName,omitempty"`
	// MemberID of the failed member.
	// +optional
	MemberID string `json:"memberID,omitempty"`
	// PVCUIDSet are the UIDs of the PVCs to delete with the member.
	// +optional
	PVCUIDSet map[types.UID]EmptyStruct `json:"pvcUIDSet,omitempty"`
	// MemberDeleted is true once the member was removed from PD.
	// +optional
	MemberDeleted bool `json:"memberDeleted,omitempty"`
	// HostDown is true when the member's node is known to be down.
	// +optional
	HostDown bool `json:"hostDown,omitempty"`
	// CreatedAt is when the failure was recorded.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// UnjoinedMember is a PD pod that is not a member of PD.
type UnjoinedMember struct {
	// PodName of the pod.
	// +optional
	PodName string `json:"podName,omitempty"`
	// PVCUIDSet are the UIDs of its PVCs.
	// +optional
	PVCUIDSet map[types.UID]EmptyStruct `json:"pvcUIDSet,omitempty"`
	// CreatedAt is when the pod was first seen unjoined.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// EmptyStruct is the value type of a JSON set.
type EmptyStruct struct{}

// TiKVStatus is the observed TiKV (or TiFlash) component.
type TiKVStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when PD's store API answered during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// BootStrapped is true once PD reports the TiKV cluster bootstrapped.
	// +optional
	BootStrapped bool `json:"bootStrapped,omitempty"`
	// Stores are this cluster's live stores, by store ID.
	// +optional
	Stores map[string]TiKVStore `json:"stores,omitempty"`
	// PeerStores are stores of other clusters sharing this PD cluster.
	// +optional
	PeerStores map[string]TiKVStore `json:"peerStores,omitempty"`
	// TombstoneStores are removed stores, by store ID.
	// +optional
	TombstoneStores map[string]TiKVStore `json:"tombstoneStores,omitempty"`
	// FailureStores are stores failover has recorded, by store ID.
	// +optional
	FailureStores map[string]TiKVFailureStore `json:"failureStores,omitempty"`
	// FailoverUID identifies the current failover round (for failover.recoverByUID).
	// +optional
	FailoverUID types.UID `json:"failoverUID,omitempty"`
	// EvictLeader records leader evictions requested through pod annotations, by pod name.
	// +optional
	EvictLeader map[string]*EvictLeaderStatus `json:"evictLeader,omitempty"`
}

// TiKVStore is one TiKV store as PD reports it.
type TiKVStore struct {
	// ID of the store.
	// +optional
	ID string `json:"id,omitempty"`
	// PodName of the store's pod.
	// +optional
	PodName string `json:"podName,omitempty"`
	// IP is the store's advertised host.
	// +optional
	IP string `json:"ip,omitempty"`
	// LeaderCount is the number of region leaders on the store.
	// +optional
	LeaderCount int32 `json:"leaderCount,omitempty"`
	// State is PD's state name: Up, Disconnected, Down, Offline or Tombstone.
	// +optional
	State string `json:"state,omitempty"`
	// LastTransitionTime is when State last changed; failover timers start here.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// LeaderCountBeforeUpgrade is the leader count recorded before leader eviction.
	// +optional
	LeaderCountBeforeUpgrade *int32 `json:"leaderCountBeforeUpgrade,omitempty"`
}

// TiKVFailureStore records a store that failover acted on.
type TiKVFailureStore struct {
	// PodName of the failed store.
	// +optional
	PodName string `json:"podName,omitempty"`
	// StoreID of the failed store.
	// +optional
	StoreID string `json:"storeID,omitempty"`
	// PVCUIDSet are the UIDs of the store's PVCs.
	// +optional
	PVCUIDSet map[types.UID]EmptyStruct `json:"pvcUIDSet,omitempty"`
	// StoreDeleted is true once the store was deleted from PD.
	// +optional
	StoreDeleted bool `json:"storeDeleted,omitempty"`
	// HostDown is true when the store's node is known to be down.
	// +optional
	HostDown bool `json:"hostDown,omitempty"`
	// CreatedAt is when the failure was recorded.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// EvictLeaderStatus records a leader eviction requested through a pod annotation.
type EvictLeaderStatus struct {
	// PodCreateTime is the creation time of the pod the eviction is for.
	// +optional
	PodCreateTime metav1.Time `json:"podCreateTime,omitempty"`
	// BeginTime is when the eviction began.
	// +optional
	BeginTime metav1.Time `json:"beginTime,omitempty"`
	// Value is the annotation's value (none or delete-pod).
	// +optional
	Value string `json:"value,omitempty"`
}

// TiDBStatus is the observed TiDB component.
type TiDBStatus struct {
	ComponentStatus `json:",inline"`
	// Members are the TiDB servers, by pod name.
	// +optional
	Members map[string]TiDBMember `json:"members,omitempty"`
	// FailureMembers are servers failover has recorded, by pod name.
	// +optional
	FailureMembers map[string]TiDBFailureMember `json:"failureMembers,omitempty"`
	// ResignDDLOwnerRetryCount is kept for compatibility and unused.
	// +optional
	ResignDDLOwnerRetryCount int32 `json:"resignDDLOwnerRetryCount,omitempty"`
	// PasswordInitialized is true once the random root password was set.
	// +optional
	PasswordInitialized *bool `json:"passwordInitialized,omitempty"`
}

// TiDBMember is one TiDB server.
type TiDBMember struct {
	// Name of the member (the pod name).
	// +optional
	Name string `json:"name,omitempty"`
	// Health is true when the status port answered /status.
	// +optional
	Health bool `json:"health,omitempty"`
	// LastTransitionTime is when Health last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// NodeName is the node the pod runs on.
	// +optional
	NodeName string `json:"node,omitempty"`
}

// TiDBFailureMember records a TiDB server that failover replaced.
type TiDBFailureMember struct {
	// PodName of the failed server.
	// +optional
	PodName string `json:"podName,omitempty"`
	// CreatedAt is when the failure was recorded.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// TiCDCStatus is the observed TiCDC component.
type TiCDCStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when the captures answered during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Captures are the TiCDC captures, by pod name.
	// +optional
	Captures map[string]TiCDCCapture `json:"captures,omitempty"`
}

// TiCDCCapture is one TiCDC capture.
type TiCDCCapture struct {
	// PodName of the capture.
	// +optional
	PodName string `json:"podName,omitempty"`
	// ID of the capture.
	// +optional
	ID string `json:"id,omitempty"`
	// Version of the capture.
	// +optional
	Version string `json:"version,omitempty"`
	// IsOwner is true for the owner capture.
	// +optional
	IsOwner bool `json:"isOwner,omitempty"`
	// Ready is true when the capture is ready.
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// PumpStatus is the observed Pump component.
type PumpStatus struct {
	ComponentStatus `json:",inline"`
	// Members are the pumps registered in PD.
	// +optional
	Members []*PumpNodeStatus `json:"members,omitempty"`
}

// PumpNodeStatus is one pump as the binlog registry reports it.
type PumpNodeStatus struct {
	// NodeID of the pump.
	NodeID string `json:"nodeId"`
	// Host is the pump's advertised address.
	Host string `json:"host"`
	// State is online, pausing, paused, closing or offline.
	State string `json:"state"`
}
