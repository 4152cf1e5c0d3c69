package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TiFlashSpec is the desired TiFlash (columnar store) component.
type TiFlashSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the TiFlash pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of TiFlash stores.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/tiflash.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Privileged runs TiFlash privileged.
	// +optional
	Privileged *bool `json:"privileged,omitempty"`

	// MaxFailoverCount caps the replacement stores failover may add; 3 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// StorageClaims are the data disks, one PVC data<i> each; at least one is required.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	StorageClaims []StorageClaim `json:"storageClaims"`

	// Config is TiFlash's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// Initializer configures the init container that renders the config files.
	// +optional
	Initializer *InitContainerSpec `json:"initializer,omitempty"`

	// LogTailer configures the log-tailing sidecars.
	// +optional
	LogTailer *LogTailerSpec `json:"logTailer,omitempty"`

	// RecoverFailover removes failover stores once every original store is Up again.
	// +optional
	RecoverFailover bool `json:"recoverFailover,omitempty"`

	// Failover tunes failover recovery.
	// +optional
	Failover *Failover `json:"failover,omitempty"`

	// ScalePolicy bounds how many stores scale at once.
	// +optional
	ScalePolicy ScalePolicy `json:"scalePolicy,omitempty"`
}

// TiCDCSpec is the desired TiCDC component.
type TiCDCSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the TiCDC pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of TiCDC captures.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// TLSClientSecretNames are Secrets mounted for TLS to downstream sinks.
	// +optional
	TLSClientSecretNames []string `json:"tlsClientSecretNames,omitempty"`

	// BaseImage is the image without tag, such as pingcap/ticdc.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Config is TiCDC's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// StorageClassName of the storage volumes.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// GracefulShutdownTimeout bounds the drain of a capture before its pod restarts; 10m by default.
	// +optional
	GracefulShutdownTimeout *metav1.Duration `json:"gracefulShutdownTimeout,omitempty"`
}

// PumpSpec is the desired TiDB Binlog pump component.
// +kubebuilder:validation:XValidation:rule="has(self.requests) && 'storage' in self.requests",message="requests.storage is required: the size of Pump's data volume",fieldPath=".requests",reason=FieldValueRequired
type PumpSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the Pump pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of pumps.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/tidb-binlog.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// StorageClassName of the Pump data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// Config is Pump's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// SetTimeZone sets TZ in the pump container.
	// +optional
	SetTimeZone *bool `json:"setTimeZone,omitempty"`
}

// TiProxySpec is the desired TiProxy component.
type TiProxySpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the TiProxy pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of proxies.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/tiproxy.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// SSLEnableTiDB enables TLS between TiProxy and TiDB.
	// +optional
	SSLEnableTiDB bool `json:"sslEnableTiDB,omitempty"`

	// TLSClientSecretName is a Secret with a client certificate for TiDB.
	// +optional
	TLSClientSecretName *string `json:"tlsClientSecretName,omitempty"`

	// CertLayout is the certificate layout, v1 by default.
	// +optional
	CertLayout string `json:"certLayout,omitempty"`

	// Config is TiProxy's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// StorageClassName of the storage volumes.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
}

// PDMSSpec is one PD micro-service (tso or scheduling).
type PDMSSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// Name of the micro-service.
	// +kubebuilder:validation:Enum=tso;scheduling
	Name string `json:"name"`

	// ServiceAccount of the pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of servers.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag; pingcap/pd by default.
	// +optional
	BaseImage *string `json:"baseImage,omitempty"`

	// Service configures the client Service.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// MaxFailoverCount caps the extra servers failover may add.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// Config of the micro-service, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// TLSClientSecretName is a Secret with a client certificate.
	// +optional
	TLSClientSecretName *string `json:"tlsClientSecretName,omitempty"`

	// MountClusterClientSecret mounts <cluster>-cluster-client-secret into the pods.
	// +optional
	MountClusterClientSecret *bool `json:"mountClusterClientSecret,omitempty"`

	// StartUpScriptVersion "v1" resolves DNS with dig.
	// +optional
	// +kubebuilder:validation:Enum="";v1
	StartUpScriptVersion string `json:"startUpScriptVersion,omitempty"`

	// StorageClassName of the storage volumes.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// StartTimeout is how many seconds the start script waits for DNS; 30 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartTimeout int `json:"startTimeout,omitempty"`
}
