package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// This file holds the TidbMonitor types that describe where data leaves the
// monitor: Prometheus remote write and the Thanos sidecar, with their TLS.

// ThanosSpec is a Thanos sidecar next to Prometheus (gRPC 10901, HTTP 10902).
type ThanosSpec struct {
	MonitorContainer `json:",inline"`

	// ObjectStorageConfig is the Secret key holding Thanos' object storage configuration.
	// +optional
	ObjectStorageConfig *corev1.SecretKeySelector `json:"objectStorageConfig,omitempty"`

	// ObjectStorageConfigFile is a file holding it; objectStorageConfig wins.
	// +optional
	ObjectStorageConfigFile *string `json:"objectStorageConfigFile,omitempty"`

	// ListenLocal makes the sidecar listen on 127.0.0.1 only.
	// +optional
	ListenLocal bool `json:"listenLocal,omitempty"`

	// TracingConfig is the Secret key holding Thanos' tracing configuration.
	// +optional
	TracingConfig *corev1.SecretKeySelector `json:"tracingConfig,omitempty"`

	// TracingConfigFile is a file holding it; tracingConfig wins.
	// +optional
	TracingConfigFile *string `json:"tracingConfigFile,omitempty"`

	// GRPCServerTLSConfig is the TLS of the sidecar's gRPC server.
	// +optional
	GRPCServerTLSConfig *TLSConfig `json:"grpcServerTlsConfig,omitempty"`

	// LogLevel of the sidecar.
	// +optional
	LogLevel string `json:"logLevel,omitempty"`

	// LogFormat of the sidecar.
	// +optional
	LogFormat string `json:"logFormat,omitempty"`

	// MinTime is the start of the time range the sidecar serves, such as -2h.
	// +optional
	MinTime string `json:"minTime,omitempty"`

	// RoutePrefix is the prefix of the sidecar's HTTP routes.
	// +optional
	RoutePrefix string `json:"routePrefix,omitempty"`

	// AdditionalVolumeMounts are added to the container (core/v1 VolumeMount list, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`
}

// RemoteWriteSpec is one Prometheus remote_write target.
type RemoteWriteSpec struct {
	// URL of the endpoint samples are sent to.
	URL string `json:"url"`

	// Name of the queue, unique among the targets.
	// +optional
	Name string `json:"name,omitempty"`

	// RemoteTimeout of one request, a Prometheus duration such as 30s.
	// +optional
	RemoteTimeout string `json:"remoteTimeout,omitempty"`

	// WriteRelabelConfigs relabel the samples before they are sent.
	// +optional
	WriteRelabelConfigs []RelabelConfig `json:"writeRelabelConfigs,omitempty"`

	// BasicAuth of the requests.
	// +optional
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`

	// BearerToken of the requests.
	// +optional
	BearerToken string `json:"bearerToken,omitempty"`

	// BearerTokenFile holds the bearer token of the requests.
	// +optional
	BearerTokenFile string `json:"bearerTokenFile,omitempty"`

	// TLSConfig of the requests.
	// +optional
	TLSConfig *TLSConfig `json:"tlsConfig,omitempty"`

	// ProxyURL is the HTTP proxy of the requests.
	// +optional
	ProxyURL *string `json:"proxyUrl,omitempty"`

	// QueueConfig tunes the sending queue.
	// +optional
	QueueConfig *QueueConfig `json:"queueConfig,omitempty"`

	// MetadataConfig tunes sending series metadata.
	// +optional
	MetadataConfig *MetadataConfig `json:"metadataConfig,omitempty"`

	// Headers are added to every request.
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
}

// RelabelConfig is one Prometheus relabeling rule.
type RelabelConfig struct {
	// SourceLabels are joined by separator and matched against regex.
	// +optional
	SourceLabels []string `json:"sourceLabels,omitempty"`
	// Separator joining the source labels; ";" by default.
	// +optional
	Separator string `json:"separator,omitempty"`
	// TargetLabel receives the result of a replace.
	// +optional
	TargetLabel string `json:"targetLabel,omitempty"`
	// Regex matched against the joined source labels.
	// +optional
	Regex string `json:"regex,omitempty"`
	// Modulus of the hash of the source labels (action hashmod).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Modulus uint64 `json:"modulus,omitempty"`
	// Replacement written to the target label; $1 by default.
	// +optional
	Replacement string `json:"replacement,omitempty"`
	// Action is replace (default), keep, drop, hashmod, labelmap, labeldrop or labelkeep.
	// +optional
	Action string `json:"action,omitempty"`
}

// BasicAuth is a user name and password read from Secrets.
type BasicAuth struct {
	// Username is the Secret key holding the user name.
	// +optional
	Username corev1.SecretKeySelector `json:"username,omitempty"`
	// Password is the Secret key holding the password.
	// +optional
	Password corev1.SecretKeySelector `json:"password,omitempty"`
}

// TLSConfig is the TLS of a connection: certificates from Secrets or
// ConfigMaps, or from files in the container.
type TLSConfig struct {
	SafeTLSConfig `json:",inline"`

	// CAFile is the CA certificate file in the container.
	// +optional
	CAFile string `json:"caFile,omitempty"`
	// CertFile is the client certificate file in the container.
	// +optional
	CertFile string `json:"certFile,omitempty"`
	// KeyFile is the client key file in the container.
	// +optional
	KeyFile string `json:"keyFile,omitempty"`
}

// SafeTLSConfig is the TLS of a connection with every secret read from the API.
type SafeTLSConfig struct {
	// CA is the CA certificate.
	// +optional
	CA SecretOrConfigMap `json:"ca,omitempty"`
	// Cert is the client certificate.
	// +optional
	Cert SecretOrConfigMap `json:"cert,omitempty"`
	// KeySecret is the Secret key holding the client key.
	// +optional
	KeySecret *corev1.SecretKeySelector `json:"keySecret,omitempty"`
	// ServerName checked against the server's certificate.
	// +optional
	ServerName string `json:"serverName,omitempty"`
	// InsecureSkipVerify turns off the server certificate check.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// SecretOrConfigMap is a key of either a Secret or a ConfigMap.
type SecretOrConfigMap struct {
	// Secret key holding the data.
	// +optional
	Secret *corev1.SecretKeySelector `json:"secret,omitempty"`
	// ConfigMap key holding the data.
	// +optional
	ConfigMap *corev1.ConfigMapKeySelector `json:"configMap,omitempty"`
}

// QueueConfig tunes a remote write queue. The durations are nanoseconds, as
// v1.6 encodes them (Go time.Duration).
type QueueConfig struct {
	// Capacity of samples buffered per shard.
	// +optional
	Capacity int `json:"capacity,omitempty"`
	// MinShards is the fewest shards.
	// +optional
	MinShards int `json:"minShards,omitempty"`
	// MaxShards is the most shards.
	// +optional
	MaxShards int `json:"maxShards,omitempty"`
	// MaxSamplesPerSend is the largest batch.
	// +optional
	MaxSamplesPerSend int `json:"maxSamplesPerSend,omitempty"`
	// BatchSendDeadline is the longest a sample waits in a shard, in nanoseconds.
	// +optional
	BatchSendDeadline int64 `json:"batchSendDeadline,omitempty"`
	// MaxRetries of a failed batch.
	// +optional
	MaxRetries int `json:"maxRetries,omitempty"`
	// MinBackoff is the first retry delay, in nanoseconds.
	// +optional
	MinBackoff int64 `json:"minBackoff,omitempty"`
	// MaxBackoff is the longest retry delay, in nanoseconds.
	// +optional
	MaxBackoff int64 `json:"maxBackoff,omitempty"`
}

// MetadataConfig tunes sending series metadata to a remote write target.
type MetadataConfig struct {
	// Send turns metadata sending on.
	// +optional
	Send bool `json:"send,omitempty"`
	// SendInterval between metadata sends, a Prometheus duration such as 1m.
	// +optional
	SendInterval string `json:"sendInterval,omitempty"`
}
