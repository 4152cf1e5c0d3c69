package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PDSpec is the desired PD (placement driver) component.
// +kubebuilder:validation:XValidation:rule="has(self.requests) && 'storage' in self.requests",message="requests.storage is required: the size of PD's data volume",fieldPath=".requests",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.baseImage) || size(oldSelf.baseImage) == 0 || (has(self.baseImage) && size(self.baseImage) > 0)",message="spec.pd.baseImage may not be emptied once set",fieldPath=".baseImage"
type PDSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the PD pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of PD members; odd numbers keep quorum cheapest.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/pd; the tag is the version.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Service configures the PD client Service <cluster>-pd.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// MaxFailoverCount caps the extra PD members failover may add; 3 by default, 0 disables failover.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// StorageClassName of the PD data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// DataSubDir is a sub-directory of the data volume used as data directory.
	// +optional
	DataSubDir string `json:"dataSubDir,omitempty"`

	// Config is PD's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// TLSClientSecretName is a Secret with a client certificate for the PD dashboard.
	// +optional
	TLSClientSecretName *string `json:"tlsClientSecretName,omitempty"`

	// EnableDashboardInternalProxy is deprecated and ignored.
	// +optional
	EnableDashboardInternalProxy *bool `json:"enableDashboardInternalProxy,omitempty"`

	// MountClusterClientSecret mounts <cluster>-cluster-client-secret into the pods.
	// +optional
	MountClusterClientSecret *bool `json:"mountClusterClientSecret,omitempty"`

	// StartUpScriptVersion "v1" makes the start script resolve DNS with dig instead of nslookup.
	// +optional
	// +kubebuilder:validation:Enum="";v1
	StartUpScriptVersion string `json:"startUpScriptVersion,omitempty"`

	// StartTimeout is how many seconds the start script waits for the pod's DNS name; 30 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartTimeout int `json:"startTimeout,omitempty"`

	// InitWaitTime is how many seconds the bootstrapping PD waits for peers.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitWaitTime int `json:"initWaitTime,omitempty"`

	// Mode "ms" runs PD in micro-service mode.
	// +optional
	// +kubebuilder:validation:Enum="";ms
	Mode string `json:"mode,omitempty"`

	// SpareVolReplaceReplicas is how many spare pods volume replacement may add; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	SpareVolReplaceReplicas *int32 `json:"spareVolReplaceReplicas,omitempty"`
}

// TiKVSpec is the desired TiKV component.
// +kubebuilder:validation:XValidation:rule="has(self.requests) && 'storage' in self.requests",message="requests.storage is required: the size of TiKV's data volume",fieldPath=".requests",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.baseImage) || size(oldSelf.baseImage) == 0 || (has(self.baseImage) && size(self.baseImage) > 0)",message="spec.tikv.baseImage may not be emptied once set",fieldPath=".baseImage"
type TiKVSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the TiKV pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of TiKV stores.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/tikv.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Privileged runs TiKV privileged. Deprecated: use securityContext.
	// +optional
	Privileged *bool `json:"privileged,omitempty"`

	// MaxFailoverCount caps the replacement stores failover may add; 3 by default, 0 disables failover.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// SeparateRocksDBLog tails the RocksDB log in a sidecar.
	// +optional
	SeparateRocksDBLog *bool `json:"separateRocksDBLog,omitempty"`

	// SeparateRaftLog tails the Raft log in a sidecar.
	// +optional
	SeparateRaftLog *bool `json:"separateRaftLog,omitempty"`

	// RocksDBLogVolumeName is the storage volume holding the RocksDB log.
	// +optional
	RocksDBLogVolumeName string `json:"rocksDBLogVolumeName,omitempty"`

	// RaftLogVolumeName is the storage volume holding the Raft log.
	// +optional
	RaftLogVolumeName string `json:"raftLogVolumeName,omitempty"`

	// LogTailer configures the log-tailing sidecars.
	// +optional
	LogTailer *LogTailerSpec `json:"logTailer,omitempty"`

	// StorageClassName of the TiKV data volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeAttributesClassName is the VolumeAttributesClass of the component's
	// new PVCs (the data volume and storageVolumes that set none).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`

	// DataSubDir is a sub-directory of the data volume used as data directory.
	// +optional
	DataSubDir string `json:"dataSubDir,omitempty"`

	// Config is TiKV's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// RecoverFailover removes failover stores once every original store is Up again.
	// +optional
	RecoverFailover bool `json:"recoverFailover,omitempty"`

	// Failover tunes failover recovery.
	// +optional
	Failover *Failover `json:"failover,omitempty"`

	// MountClusterClientSecret mounts <cluster>-cluster-client-secret into the pods.
	// +optional
	MountClusterClientSecret *bool `json:"mountClusterClientSecret,omitempty"`

	// EvictLeaderTimeout bounds the wait for leaders to leave a store before its pod restarts; 1500m by default.
	// A Go duration such as 10m.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))*)$`
	EvictLeaderTimeout *string `json:"evictLeaderTimeout,omitempty"`

	// WaitLeaderTransferBackTimeout bounds the wait for leaders to return after a restart; 400s by default.
	// +optional
	WaitLeaderTransferBackTimeout *metav1.Duration `json:"waitLeaderTransferBackTimeout,omitempty"`

	// StorageVolumes are extra PVC-backed volumes.
	// +optional
	StorageVolumes []StorageVolume `json:"storageVolumes,omitempty"`

	// StoreLabels are node label keys copied to store labels in PD.
	// +optional
	StoreLabels []string `json:"storeLabels,omitempty"`

	// EnableNamedStatusPort names the status port 20180 "status" in the pod spec.
	// +optional
	EnableNamedStatusPort bool `json:"enableNamedStatusPort,omitempty"`

	// ScalePolicy bounds how many stores scale at once.
	// +optional
	ScalePolicy ScalePolicy `json:"scalePolicy,omitempty"`

	// SpareVolReplaceReplicas is how many spare pods volume replacement may add; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	SpareVolReplaceReplicas *int32 `json:"spareVolReplaceReplicas,omitempty"`
}

// TiDBSpec is the desired TiDB component.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.baseImage) || size(oldSelf.baseImage) == 0 || (has(self.baseImage) && size(self.baseImage) > 0)",message="spec.tidb.baseImage may not be emptied once set",fieldPath=".baseImage"
type TiDBSpec struct {
	ComponentSpec        `json:",inline"`
	ResourceRequirements `json:",inline"`

	// ServiceAccount of the TiDB pods.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Replicas is the number of TiDB servers.
	// At most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// BaseImage is the image without tag, such as pingcap/tidb.
	// +optional
	BaseImage string `json:"baseImage,omitempty"`

	// Service configures the client Service <cluster>-tidb; without it no client Service is made.
	// +optional
	Service *TiDBServiceSpec `json:"service,omitempty"`

	// BinlogEnabled makes TiDB write binlog to Pump.
	// +optional
	BinlogEnabled *bool `json:"binlogEnabled,omitempty"`

	// MaxFailoverCount caps the replacement servers failover may add; 3 by default, 0 disables failover.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MaxFailoverCount *int32 `json:"maxFailoverCount,omitempty"`

	// SeparateSlowLog tails the slow query log in a sidecar; true by default.
	// +optional
	SeparateSlowLog *bool `json:"separateSlowLog,omitempty"`

	// SlowLogVolumeName is the storage volume holding the slow log.
	// +optional
	SlowLogVolumeName string `json:"slowLogVolumeName,omitempty"`

	// SlowLogTailer configures the slow-log sidecar.
	// +optional
	SlowLogTailer *TiDBSlowLogTailerSpec `json:"slowLogTailer,omitempty"`

	// TLSClient enables TLS for MySQL clients.
	// +optional
	TLSClient *TiDBTLSClient `json:"tlsClient,omitempty"`

	// TokenBasedAuthEnabled enables JWT authentication.
	// +optional
	TokenBasedAuthEnabled *bool `json:"tokenBasedAuthEnabled,omitempty"`

	// Plugins are TiDB plugins to load.
	// +optional
	Plugins []string `json:"plugins,omitempty"`

	// Config is TiDB's configuration, as a map or a TOML string.
	// +optional
	Config *Config `json:"config,omitempty"`

	// Lifecycle of the tidb container (core/v1 Lifecycle, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

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

	// Initializer creates a random root password on first start.
	// +optional
	Initializer *TiDBInitializer `json:"initializer,omitempty"`

	// BootstrapSQLConfigMapName names a ConfigMap whose bootstrap-sql key runs on first start.
	// Once set it may be removed but not changed: TiDB runs the file only when it bootstraps the cluster.
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(oldSelf) == 0 || size(self) == 0 || self == oldSelf",message="spec.tidb.bootstrapSQLConfigMapName may not be changed once set (TiDB runs the bootstrap SQL only when it first bootstraps the cluster); it may be removed"
	BootstrapSQLConfigMapName *string `json:"bootstrapSQLConfigMapName,omitempty"`

	// ScalePolicy bounds how many servers scale at once.
	// +optional
	ScalePolicy ScalePolicy `json:"scalePolicy,omitempty"`

	// CustomizedStartupProbe adds a startup probe running a binary of your own.
	// +optional
	CustomizedStartupProbe *CustomizedProbe `json:"customizedStartupProbe,omitempty"`

	// Arguments are extra tidb-server command-line arguments.
	// +optional
	Arguments []string `json:"arguments,omitempty"`
}

// TiDBServiceSpec configures the TiDB client Service.
type TiDBServiceSpec struct {
	ServiceSpec `json:",inline"`

	// ExternalTrafficPolicy of a NodePort or LoadBalancer Service.
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// ExposeStatus adds the status port 10080 to the Service; true by default.
	// +optional
	ExposeStatus *bool `json:"exposeStatus,omitempty"`

	// MySQLNodePort is the node port of the MySQL port.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	MySQLNodePort *int `json:"mysqlNodePort,omitempty"`

	// StatusNodePort is the node port of the status port.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	StatusNodePort *int `json:"statusNodePort,omitempty"`

	// AdditionalPorts are added to the Service.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalPorts []corev1.ServicePort `json:"additionalPorts,omitempty"`
}

// TiDBTLSClient configures TLS for MySQL clients of TiDB.
type TiDBTLSClient struct {
	// Enabled requires the Secret <cluster>-tidb-server-secret.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// DisableClientAuthn does not require client certificates.
	// +optional
	DisableClientAuthn bool `json:"disableClientAuthn,omitempty"`
	// SkipInternalClientCA does not verify clients with the internal CA.
	// +optional
	SkipInternalClientCA bool `json:"skipInternalClientCA,omitempty"`
}

// TiDBInitializer sets up TiDB on first start.
type TiDBInitializer struct {
	// CreatePassword stores a random root password in the Secret <cluster>-init.
	// +optional
	CreatePassword bool `json:"createPassword,omitempty"`
}
