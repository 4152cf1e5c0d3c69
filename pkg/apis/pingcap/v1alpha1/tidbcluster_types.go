package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TidbCluster is a TiDB cluster: PD, TiKV, TiDB and the optional TiFlash,
// TiCDC and Pump components, reconciled into Services, ConfigMaps and
// StatefulSets. Unlike the TiDB Operator, status is a subresource.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tc,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="PD",type=integer,JSONPath=`.status.pd.statefulSet.readyReplicas`,description="Ready PD pods"
// +kubebuilder:printcolumn:name="PD-Desired",type=integer,JSONPath=`.spec.pd.replicas`,description="Desired PD pods"
// +kubebuilder:printcolumn:name="TiKV",type=integer,JSONPath=`.status.tikv.statefulSet.readyReplicas`,description="Ready TiKV pods"
// +kubebuilder:printcolumn:name="TiKV-Desired",type=integer,JSONPath=`.spec.tikv.replicas`,description="Desired TiKV pods"
// +kubebuilder:printcolumn:name="TiDB",type=integer,JSONPath=`.status.tidb.statefulSet.readyReplicas`,description="Ready TiDB pods"
// +kubebuilder:printcolumn:name="TiDB-Desired",type=integer,JSONPath=`.spec.tidb.replicas`,description="Desired TiDB pods"
// +kubebuilder:printcolumn:name="PD-Image",type=string,JSONPath=`.status.pd.image`,priority=1
// +kubebuilder:printcolumn:name="TiKV-Image",type=string,JSONPath=`.status.tikv.image`,priority=1
// +kubebuilder:printcolumn:name="TiDB-Image",type=string,JSONPath=`.status.tidb.image`,priority=1
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TidbCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired cluster.
	Spec TidbClusterSpec `json:"spec"`

	// Status is the most recently observed state, written only by the operator.
	// +optional
	Status TidbClusterStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`
}

// TidbClusterList is a list of TidbClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type TidbClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TidbClusters.
	Items []TidbCluster `json:"items"`
}

// TidbClusterSpec is the desired state of a TiDB cluster. Cluster-level pod
// fields are inherited by every component unless the component sets its own.
type TidbClusterSpec struct {
	// Discovery configures the per-cluster discovery Deployment that bootstraps PD.
	// +optional
	Discovery DiscoverySpec `json:"discovery,omitempty"`

	// ServiceAccount of every pod unless a component sets its own.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Version is the image tag of every component, such as v8.5.0; components may override it.
	// +optional
	Version string `json:"version,omitempty"`

	// PD is the placement driver; required unless the cluster joins another's PD.
	// +optional
	PD *PDSpec `json:"pd,omitempty"`

	// PDMS are PD micro-services (tso, scheduling) used when pd.mode is "ms".
	// +optional
	PDMS []*PDMSSpec `json:"pdms,omitempty"`

	// TiDB is the SQL layer.
	// +optional
	TiDB *TiDBSpec `json:"tidb,omitempty"`

	// TiKV is the row store.
	// +optional
	TiKV *TiKVSpec `json:"tikv,omitempty"`

	// TiFlash is the columnar store.
	// +optional
	TiFlash *TiFlashSpec `json:"tiflash,omitempty"`

	// TiCDC is the change-data-capture component.
	// +optional
	TiCDC *TiCDCSpec `json:"ticdc,omitempty"`

	// TiProxy is the SQL proxy.
	// +optional
	TiProxy *TiProxySpec `json:"tiproxy,omitempty"`

	// Pump is the TiDB Binlog pump.
	// +optional
	Pump *PumpSpec `json:"pump,omitempty"`

	// Helper configures the helper image used by log-tailer and init containers.
	// +optional
	Helper *HelperSpec `json:"helper,omitempty"`

	// Paused stops writes to the cluster's Services, ConfigMaps and StatefulSets; status keeps syncing.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// RecoveryMode marks a cluster being restored from volume snapshots.
	// +optional
	RecoveryMode bool `json:"recoveryMode,omitempty"`

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

	// ConfigUpdateStrategy of every component unless overridden; unset means InPlace.
	// +optional
	ConfigUpdateStrategy ConfigUpdateStrategy `json:"configUpdateStrategy,omitempty"`

	// EnablePVReclaim deletes the PVCs of scaled-in members once their pods are gone.
	// +optional
	EnablePVReclaim *bool `json:"enablePVReclaim,omitempty"`

	// EnablePVCReplace allows replacing PVCs whose template changed.
	// +optional
	EnablePVCReplace *bool `json:"enablePVCReplace,omitempty"`

	// TLSCluster enables mutual TLS between the cluster's components.
	// +optional
	TLSCluster *TLSCluster `json:"tlsCluster,omitempty"`

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
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels of every pod; merged with the component's.
	// +optional
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
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// Timezone of every container (TZ); UTC by default.
	// +optional
	Timezone string `json:"timezone,omitempty"`

	// Services is the legacy list of client Service types per component. Deprecated: use <component>.service.
	// +optional
	Services []Service `json:"services,omitempty"`

	// EnableDynamicConfiguration adds --advertise-status-addr to TiKV and TiFlash.
	// +optional
	EnableDynamicConfiguration *bool `json:"enableDynamicConfiguration,omitempty"`

	// ClusterDomain is the Kubernetes cluster domain used in member addresses.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// AcrossK8s lets the cluster span several Kubernetes clusters.
	// +optional
	AcrossK8s bool `json:"acrossK8s,omitempty"`

	// Cluster is another TidbCluster whose PD this cluster joins (heterogeneous cluster).
	// +optional
	Cluster *TidbClusterRef `json:"cluster,omitempty"`

	// PDAddresses are the client URLs of an external PD cluster to join.
	// +optional
	PDAddresses []string `json:"pdAddresses,omitempty"`

	// StatefulSetUpdateStrategy of every component unless overridden.
	// +optional
	// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
	StatefulSetUpdateStrategy appsv1.StatefulSetUpdateStrategyType `json:"statefulSetUpdateStrategy,omitempty"`

	// PodManagementPolicy of every StatefulSet unless overridden; Parallel by default.
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

	// StartScriptVersion selects the start-script generation: v1 (default) or v2.
	// +optional
	// +kubebuilder:validation:Enum="";v1;v2
	StartScriptVersion StartScriptVersion `json:"startScriptVersion,omitempty"`

	// StartScriptV2FeatureFlags tunes the v2 start scripts.
	// +optional
	StartScriptV2FeatureFlags []StartScriptV2FeatureFlag `json:"startScriptV2FeatureFlags,omitempty"`

	// SuspendAction suspends every component unless overridden.
	// +optional
	SuspendAction *SuspendAction `json:"suspendAction,omitempty"`

	// PreferIPv6 binds and advertises IPv6 addresses.
	// +optional
	PreferIPv6 bool `json:"preferIPv6,omitempty"`
}

// StartScriptVersion names a start-script generation.
type StartScriptVersion string

// StartScriptV2FeatureFlag tunes the v2 start scripts.
// +kubebuilder:validation:Enum=WaitForDnsNameIpMatch;PreferPDAddressesOverDiscovery;BashShebang;NoWaitDNS
type StartScriptV2FeatureFlag string

// Service is an entry of the legacy spec.services list.
type Service struct {
	// Name of the component, such as pd or tidb.
	// +optional
	Name string `json:"name,omitempty"`
	// Type of its client Service.
	// +optional
	Type string `json:"type,omitempty"`
}

// TidbClusterRef names another TidbCluster.
type TidbClusterRef struct {
	// Namespace of the referenced cluster; the same namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the referenced cluster.
	Name string `json:"name"`
	// ClusterDomain of the Kubernetes cluster the referenced cluster runs in.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`
}

// TLSCluster configures mutual TLS between components.
type TLSCluster struct {
	// Enabled turns on TLS between PD, TiKV, TiDB and the other components; the
	// certificates come from Secrets named <cluster>-<component>-cluster-secret.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// EnableDiscoveryMTLS also protects the discovery service with mutual TLS.
	// +optional
	EnableDiscoveryMTLS bool `json:"enableDiscoveryMTLS,omitempty"`
}

// HelperSpec configures the helper image.
type HelperSpec struct {
	// Image of the helper; busybox:1.26.2 by default.
	// +optional
	Image *string `json:"image,omitempty"`
	// ImagePullPolicy of helper containers.
	// +optional
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// DiscoverySpec configures the discovery Deployment.
type DiscoverySpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// LivenessProbe selects the liveness probe of the discovery container.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`
}
