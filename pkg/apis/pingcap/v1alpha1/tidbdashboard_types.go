package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TidbDashboard runs TiDB Dashboard for one TidbCluster in the StatefulSet
// <name>-tidb-dashboard, exposed by the Service <name>-tidb-dashboard-exposed
// on port 12333.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=td,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TidbDashboard struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired dashboard.
	Spec TidbDashboardSpec `json:"spec"`

	// Status is the most recently observed state, written only by the operator.
	// +optional
	Status TidbDashboardStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// TidbDashboardList is a list of TidbDashboards.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type TidbDashboardList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TidbDashboards.
	Items []TidbDashboard `json:"items"`
}

// TidbDashboardSpec is the desired dashboard: the pod fields of a TidbCluster
// component, its resources (requests.storage sizes the data volume), and the
// cluster it serves.
type TidbDashboardSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// Clusters is the TidbCluster the dashboard serves; v1.6 reads only the first.
	// +kubebuilder:validation:MinItems=1
	Clusters []TidbClusterRef `json:"clusters"`

	// PVReclaimPolicy of the dashboard's PersistentVolumes; Retain by default.
	// +optional
	// +kubebuilder:validation:Enum=Retain;Delete;Recycle
	PVReclaimPolicy *corev1.PersistentVolumeReclaimPolicy `json:"pvReclaimPolicy,omitempty"`

	// BaseImage is the image without tag, pingcap/tidb-dashboard by default; the tag is the version.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// StorageClassName of the data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// Service configures <name>-tidb-dashboard-exposed.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`

	// Telemetry turns TiDB Dashboard's telemetry on.
	// +optional
	Telemetry *bool `json:"telemetry,omitempty"`

	// Experimental turns TiDB Dashboard's experimental features on.
	// +optional
	Experimental *bool `json:"experimental,omitempty"`

	// PathPrefix is the URL path the dashboard is served under.
	// +optional
	PathPrefix *string `json:"pathPrefix,omitempty"`

	// DisableKeyVisualizer turns the Key Visualizer off.
	// +optional
	DisableKeyVisualizer *bool `json:"disableKeyVisualizer,omitempty"`

	// ListenOnLocalhostOnly makes the dashboard listen on 127.0.0.1 only.
	// +optional
	ListenOnLocalhostOnly *bool `json:"listenOnLocalhostOnly,omitempty"`

	// PreferIPv6 binds and advertises IPv6 addresses.
	// +optional
	PreferIPv6 bool `json:"preferIPv6,omitempty"`
}

// TidbDashboardStatus is the dashboard's observed state. synced, phase and
// statefulSet are v1.6's; conditions and observedGeneration are ours.
type TidbDashboardStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready and the reasons it is not (meta/v1 Condition list).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Synced is true when the last sync wrote everything the spec asks for.
	// +optional
	Synced bool `json:"synced,omitempty"`

	// Phase is Normal, Upgrade, Scale or Suspend.
	// +optional
	Phase MemberPhase `json:"phase,omitempty"`

	// StatefulSet is a copy of the dashboard StatefulSet's status (apps/v1 StatefulSetStatus).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	StatefulSet *appsv1.StatefulSetStatus `json:"statefulSet,omitempty"`
}
