package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DMCluster runs TiDB Data Migration: dm-master members (StatefulSet
// <dc>-dm-master) and dm-workers (StatefulSet <dc>-dm-worker), bootstrapped
// through the discovery Deployment <dc>-dm-discovery.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=dc,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Master",type=string,JSONPath=`.status.master.image`,description="The image for dm-master cluster"
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.master.storageSize`,description="The storage size specified for dm-master node"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.master.statefulSet.readyReplicas`,description="The ready replicas number of dm-master cluster"
// +kubebuilder:printcolumn:name="Desire",type=integer,JSONPath=`.spec.master.replicas`,description="The desired replicas number of dm-master cluster"
// +kubebuilder:printcolumn:name="Worker",type=string,JSONPath=`.status.worker.image`,description="The image for dm-master cluster"
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.worker.storageSize`,description="The storage size specified for dm-worker node"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.worker.statefulSet.readyReplicas`,description="The ready replicas number of dm-worker cluster"
// +kubebuilder:printcolumn:name="Desire",type=integer,JSONPath=`.spec.worker.replicas`,description="The desired replicas number of dm-worker cluster"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DMCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired DM cluster.
	Spec DMClusterSpec `json:"spec"`

	// Status is the most recently observed state, written only by the operator.
	// +optional
	Status DMClusterStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// DMClusterList is a list of DMClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type DMClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DMClusters.
	Items []DMCluster `json:"items"`
}

// DMClusterSpec is the desired DM cluster: its discovery, dm-master and
// dm-worker, and the pod fields every one of them inherits.
type DMClusterSpec struct {
	// Discovery configures the discovery Deployment <dc>-dm-discovery.
	// +optional
	Discovery DMDiscoverySpec `json:"discovery,omitempty"`

	// Master is the dm-master component.
	Master MasterSpec `json:"master"`

	// Worker is the dm-worker component; without it no worker runs.
	// +optional
	Worker *WorkerSpec `json:"worker,omitempty"`

	// Paused stops writes to the cluster's Services, ConfigMaps and StatefulSets; dm-master status keeps syncing.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Version is the image tag of dm-master and dm-worker, v2 or later (such as v8.5.0); components may override it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.matches('^v?[01][.][0-9]+[.][0-9]+')",message="dm cluster version can't set to v1.x.y"
	Version string `json:"version,omitempty"`

	// SchedulerName of every pod unless a component overrides it.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// PVReclaimPolicy set on the PersistentVolumes of the cluster; Retain by default.
	// +optional
	// +kubebuilder:validation:Enum=Retain;Delete;Recycle
	PVReclaimPolicy *corev1.PersistentVolumeReclaimPolicy `json:"pvReclaimPolicy,omitempty"`

	// ImagePullPolicy of every container unless a component overrides it; IfNotPresent by default.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets of every pod unless a component sets its own.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// ConfigUpdateStrategy of both components unless overridden; unset means InPlace.
	// +optional
	ConfigUpdateStrategy ConfigUpdateStrategy `json:"configUpdateStrategy,omitempty"`

	// EnablePVReclaim deletes the PVCs of scaled-in members once their pods are gone.
	// +optional
	EnablePVReclaim *bool `json:"enablePVReclaim,omitempty"`

	// TLSCluster enables mutual TLS between dm-master and dm-worker.
	// +optional
	TLSCluster *TLSCluster `json:"tlsCluster,omitempty"`

	// TLSClientSecretNames are Secrets with client certificates for the
	// source and target databases, mounted at /var/lib/source-tls/<name>.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:items:MaxLength=253
	TLSClientSecretNames []string `json:"tlsClientSecretNames,omitempty"`

	// HostNetwork of every pod unless overridden.
	// +optional
	HostNetwork *bool `json:"hostNetwork,omitempty"`

	// Affinity of every pod unless overridden (core/v1 Affinity, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PriorityClassName of every pod unless overridden.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	// NodeSelector of every pod; merged with the component's.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Annotations of every pod; merged with the component's.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be annotation keys ([prefix/]name, the name at most 63 characters)"
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels of every pod; merged with the component's.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be label keys ([prefix/]name, the name at most 63 characters)"
	Labels map[string]string `json:"labels,omitempty"`

	// Tolerations of every pod unless a component sets its own.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// DNSConfig of every pod unless overridden.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`

	// DNSPolicy of every pod unless overridden.
	// +optional
	// +kubebuilder:validation:Enum=ClusterFirstWithHostNet;ClusterFirst;Default;None
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// Timezone of every container (TZ); UTC by default.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([A-Za-z:<][-+A-Za-z0-9_/:.,<>]*)?$`
	Timezone string `json:"timezone,omitempty"`

	// StatefulSetUpdateStrategy of both components unless overridden.
	// +optional
	// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
	StatefulSetUpdateStrategy appsv1.StatefulSetUpdateStrategyType `json:"statefulSetUpdateStrategy,omitempty"`

	// PodManagementPolicy of both StatefulSets unless overridden; Parallel by default.
	// +optional
	// +kubebuilder:validation:Enum=Parallel;OrderedReady
	PodManagementPolicy appsv1.PodManagementPolicyType `json:"podManagementPolicy,omitempty"`

	// PodSecurityContext of every pod unless overridden.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// TopologySpreadConstraints of every pod unless overridden.
	// +optional
	// +listType=map
	// +listMapKey=topologyKey
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// SuspendAction suspends both components unless overridden.
	// +optional
	SuspendAction *SuspendAction `json:"suspendAction,omitempty"`

	// PreferIPv6 binds and advertises IPv6 addresses.
	// +optional
	PreferIPv6 bool `json:"preferIPv6,omitempty"`
}

// DMDiscoverySpec configures the DM cluster's discovery Deployment.
type DMDiscoverySpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// LivenessProbe selects the liveness probe of the discovery container (tcp only).
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`

	// Address is a discovery address outside the cluster. Deprecated: unused.
	// +optional
	Address string `json:"address,omitempty"`
}

// MasterSpec is the desired dm-master component.
type MasterSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// Replicas is the number of dm-master members; odd numbers keep quorum cheapest.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag; pingcap/dm by default; the tag is the version.
	// +optional
	// +kubebuilder:default="pingcap/dm"
	BaseImage string `json:"baseImage,omitempty"`

	// Service configures the client Service <dc>-dm-master.
	// +optional
	Service *MasterServiceSpec `json:"service,omitempty"`

	// MaxFailoverCount caps the members failover may replace; 3 by default, 0 disables failover.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// StorageClassName of the data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName of the data volume's new PVCs.
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// StorageSize of the data volume, a quantity such as 10Gi (the default).
	// +optional
	// +kubebuilder:validation:Pattern=`^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))))?$`
	StorageSize string `json:"storageSize,omitempty"`

	// DataSubDir is a sub-directory of the data volume used as data directory.
	// +optional
	DataSubDir string `json:"dataSubDir,omitempty"`

	// Config is dm-master's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// StartUpScriptVersion "v1" makes the start script resolve DNS with dig instead of nslookup.
	// +optional
	// +kubebuilder:validation:Enum="";v1
	StartUpScriptVersion string `json:"startUpScriptVersion,omitempty"`
}

// MasterServiceSpec configures the dm-master client Service.
type MasterServiceSpec struct {
	ServiceSpec `json:",inline"`

	// ExternalTrafficPolicy of a NodePort or LoadBalancer Service.
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// MasterNodePort is the node port of a NodePort or LoadBalancer Service.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	MasterNodePort *int `json:"masterNodePort,omitempty"`
}

// WorkerSpec is the desired dm-worker component.
type WorkerSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// Replicas is the number of dm-workers.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag; pingcap/dm by default; the tag is the version.
	// +optional
	// +kubebuilder:default="pingcap/dm"
	BaseImage string `json:"baseImage,omitempty"`

	// MaxFailoverCount caps the extra workers failover may add; 3 by default, 0 disables failover.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// StorageClassName of the data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName of the data volume's new PVCs.
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// StorageSize of the data volume, a quantity such as 10Gi (the default).
	// +optional
	// +kubebuilder:validation:Pattern=`^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))))?$`
	StorageSize string `json:"storageSize,omitempty"`

	// DataSubDir is a sub-directory of the data volume (mounted, not passed to dm-worker, as in v1.6).
	// +optional
	DataSubDir string `json:"dataSubDir,omitempty"`

	// Config is dm-worker's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// RecoverFailover removes the extra workers failover added once every desired worker is up again.
	// +optional
	RecoverFailover bool `json:"recoverFailover,omitempty"`

	// Failover recovers one failover by its UID.
	// +optional
	Failover *Failover `json:"failover,omitempty"`
}

// DMClusterStatus is the observed DM cluster.
type DMClusterStatus struct {
	// Master is the observed dm-master component.
	// +optional
	Master MasterStatus `json:"master,omitempty"`
	// Worker is the observed dm-worker component.
	// +optional
	Worker WorkerStatus `json:"worker,omitempty"`
	// Conditions of the cluster: Ready.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MasterStatus is the observed dm-master component.
type MasterStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when dm-master's API answered during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Members are the dm-master members, by name (the pod name).
	// +optional
	Members map[string]MasterMember `json:"members,omitempty"`
	// Leader is the dm-master leader.
	// +optional
	Leader MasterMember `json:"leader,omitempty"`
	// FailureMembers are members failover has recorded, by pod name.
	// +optional
	FailureMembers map[string]MasterFailureMember `json:"failureMembers,omitempty"`
	// UnjoinedMembers are pods that are not dm-master members, by pod name.
	// +optional
	UnjoinedMembers map[string]UnjoinedMember `json:"unjoinedMembers,omitempty"`
}

// MasterMember is one dm-master member.
type MasterMember struct {
	// Name of the member (the pod name).
	// +optional
	Name string `json:"name,omitempty"`
	// ID is the member ID, in decimal.
	// +optional
	ID string `json:"id,omitempty"`
	// ClientURL is the member's first advertised client URL.
	// +optional
	ClientURL string `json:"clientURL,omitempty"`
	// Health is dm-master's "alive" for the member.
	// +optional
	Health bool `json:"health"`
	// LastTransitionTime is when Health last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// MasterFailureMember is a dm-master member failover recorded.
type MasterFailureMember struct {
	// PodName of the failed member.
	// +optional
	PodName string `json:"podName,omitempty"`
	// MemberID of the failed member.
	// +optional
	MemberID string `json:"memberID,omitempty"`
	// PVCUID is the UID of the data PVC deleted with the member.
	// +optional
	PVCUID types.UID `json:"pvcUID,omitempty"`
	// MemberDeleted is true once the member was removed from dm-master.
	// +optional
	MemberDeleted bool `json:"memberDeleted,omitempty"`
	// CreatedAt is when the failure was recorded.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// WorkerStatus is the observed dm-worker component.
type WorkerStatus struct {
	ComponentStatus `json:",inline"`
	// Synced is true when dm-master listed the workers during the last sync.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// Members are the registered dm-workers, by name (the pod name).
	// +optional
	Members map[string]WorkerMember `json:"members,omitempty"`
	// FailureMembers are workers failover has recorded, by pod name.
	// +optional
	FailureMembers map[string]WorkerFailureMember `json:"failureMembers,omitempty"`
	// FailoverUID identifies the current failover, for spec.worker.failover.recoverByUID.
	// +optional
	FailoverUID types.UID `json:"failoverUID,omitempty"`
}

// WorkerMember is one registered dm-worker.
type WorkerMember struct {
	// Name of the worker (the pod name).
	// +optional
	Name string `json:"name,omitempty"`
	// Addr is the worker's advertised address.
	// +optional
	Addr string `json:"addr,omitempty"`
	// Stage is free, bound or offline.
	// +optional
	Stage string `json:"stage"`
	// LastTransitionTime is when Stage last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// WorkerFailureMember is a dm-worker failover recorded.
type WorkerFailureMember struct {
	// PodName of the failed worker.
	// +optional
	PodName string `json:"podName,omitempty"`
	// CreatedAt is when the failure was recorded.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
}

// The stages dm-master reports for a worker.
const (
	// DMWorkerStateFree is a worker bound to no source.
	DMWorkerStateFree = "free"
	// DMWorkerStateBound is a worker replicating a source.
	DMWorkerStateBound = "bound"
	// DMWorkerStateOffline is a worker dm-master lost.
	DMWorkerStateOffline = "offline"
)
