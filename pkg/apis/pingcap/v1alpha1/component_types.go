package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ComponentSpec holds the pod-level fields every component shares. A field
// left unset inherits the cluster-level value of the same name (see
// TidbClusterSpec): scalars are overridden by the component, the maps
// nodeSelector, labels and annotations are merged with the component winning,
// and the lists tolerations and imagePullSecrets are replaced when non-empty.
type ComponentSpec struct {
	// Image is the full image of the component. Deprecated: use baseImage and version.
	// +optional
	Image string `json:"image,omitempty"`

	// Version overrides the cluster-level version for this component (image tag).
	// +optional
	Version *string `json:"version,omitempty"`

	// ImagePullPolicy of the component's main container; inherits spec.imagePullPolicy.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets replace spec.imagePullSecrets when non-empty.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// HostNetwork runs the pods in the host's network namespace.
	// +optional
	HostNetwork *bool `json:"hostNetwork,omitempty"`

	// Affinity of the component's pods (a Kubernetes core/v1 Affinity, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PriorityClassName of the component's pods.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	// SchedulerName of the component's pods.
	// +optional
	SchedulerName *string `json:"schedulerName,omitempty"`

	// NodeSelector is merged over spec.nodeSelector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Annotations are merged over spec.annotations onto the pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be annotation keys ([prefix/]name, the name at most 63 characters)"
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels are merged over spec.labels onto the pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be label keys ([prefix/]name, the name at most 63 characters)"
	Labels map[string]string `json:"labels,omitempty"`

	// Tolerations replace spec.tolerations when non-empty.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// PodSecurityContext of the pods (a core/v1 PodSecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// ConfigUpdateStrategy of this component; inherits spec.configUpdateStrategy.
	// +optional
	ConfigUpdateStrategy *ConfigUpdateStrategy `json:"configUpdateStrategy,omitempty"`

	// Env are extra environment variables of the main container (core/v1 EnvVar list,
	// not expanded in this schema). Reserved names set by the operator are rejected.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvFrom are extra environment sources of the main container.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// InitContainers are added to the pods (core/v1 Container list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	InitContainers []corev1.Container `json:"initContainers,omitempty"`

	// AdditionalContainers are added to the pods; one named like a generated
	// container is merged into it (core/v1 Container list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalContainers []corev1.Container `json:"additionalContainers,omitempty"`

	// AdditionalVolumes are added to the pods (core/v1 Volume list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumes []corev1.Volume `json:"additionalVolumes,omitempty"`

	// AdditionalVolumeMounts are added to the main container.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`

	// DNSConfig of the pods.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`

	// DNSPolicy of the pods; ClusterFirstWithHostNet when hostNetwork is set.
	// +optional
	// +kubebuilder:validation:Enum=ClusterFirstWithHostNet;ClusterFirst;Default;None
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// TerminationGracePeriodSeconds of the pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// StatefulSetUpdateStrategy is RollingUpdate (default) or OnDelete.
	// +optional
	// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
	StatefulSetUpdateStrategy appsv1.StatefulSetUpdateStrategyType `json:"statefulSetUpdateStrategy,omitempty"`

	// PodManagementPolicy of the StatefulSet: Parallel (default) or OrderedReady.
	// +optional
	// +kubebuilder:validation:Enum=Parallel;OrderedReady
	PodManagementPolicy appsv1.PodManagementPolicyType `json:"podManagementPolicy,omitempty"`

	// TopologySpreadConstraints of the pods; the label selector is filled in by the operator.
	// +optional
	// +listType=map
	// +listMapKey=topologyKey
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// SuspendAction suspends the component (deletes its StatefulSet, keeps PVCs).
	// +optional
	SuspendAction *SuspendAction `json:"suspendAction,omitempty"`

	// ReadinessProbe selects the readiness probe type and timings of the main container.
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`

	// SecurityContext of the main container (a core/v1 SecurityContext, not
	// expanded in this schema); podSecurityContext stays the pod's.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// AutomountServiceAccountToken of the pods; the Kubernetes default (true) when unset.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
}

// ResourceRequirements is the inlined resource block of a component:
// requests.storage is the data volume size, limits.storage becomes TiKV's capacity.
type ResourceRequirements = corev1.ResourceRequirements

// ConfigUpdateStrategy says how a config change reaches running pods.
// +kubebuilder:validation:Enum=InPlace;RollingUpdate
type ConfigUpdateStrategy string

const (
	// ConfigUpdateStrategyInPlace updates the ConfigMap under the same name; pods
	// see the change only after a restart. It is what an unset strategy means.
	ConfigUpdateStrategyInPlace ConfigUpdateStrategy = "InPlace"
	// ConfigUpdateStrategyRollingUpdate writes a content-hashed ConfigMap and
	// rolls the pods through the upgrade path.
	ConfigUpdateStrategyRollingUpdate ConfigUpdateStrategy = "RollingUpdate"
)

// Probe chooses the kind of readiness probe and its timings.
type Probe struct {
	// Type is "tcp" (default) or "command" (an HTTP status check via curl).
	// +optional
	// +kubebuilder:validation:Enum=tcp;command
	Type *string `json:"type,omitempty"`
	// InitialDelaySeconds before the first probe.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`
	// PeriodSeconds between probes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`
}

// SuspendAction lists what to suspend.
type SuspendAction struct {
	// SuspendStatefulSet deletes the component's StatefulSet (pods go, PVCs stay)
	// until the action is removed.
	// +optional
	SuspendStatefulSet bool `json:"suspendStatefulSet,omitempty"`
}

// TopologySpreadConstraint spreads the component's pods over a topology key;
// the operator fills in the label selector of the component and schedules
// with whenUnsatisfiable DoNotSchedule.
type TopologySpreadConstraint struct {
	// TopologyKey is a node label key, such as topology.kubernetes.io/zone.
	TopologyKey string `json:"topologyKey"`
	// MaxSkew is the allowed imbalance; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxSkew int32 `json:"maxSkew,omitempty"`
	// MinDomains is the minimum number of eligible domains.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinDomains *int32 `json:"minDomains,omitempty"`
	// NodeAffinityPolicy is Honor or Ignore.
	// +optional
	// +kubebuilder:validation:Enum=Honor;Ignore
	NodeAffinityPolicy *corev1.NodeInclusionPolicy `json:"nodeAffinityPolicy,omitempty"`
	// MatchLabels are extra pod labels the spreading counts.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// ServiceSpec configures a component's client Service.
type ServiceSpec struct {
	// Type of the Service; ClusterIP by default.
	// +optional
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer;ExternalName
	Type corev1.ServiceType `json:"type,omitempty"`
	// Annotations added to the Service.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be annotation keys ([prefix/]name, the name at most 63 characters)"
	Annotations map[string]string `json:"annotations,omitempty"`
	// Labels added to the Service.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') < 254)",message="keys must be label keys ([prefix/]name, the name at most 63 characters)"
	Labels map[string]string `json:"labels,omitempty"`
	// LoadBalancerIP for a LoadBalancer Service.
	// +optional
	LoadBalancerIP *string `json:"loadBalancerIP,omitempty"`
	// ClusterIP to request; an existing Service keeps its allocated ClusterIP.
	// +optional
	ClusterIP *string `json:"clusterIP,omitempty"`
	// PortName overrides the name of the main client port.
	// +optional
	PortName *string `json:"portName,omitempty"`
	// LoadBalancerSourceRanges restricts LoadBalancer traffic.
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
	// LoadBalancerClass of a LoadBalancer Service.
	// +optional
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`
	// Port is the Service's main port; used only by TiDB (4000 by default).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
}

// StorageVolume is an extra PVC-backed volume of a component.
type StorageVolume struct {
	// Name of the volume; the PVC template is named <component>-<name>.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// StorageClassName of the PVC; inherits the component's.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// StorageSize of the PVC, a quantity such as 10Gi.
	// +kubebuilder:validation:Pattern=`^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))))?$`
	StorageSize string `json:"storageSize"`
	// MountPath inside the main container; empty means the operator's default for the name.
	// +optional
	MountPath string `json:"mountPath,omitempty"`
	// VolumeAttributesClassName of the PVC; inherits the component's.
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
}

// StorageClaim is one data disk of TiFlash (PVC data<i>).
// +kubebuilder:validation:XValidation:rule="has(self.resources) && has(self.resources.requests) && 'storage' in self.resources.requests",message="each TiFlash data disk needs a size: set resources.requests.storage",fieldPath=".resources",reason=FieldValueRequired
type StorageClaim struct {
	// Resources holds requests.storage, the size of the disk.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// StorageClassName of the disk.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// VolumeAttributesClassName of the disk's PVC.
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
}

// ScalePolicy bounds how many pods scale at once.
type ScalePolicy struct {
	// ScaleInParallelism is the number of pods removed concurrently; default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ScaleInParallelism *int32 `json:"scaleInParallelism,omitempty"`
	// ScaleOutParallelism is the number of pods added concurrently; default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ScaleOutParallelism *int32 `json:"scaleOutParallelism,omitempty"`
}

// Failover tunes the recovery of failed-over stores.
type Failover struct {
	// RecoverByUID recovers a failover whose status.failoverUID equals this value.
	// +optional
	RecoverByUID types.UID `json:"recoverByUID,omitempty"`
}

// LogTailerSpec configures a log-tailing sidecar.
type LogTailerSpec struct {
	corev1.ResourceRequirements `json:",inline"`
	// SecurityContext of the container (a core/v1 SecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// InitContainerSpec configures an operator-made init container.
type InitContainerSpec struct {
	corev1.ResourceRequirements `json:",inline"`
	// SecurityContext of the container (a core/v1 SecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// TiDBSlowLogTailerSpec configures TiDB's slow-log sidecar.
type TiDBSlowLogTailerSpec struct {
	corev1.ResourceRequirements `json:",inline"`
	// Image of the sidecar. Deprecated: use spec.helper.image.
	// +optional
	Image *string `json:"image,omitempty"`
	// ImagePullPolicy of the sidecar. Deprecated: use spec.helper.imagePullPolicy.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// UseSidecar runs the tailer as a native sidecar (restartable init container).
	// +optional
	UseSidecar bool `json:"useSidecar,omitempty"`
	// SecurityContext of the container (a core/v1 SecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// CustomizedProbe is a startup probe that runs a binary copied in by an init container.
type CustomizedProbe struct {
	// Image holding the probe binary.
	Image string `json:"image"`
	// BinaryName is the probe binary's path inside the image.
	BinaryName string `json:"binaryName"`
	// Args of the probe binary.
	// +optional
	Args []string `json:"args,omitempty"`
	// InitialDelaySeconds before the first probe.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds of one probe.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// PeriodSeconds between probes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`
	// SuccessThreshold of the probe.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SuccessThreshold *int32 `json:"successThreshold,omitempty"`
	// FailureThreshold of the probe.
	// +optional
	// +kubebuilder:validation:Minimum=1
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`
}
