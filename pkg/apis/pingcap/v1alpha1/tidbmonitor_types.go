package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TidbMonitor monitors TidbClusters (and DMClusters) with Prometheus and
// Grafana in the StatefulSet <name>-monitor, behind the Services
// <name>-prometheus, <name>-grafana and <name>-monitor-reloader. Unlike the
// TiDB Operator, status is a subresource.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tm,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`,description="Desired Prometheus replicas per shard"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TidbMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired monitor.
	Spec TidbMonitorSpec `json:"spec"`

	// Status is the most recently observed state, written only by the operator.
	// +optional
	Status TidbMonitorStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// TidbMonitorList is a list of TidbMonitors.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type TidbMonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TidbMonitors.
	Items []TidbMonitor `json:"items"`
}

// TidbMonitorSpec is the desired monitor: which clusters, and the Prometheus,
// Grafana, reloader, initializer and Thanos containers of its pods.
type TidbMonitorSpec struct {
	// Clusters are the TidbClusters scraped.
	// +optional
	Clusters []TidbClusterRef `json:"clusters,omitempty"`

	// Prometheus is the Prometheus container and its Service.
	Prometheus PrometheusSpec `json:"prometheus"`

	// Grafana is the Grafana container; no Grafana when unset.
	// +optional
	Grafana *GrafanaSpec `json:"grafana,omitempty"`

	// Reloader is the container that reloads Prometheus on rule changes.
	// +optional
	Reloader ReloaderSpec `json:"reloader,omitempty"`

	// Initializer is the init container that renders dashboards and rules.
	// +optional
	Initializer InitializerSpec `json:"initializer,omitempty"`

	// DM monitors DMClusters too.
	// +optional
	DM *DMMonitorSpec `json:"dm,omitempty"`

	// Thanos is a Thanos sidecar next to Prometheus.
	// +optional
	Thanos *ThanosSpec `json:"thanos,omitempty"`

	// PrometheusReloader is the container that reloads Prometheus on config changes.
	// +optional
	PrometheusReloader *PrometheusReloaderSpec `json:"prometheusReloader,omitempty"`

	// PVReclaimPolicy of the monitor's PersistentVolumes; Retain by default.
	// +optional
	// +kubebuilder:validation:Enum=Retain;Delete;Recycle
	PVReclaimPolicy *corev1.PersistentVolumeReclaimPolicy `json:"pvReclaimPolicy,omitempty"`

	// ImagePullPolicy of every container unless the container sets its own.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets of the monitor's pods.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Persistent keeps the monitor's data on a PVC instead of an emptyDir.
	// +optional
	Persistent bool `json:"persistent,omitempty"`

	// StorageClassName of the data PVC.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// Storage is the size of the data PVC, such as 10Gi.
	// +optional
	Storage string `json:"storage,omitempty"`

	// NodeSelector of the monitor's pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Annotations of the monitor's pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels of the monitor's pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Tolerations of the monitor's pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// PodSecurityContext of the monitor's pods (a core/v1 PodSecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// KubePrometheusURL is a Prometheus that also receives the clusters' metrics.
	// +optional
	KubePrometheusURL *string `json:"kubePrometheusURL,omitempty"`

	// AlertmanagerURL is where Prometheus sends alerts.
	// +optional
	AlertmanagerURL *string `json:"alertmanagerURL,omitempty"`

	// AlertManagerRulesVersion is the TiDB version whose alert rules are loaded.
	// +optional
	AlertManagerRulesVersion *string `json:"alertManagerRulesVersion,omitempty"`

	// AdditionalContainers are added to the monitor's pods (core/v1 Container list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalContainers []corev1.Container `json:"additionalContainers,omitempty"`

	// AdditionalVolumes are added to the monitor's pods (core/v1 Volume list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumes []corev1.Volume `json:"additionalVolumes,omitempty"`

	// ClusterScoped lets the monitor scrape clusters in every namespace (a ClusterRole instead of a Role).
	// +optional
	ClusterScoped bool `json:"clusterScoped,omitempty"`

	// ExternalLabels are added to every series and alert Prometheus sends out.
	// +optional
	ExternalLabels map[string]string `json:"externalLabels,omitempty"`

	// ReplicaExternalLabelName is the external label naming the Prometheus replica; prometheus_replica by default.
	// +optional
	ReplicaExternalLabelName *string `json:"replicaExternalLabelName,omitempty"`

	// Replicas is the number of Prometheus replicas of each shard; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Shards splits the scrape targets over this many StatefulSets; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Shards *int32 `json:"shards,omitempty"`

	// Timezone (TZ) of the monitor's containers; UTC by default.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Timezone string `json:"timezone,omitempty"`

	// EnableAlertRules loads the alert rules into Prometheus.
	// +optional
	EnableAlertRules bool `json:"enableAlertRules,omitempty"`

	// PreferIPv6 binds and advertises IPv6 addresses.
	// +optional
	PreferIPv6 bool `json:"preferIPv6,omitempty"`

	// AutomountServiceAccountToken of the monitor's pods; the Kubernetes default (true) when unset.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
}

// MonitorContainer is the image and resources of one container of the monitor.
type MonitorContainer struct {
	corev1.ResourceRequirements `json:",inline"`

	// BaseImage is the image without tag, such as prom/prometheus.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Version is the image tag.
	// +optional
	Version string `json:"version,omitempty"`

	// ImagePullPolicy of the container; inherits spec.imagePullPolicy.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// SecurityContext of the container (a core/v1 SecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// PrometheusSpec is the Prometheus container, its Service and configuration.
type PrometheusSpec struct {
	MonitorContainer `json:",inline"`

	// LogLevel of Prometheus.
	// +optional
	LogLevel string `json:"logLevel,omitempty"`

	// Service configures <name>-prometheus.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`

	// ReserveDays is how long data is kept, in days. Deprecated: use retentionTime.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReserveDays int `json:"reserveDays,omitempty"`

	// RetentionTime is how long data is kept, such as 15d; it wins over reserveDays.
	// +optional
	RetentionTime *string `json:"retentionTime,omitempty"`

	// Ingress exposes Prometheus.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`

	// Config replaces or extends the generated Prometheus configuration.
	// +optional
	Config *PrometheusConfiguration `json:"config,omitempty"`

	// DisableCompaction turns off Prometheus' local compaction (for Thanos uploads).
	// +optional
	DisableCompaction bool `json:"disableCompaction,omitempty"`

	// RemoteWrite sends samples to remote storage.
	// +optional
	RemoteWrite []*RemoteWriteSpec `json:"remoteWrite,omitempty"`

	// AdditionalVolumeMounts are added to the container (core/v1 VolumeMount list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`
}

// GrafanaSpec is the Grafana container, its Service and credentials.
type GrafanaSpec struct {
	MonitorContainer `json:",inline"`

	// Service configures <name>-grafana.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`

	// Ingress exposes Grafana.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`

	// Username of Grafana's admin. Deprecated: use usernameSecret.
	// +optional
	Username string `json:"username,omitempty"`

	// Password of Grafana's admin. Deprecated: use passwordSecret.
	// +optional
	Password string `json:"password,omitempty"`

	// UsernameSecret is the Secret key holding the admin's user name.
	// +optional
	UsernameSecret *corev1.SecretKeySelector `json:"usernameSecret,omitempty"`

	// PasswordSecret is the Secret key holding the admin's password.
	// +optional
	PasswordSecret *corev1.SecretKeySelector `json:"passwordSecret,omitempty"`

	// Envs are extra environment variables of the container.
	// +optional
	Envs map[string]string `json:"envs,omitempty"`

	// LogLevel of Grafana.
	// +optional
	LogLevel string `json:"logLevel,omitempty"`

	// AdditionalVolumeMounts are added to the container (core/v1 VolumeMount list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`
}

// ReloaderSpec is the rules reloader container and its Service.
type ReloaderSpec struct {
	MonitorContainer `json:",inline"`

	// Service configures <name>-monitor-reloader.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`
}

// PrometheusReloaderSpec is the Prometheus config reloader container.
type PrometheusReloaderSpec struct {
	MonitorContainer `json:",inline"`
}

// InitializerSpec is the init container that renders dashboards and rules.
type InitializerSpec struct {
	MonitorContainer `json:",inline"`

	// Envs are extra environment variables of the container.
	// +optional
	Envs map[string]string `json:"envs,omitempty"`
}

// DMMonitorSpec monitors DMClusters.
type DMMonitorSpec struct {
	// Clusters are the DMClusters scraped.
	Clusters []ClusterRef `json:"clusters"`

	// Initializer renders the DM dashboards and rules.
	// +optional
	Initializer InitializerSpec `json:"initializer,omitempty"`
}

// ClusterRef names a cluster of another kind, such as a DMCluster.
type ClusterRef struct {
	// Namespace of the cluster; the monitor's namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the cluster.
	Name string `json:"name"`
	// ClusterDomain of the Kubernetes cluster the cluster runs in.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`
}

// IngressSpec exposes a monitor Service through an Ingress.
type IngressSpec struct {
	// Hosts served by the Ingress.
	Hosts []string `json:"hosts"`
	// Annotations of the Ingress.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// TLS of the Ingress.
	// +optional
	TLS []networkingv1.IngressTLS `json:"tls,omitempty"`
}

// PrometheusConfiguration replaces or extends the generated Prometheus configuration.
type PrometheusConfiguration struct {
	// ConfigMapRef is a ConfigMap whose prometheus-config key replaces the generated configuration.
	// +optional
	ConfigMapRef *ConfigMapRef `json:"configMapRef,omitempty"`
	// CommandOptions are extra Prometheus command-line options.
	// +optional
	CommandOptions []string `json:"commandOptions,omitempty"`
	// RuleConfigRef is a ConfigMap of extra alert rules.
	// +optional
	RuleConfigRef *ConfigMapRef `json:"ruleConfigRef,omitempty"`
}

// ConfigMapRef names a ConfigMap.
type ConfigMapRef struct {
	// Name of the ConfigMap.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the ConfigMap; the monitor's namespace when unset.
	// +optional
	Namespace *string `json:"namespace,omitempty"`
}

// TidbMonitorStatus is the monitor's observed state. v1.6 has only
// deploymentStorageStatus; conditions and observedGeneration are ours, so a
// TidbMonitor reports readiness like a TidbCluster.
type TidbMonitorStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready and the reasons it is not (meta/v1 Condition list).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DeploymentStorageStatus is the PV of the data PVC.
	// +optional
	DeploymentStorageStatus *DeploymentStorageStatus `json:"deploymentStorageStatus,omitempty"`
}

// DeploymentStorageStatus names the PersistentVolume of the monitor's data.
type DeploymentStorageStatus struct {
	// PvName is the name of the PersistentVolume.
	// +optional
	PvName string `json:"pvName,omitempty"`
}
