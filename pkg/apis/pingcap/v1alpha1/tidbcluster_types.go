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
//
// The name prefixes every object the operator makes for the cluster, so it is
// bounded by the longest of them (the limits and their derivation are in
// validation/names.go, whose test keeps these rules in step with it):
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (at most 63 lower-case letters, digits and '-', starting with a letter), because it begins the names of the cluster's Services",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.pd)) || self.metadata.name.size() <= 49",message="metadata.name must be at most 49 characters with spec.pd, because the StatefulSet <name>-pd may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.tikv)) || self.metadata.name.size() <= 47",message="metadata.name must be at most 47 characters with spec.tikv, because the StatefulSet <name>-tikv may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.tidb)) || self.metadata.name.size() <= 47",message="metadata.name must be at most 47 characters with spec.tidb, because the StatefulSet <name>-tidb may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.tiflash)) || self.metadata.name.size() <= 44",message="metadata.name must be at most 44 characters with spec.tiflash, because the StatefulSet <name>-tiflash may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.ticdc)) || self.metadata.name.size() <= 46",message="metadata.name must be at most 46 characters with spec.ticdc, because the StatefulSet <name>-ticdc may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.pump)) || self.metadata.name.size() <= 47",message="metadata.name must be at most 47 characters with spec.pump, because the StatefulSet <name>-pump may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.tiproxy)) || self.metadata.name.size() <= 44",message="metadata.name must be at most 44 characters with spec.tiproxy, because the StatefulSet <name>-tiproxy may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.pdms) && self.spec.pdms.exists(m, m.name == 'tso')) || self.metadata.name.size() <= 48",message="metadata.name must be at most 48 characters with spec.pdms tso, because the StatefulSet <name>-tso may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.pdms) && self.spec.pdms.exists(m, m.name == 'scheduling')) || self.metadata.name.size() <= 41",message="metadata.name must be at most 41 characters with spec.pdms scheduling, because the StatefulSet <name>-scheduling may have at most 52",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="!(has(self.spec.acrossK8s) && self.spec.acrossK8s) || self.metadata.name.size() <= 53",message="metadata.name must be at most 53 characters with spec.acrossK8s, because the Service <name>-discovery may have at most 63",fieldPath=".metadata"
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

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
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
//
// +kubebuilder:validation:XValidation:rule="has(self.pd) || has(self.cluster) || (has(self.pdAddresses) && size(self.pdAddresses) > 0) || !(has(self.tikv) || has(self.tidb) || has(self.tiflash) || has(self.ticdc) || has(self.pump) || has(self.tiproxy))",message="a PD is required by the other components: set spec.pd, spec.cluster or spec.pdAddresses",fieldPath=".pd",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.pd) || self.pd.replicas > 0 || has(self.cluster) || (has(self.pdAddresses) && size(self.pdAddresses) > 0) || [has(self.tikv) ? self.tikv.replicas : 0, has(self.tidb) ? self.tidb.replicas : 0, has(self.tiflash) ? self.tiflash.replicas : 0, has(self.ticdc) ? self.ticdc.replicas : 0, has(self.pump) ? self.pump.replicas : 0, has(self.tiproxy) ? self.tiproxy.replicas : 0].all(r, r == 0)",message="scaling PD to 0 would strand the other components, which still have replicas and no other PD (spec.cluster or spec.pdAddresses)",fieldPath=".pd.replicas"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.version) || size(oldSelf.version) == 0 || (has(self.version) && size(self.version) > 0)",message="spec.version may not be emptied once set",fieldPath=".version"
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
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.size() < 2 || self[0].name != self[1].name",message="each PD micro-service may be listed once"
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

	// Timezone of every container (TZ); UTC by default. A zone name such as
	// Asia/Shanghai or a POSIX TZ value such as CST-8, without blanks.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([A-Za-z:<][-+A-Za-z0-9_/:.,<>]*)?$`
	Timezone string `json:"timezone,omitempty"`

	// Services is the legacy list of client Service types per component. Deprecated: use <component>.service.
	// +optional
	Services []Service `json:"services,omitempty"`

	// EnableDynamicConfiguration adds --advertise-status-addr to TiKV and TiFlash.
	// +optional
	EnableDynamicConfiguration *bool `json:"enableDynamicConfiguration,omitempty"`

	// ClusterDomain is the Kubernetes cluster domain used in member addresses, a DNS subdomain such as cluster.local.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// AcrossK8s lets the cluster span several Kubernetes clusters.
	// +optional
	AcrossK8s bool `json:"acrossK8s,omitempty"`

	// Cluster is another TidbCluster whose PD this cluster joins (heterogeneous cluster).
	// +optional
	Cluster *TidbClusterRef `json:"cluster,omitempty"`

	// PDAddresses are the client URLs of an external PD cluster to join,
	// such as http://pd.example:2379.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.all(a, a.matches('^https?://[^/?#]+'))",message="must be http:// or https:// URLs with a host, such as http://pd.example:2379"
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
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer;ExternalName
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
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
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
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
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
