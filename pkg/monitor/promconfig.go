package monitor

// The Prometheus configuration file, as far as the monitor writes it. The
// field names are Prometheus' own (prometheus.yml); sigs.k8s.io/yaml writes
// them through these JSON tags, keys sorted, so the file is deterministic.

// PromConfig is a prometheus.yml.
type PromConfig struct {
	Global        PromGlobal     `json:"global"`
	RuleFiles     []string       `json:"rule_files,omitempty"`
	Alerting      *PromAlerting  `json:"alerting,omitempty"`
	ScrapeConfigs []ScrapeConfig `json:"scrape_configs"`
	RemoteWrite   []RemoteWrite  `json:"remote_write,omitempty"`
}

// PromGlobal is the global section.
type PromGlobal struct {
	ScrapeInterval     string            `json:"scrape_interval"`
	EvaluationInterval string            `json:"evaluation_interval"`
	ExternalLabels     map[string]string `json:"external_labels,omitempty"`
}

// PromAlerting names the Alertmanagers alerts go to.
type PromAlerting struct {
	Alertmanagers []AlertmanagerConfig `json:"alertmanagers"`
}

// AlertmanagerConfig is one group of Alertmanagers.
type AlertmanagerConfig struct {
	StaticConfigs []StaticConfig `json:"static_configs"`
}

// StaticConfig is a fixed list of targets.
type StaticConfig struct {
	Targets []string `json:"targets"`
}

// ScrapeConfig is one scrape job.
type ScrapeConfig struct {
	JobName             string               `json:"job_name"`
	HonorLabels         bool                 `json:"honor_labels,omitempty"`
	ScrapeInterval      string               `json:"scrape_interval,omitempty"`
	Scheme              string               `json:"scheme,omitempty"`
	TLSConfig           *PromTLSConfig       `json:"tls_config,omitempty"`
	ProxyURL            string               `json:"proxy_url,omitempty"`
	KubernetesSDConfigs []KubernetesSDConfig `json:"kubernetes_sd_configs"`
	RelabelConfigs      []PromRelabelConfig  `json:"relabel_configs"`
}

// KubernetesSDConfig discovers pods of some namespaces.
type KubernetesSDConfig struct {
	Role           string         `json:"role"`
	KubeconfigFile string         `json:"kubeconfig_file,omitempty"`
	Namespaces     NamespaceNames `json:"namespaces"`
}

// NamespaceNames limits discovery to these namespaces.
type NamespaceNames struct {
	Names []string `json:"names"`
}

// PromTLSConfig is the TLS of a scrape or remote write.
type PromTLSConfig struct {
	CAFile             string `json:"ca_file,omitempty"`
	CertFile           string `json:"cert_file,omitempty"`
	KeyFile            string `json:"key_file,omitempty"`
	ServerName         string `json:"server_name,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// PromRelabelConfig is one relabelling step.
type PromRelabelConfig struct {
	SourceLabels []string `json:"source_labels,omitempty"`
	Separator    string   `json:"separator,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Modulus      uint64   `json:"modulus,omitempty"`
	TargetLabel  string   `json:"target_label,omitempty"`
	Replacement  string   `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// RemoteWrite is one remote_write target.
type RemoteWrite struct {
	URL                 string              `json:"url"`
	Name                string              `json:"name,omitempty"`
	RemoteTimeout       string              `json:"remote_timeout,omitempty"`
	Headers             map[string]string   `json:"headers,omitempty"`
	WriteRelabelConfigs []PromRelabelConfig `json:"write_relabel_configs,omitempty"`
	BearerToken         string              `json:"bearer_token,omitempty"`
	BearerTokenFile     string              `json:"bearer_token_file,omitempty"`
	TLSConfig           *PromTLSConfig      `json:"tls_config,omitempty"`
	ProxyURL            string              `json:"proxy_url,omitempty"`
	QueueConfig         *PromQueueConfig    `json:"queue_config,omitempty"`
	MetadataConfig      *PromMetadataConfig `json:"metadata_config,omitempty"`
}

// PromQueueConfig tunes a remote write queue.
type PromQueueConfig struct {
	Capacity          int    `json:"capacity,omitempty"`
	MinShards         int    `json:"min_shards,omitempty"`
	MaxShards         int    `json:"max_shards,omitempty"`
	MaxSamplesPerSend int    `json:"max_samples_per_send,omitempty"`
	BatchSendDeadline string `json:"batch_send_deadline,omitempty"`
	MinBackoff        string `json:"min_backoff,omitempty"`
	MaxBackoff        string `json:"max_backoff,omitempty"`
}

// PromMetadataConfig tunes sending metadata.
type PromMetadataConfig struct {
	Send         bool   `json:"send"`
	SendInterval string `json:"send_interval,omitempty"`
}
