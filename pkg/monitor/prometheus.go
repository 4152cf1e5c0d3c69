package monitor

import (
	"fmt"
	"path"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Paths inside the monitor pod that the generated configuration names.
const (
	// RulesDir holds the alert rules the initializer copies out of its image.
	RulesDir = "/prometheus-rules/rules"
	// ExternalRulesDir holds the rules of prometheus.config.ruleConfigRef.
	ExternalRulesDir = "/prometheus-external-rules"
	// ClusterTLSDir holds one directory per TLS cluster, "<ns>_<tc>", with
	// the cluster's client certificate (ca.crt, tls.crt, tls.key).
	ClusterTLSDir = "/var/lib/cluster-client-tls"
	// DefaultReplicaLabel names the Prometheus replica in external labels.
	DefaultReplicaLabel = "prometheus_replica"
)

// ScrapeInterval is how often every job scrapes.
const ScrapeInterval = "15s"

// Prometheus returns the prometheus.yml of shard (of shards) of tm scraping
// targets, YAML-encoded. It errors only when encoding fails.
func Prometheus(tm *v1alpha1.TidbMonitor, targets []Target, shard, shards int32) ([]byte, error) {
	b, err := yaml.Marshal(NewPromConfig(tm, targets, shard, shards))
	if err != nil {
		return nil, fmt.Errorf("encode prometheus.yml of %s/%s: %w", tm.Namespace, tm.Name, err)
	}
	return b, nil
}

// NewPromConfig builds the configuration of one shard: a job per component
// of each target (pods found by kubernetes_sd in the target's namespace,
// kept by the operator's instance and component labels and the
// prometheus.io annotations), the external labels, Alertmanager and remote
// write targets of the spec; the bundled alert rules only with an
// Alertmanager or enableAlertRules (as v1.6), the rules of ruleConfigRef
// always.
func NewPromConfig(tm *v1alpha1.TidbMonitor, targets []Target, shard, shards int32) *PromConfig {
	cfg := &PromConfig{
		Global: PromGlobal{
			ScrapeInterval:     ScrapeInterval,
			EvaluationInterval: ScrapeInterval,
			ExternalLabels:     externalLabels(tm),
		},
		RemoteWrite: remoteWrites(tm.Spec.Prometheus.RemoteWrite),
	}
	alerting := tm.Spec.AlertmanagerURL != nil && *tm.Spec.AlertmanagerURL != ""
	if alerting || tm.Spec.EnableAlertRules {
		cfg.RuleFiles = []string{RulesDir + "/*.rules.yml"}
	}
	if c := tm.Spec.Prometheus.Config; c != nil && c.RuleConfigRef != nil {
		cfg.RuleFiles = append(cfg.RuleFiles, ExternalRulesDir+"/*")
	}
	if alerting {
		u := *tm.Spec.AlertmanagerURL
		cfg.Alerting = &PromAlerting{Alertmanagers: []AlertmanagerConfig{{StaticConfigs: []StaticConfig{{Targets: []string{u}}}}}}
	}
	cfg.ScrapeConfigs = []ScrapeConfig{}
	for _, t := range targets {
		for _, comp := range t.Components {
			cfg.ScrapeConfigs = append(cfg.ScrapeConfigs, scrapeJob(t, comp, shard, shards))
		}
	}
	return cfg
}

// externalLabels are spec.externalLabels plus the replica label, whose
// value Prometheus expands from the pod's environment
// (--enable-feature=expand-external-labels).
func externalLabels(tm *v1alpha1.TidbMonitor) map[string]string {
	out := map[string]string{ReplicaLabel(tm): "${POD_NAME}"}
	for k, v := range tm.Spec.ExternalLabels {
		out[k] = v
	}
	return out
}

// ReplicaLabel is spec.replicaExternalLabelName, prometheus_replica by default.
func ReplicaLabel(tm *v1alpha1.TidbMonitor) string {
	if n := tm.Spec.ReplicaExternalLabelName; n != nil && *n != "" {
		return *n
	}
	return DefaultReplicaLabel
}

// JobName is the scrape job of comp in target t: "<ns>/<tc>/<component>".
func JobName(t Target, comp string) string { return t.Namespace + "/" + t.Name + "/" + comp }

// scrapeJob is the job of one component of one cluster.
func scrapeJob(t Target, comp string, shard, shards int32) ScrapeConfig {
	job := ScrapeConfig{
		JobName:             JobName(t, comp),
		HonorLabels:         true,
		ScrapeInterval:      ScrapeInterval,
		Scheme:              names.Scheme(t.TLS),
		KubernetesSDConfigs: []KubernetesSDConfig{{Role: "pod", Namespaces: NamespaceNames{Names: []string{t.Namespace}}}},
		RelabelConfigs:      relabel(t, comp, shard, shards),
	}
	if t.TLS {
		dir := ClusterTLSPath(t)
		job.TLSConfig = &PromTLSConfig{
			CAFile:     path.Join(dir, "ca.crt"),
			CertFile:   path.Join(dir, "tls.crt"),
			KeyFile:    path.Join(dir, "tls.key"),
			ServerName: names.ServiceHost(peerService(t.Name, comp), t.Namespace, "") + ".svc",
		}
	}
	return job
}

// ClusterTLSPath is where the client certificate of TLS target t is mounted.
func ClusterTLSPath(t Target) string { return path.Join(ClusterTLSDir, t.Namespace+"_"+t.Name) }

// peerService is the headless Service whose name the component's
// certificate carries: <tc>-<component>-peer, or <tc>-<component> for a
// component whose descriptor has HeadlessMember (Pump); TiFlash's proxy
// runs in TiFlash's pods.
func peerService(tc, comp string) string {
	if comp == TiFlashProxy {
		comp = components.TiFlash.Name
	}
	if d := components.Lookup(comp); d != nil && d.HeadlessMember {
		return names.Member(tc, comp)
	}
	return names.Peer(tc, comp)
}

// podLabel is the __meta name of the pod label key.
func podLabel(key string) string { return "__meta_kubernetes_pod_label_" + sanitize(key) }

// podAnnotation is the __meta name of the pod annotation key.
func podAnnotation(key string) string { return "__meta_kubernetes_pod_annotation_" + sanitize(key) }

// sanitize replaces what Prometheus replaces in label names: every
// character but letters, digits and underscores.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}

// relabel keeps the pods of one component of one cluster and points the
// target at the port and path their annotations advertise (TiFlash's
// proxy: its fixed status port), then labels the series with the cluster,
// namespace, component and pod, and keeps only this shard's targets.
func relabel(t Target, comp string, shard, shards int32) []PromRelabelConfig {
	podComp := comp
	if comp == TiFlashProxy {
		podComp = label.TiFlashLabelVal
	}
	rs := []PromRelabelConfig{
		{SourceLabels: []string{podLabel(label.InstanceLabelKey), podLabel(label.ComponentLabelKey)},
			Action: "keep", Regex: t.Name + ";" + podComp},
		{SourceLabels: []string{podAnnotation(label.AnnPrometheusScrape)}, Action: "keep", Regex: "true"},
	}
	if comp == TiFlashProxy {
		rs = append(rs, PromRelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_ip"}, Action: "replace",
			Regex: "(.+)", Replacement: "$1:" + strconv.Itoa(tiflashProxyPort), TargetLabel: "__address__"})
	} else {
		rs = append(rs,
			PromRelabelConfig{SourceLabels: []string{podAnnotation(label.AnnPrometheusPath)}, Action: "replace",
				Regex: "(.+)", TargetLabel: "__metrics_path__"},
			PromRelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_ip", podAnnotation(label.AnnPrometheusPort)},
				Action: "replace", Regex: "(.+);(.+)", Replacement: "$1:$2", TargetLabel: "__address__"})
	}
	rs = append(rs,
		PromRelabelConfig{SourceLabels: []string{"__meta_kubernetes_namespace"}, Action: "replace", TargetLabel: "namespace"},
		PromRelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_name"}, Action: "replace", TargetLabel: "instance"},
		PromRelabelConfig{Action: "replace", TargetLabel: "tidb_cluster", Replacement: t.Name},
		PromRelabelConfig{Action: "replace", TargetLabel: "component", Replacement: comp},
	)
	if shards > 1 {
		rs = append(rs,
			PromRelabelConfig{SourceLabels: []string{"__address__"}, Action: "hashmod", Modulus: uint64(shards), TargetLabel: "__tmp_hash"},
			PromRelabelConfig{SourceLabels: []string{"__tmp_hash"}, Action: "keep", Regex: strconv.Itoa(int(shard))})
	}
	return rs
}

// remoteWrites translates spec.prometheus.remoteWrite. Credentials read
// from Secrets (basicAuth, TLS keys) are not rendered: Unsupported names them.
func remoteWrites(specs []*v1alpha1.RemoteWriteSpec) []RemoteWrite {
	var out []RemoteWrite
	for _, s := range specs {
		if s == nil {
			continue
		}
		rw := RemoteWrite{URL: s.URL, Name: s.Name, RemoteTimeout: s.RemoteTimeout, Headers: s.Headers,
			BearerToken: s.BearerToken, BearerTokenFile: s.BearerTokenFile, WriteRelabelConfigs: relabelSpecs(s.WriteRelabelConfigs)}
		if s.ProxyURL != nil {
			rw.ProxyURL = *s.ProxyURL
		}
		if c := s.TLSConfig; c != nil {
			rw.TLSConfig = &PromTLSConfig{CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile,
				ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
		}
		if q := s.QueueConfig; q != nil {
			rw.QueueConfig = &PromQueueConfig{Capacity: q.Capacity, MinShards: q.MinShards, MaxShards: q.MaxShards,
				MaxSamplesPerSend: q.MaxSamplesPerSend, BatchSendDeadline: duration(q.BatchSendDeadline),
				MinBackoff: duration(q.MinBackoff), MaxBackoff: duration(q.MaxBackoff)}
		}
		if m := s.MetadataConfig; m != nil {
			rw.MetadataConfig = &PromMetadataConfig{Send: m.Send, SendInterval: m.SendInterval}
		}
		out = append(out, rw)
	}
	return out
}

// duration renders nanoseconds as a Prometheus duration ("" for zero).
func duration(ns int64) string {
	if ns <= 0 {
		return ""
	}
	d := time.Duration(ns)
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

func relabelSpecs(specs []v1alpha1.RelabelConfig) []PromRelabelConfig {
	out := make([]PromRelabelConfig, 0, len(specs))
	for _, r := range specs {
		out = append(out, PromRelabelConfig{SourceLabels: r.SourceLabels, Separator: r.Separator, Regex: r.Regex,
			Modulus: r.Modulus, TargetLabel: r.TargetLabel, Replacement: r.Replacement, Action: r.Action})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
