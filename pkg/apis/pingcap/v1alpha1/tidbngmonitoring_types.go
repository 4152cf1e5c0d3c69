package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TidbNGMonitoring runs ng-monitoring (continuous profiling and Top SQL) for
// one TidbCluster in the StatefulSet <name>-ng-monitoring, behind the Service
// of the same name on port 12020.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tngm,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.ngMonitoring.phase`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TidbNGMonitoring struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired ng-monitoring.
	Spec TidbNGMonitoringSpec `json:"spec"`

	// Status is the most recently observed state, written only by the operator.
	// +optional
	Status TidbNGMonitoringStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// TidbNGMonitoringList is a list of TidbNGMonitorings.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type TidbNGMonitoringList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TidbNGMonitorings.
	Items []TidbNGMonitoring `json:"items"`
}

// TidbNGMonitoringSpec is the desired ng-monitoring. The pod fields at this
// level are inherited by spec.ngMonitoring unless it sets its own, as a
// TidbCluster's are by its components.
type TidbNGMonitoringSpec struct {
	ComponentSpec `json:",inline"`

	// Clusters is the TidbCluster monitored; v1.6 reads only the first.
	// +kubebuilder:validation:MinItems=1
	Clusters []TidbClusterRef `json:"clusters"`

	// Paused stops writes to the ng-monitoring's objects; status keeps syncing.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// PVReclaimPolicy of the PersistentVolumes; Retain by default.
	// +optional
	// +kubebuilder:validation:Enum=Retain;Delete;Recycle
	PVReclaimPolicy *corev1.PersistentVolumeReclaimPolicy `json:"pvReclaimPolicy,omitempty"`

	// ClusterDomain is the Kubernetes cluster domain used in addresses, such as cluster.local.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// NGMonitoring is the ng-monitoring component.
	NGMonitoring NGMonitoringSpec `json:"ngMonitoring"`

	// PreferIPv6 binds and advertises IPv6 addresses.
	// +optional
	PreferIPv6 bool `json:"preferIPv6,omitempty"`
}

// NGMonitoringSpec is the ng-monitoring component: pod fields, resources
// (requests.storage sizes the data volume), image and configuration.
type NGMonitoringSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// BaseImage is the image without tag, pingcap/ng-monitoring by default; the tag is the version.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// StorageClassName of the data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// RetentionPeriod is how long profiles and Top SQL data are kept, such as 5d.
	// +optional
	RetentionPeriod string `json:"retentionPeriod,omitempty"`

	// Config is ng-monitoring's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`
}

// TidbNGMonitoringStatus is the observed state. ngMonitoring is v1.6's;
// conditions and observedGeneration are ours.
type TidbNGMonitoringStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready and the reasons it is not (meta/v1 Condition list).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NGMonitoring is the status of the ng-monitoring StatefulSet.
	// +optional
	NGMonitoring NGMonitoringStatus `json:"ngMonitoring,omitempty"`
}

// NGMonitoringStatus is the status of the ng-monitoring component.
type NGMonitoringStatus struct {
	// Synced is true when the last sync wrote everything the spec asks for.
	// +optional
	Synced bool `json:"synced,omitempty"`

	// Phase is Normal, Upgrade, Scale or Suspend.
	// +optional
	Phase MemberPhase `json:"phase,omitempty"`

	// StatefulSet is a copy of the ng-monitoring StatefulSet's status (apps/v1 StatefulSetStatus).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	StatefulSet *appsv1.StatefulSetStatus `json:"statefulSet,omitempty"`
}
