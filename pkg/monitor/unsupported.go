package monitor

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Unsupported lists, in a stable order, what tm sets that the operator
// accepts but does not act on (house rule: nothing accepted is silently
// ignored); the controller names them in the Unsupported condition and a
// Warning event. It is pure.
func Unsupported(tm *v1alpha1.TidbMonitor) []string {
	s := tm.Spec
	var out []string
	add := func(set bool, what string) {
		if set {
			out = append(out, what)
		}
	}
	add(s.Prometheus.Ingress != nil, "spec.prometheus.ingress (no Ingress is created)")
	add(s.Grafana != nil && s.Grafana.Ingress != nil, "spec.grafana.ingress (no Ingress is created)")
	add(s.KubePrometheusURL != nil, "spec.kubePrometheusURL")
	add(s.ClusterScoped, "spec.clusterScoped (no ClusterRole is created; the Role covers the monitor's namespace)")
	add(s.PreferIPv6, "spec.preferIPv6")
	if s.DM != nil && (s.DM.Initializer.BaseImage != "" || s.DM.Initializer.Version != "" || len(s.DM.Initializer.Envs) > 0) {
		out = append(out, "spec.dm.initializer (DM dashboards and rules are not copied)")
	}
	add(s.Thanos != nil && s.Thanos.GRPCServerTLSConfig != nil, "spec.thanos.grpcServerTlsConfig")
	out = append(out, remoteWriteUnsupported(s.Prometheus.RemoteWrite)...)
	out = append(out, refUnsupported(tm)...)
	for i, c := range s.Clusters {
		if c.Namespace != "" && c.Namespace != tm.Namespace {
			out = append(out, fmt.Sprintf("spec.clusters[%d].namespace %s: the ServiceAccount %s gets no Role there "+
				"(grant it get/list/watch on pods, services and endpoints; a TLS cluster's client Secret must be copied into %s)",
				i, c.Namespace, Member(tm.Name), tm.Namespace))
		}
	}
	return out
}

func remoteWriteUnsupported(rws []*v1alpha1.RemoteWriteSpec) []string {
	var out []string
	for i, rw := range rws {
		if rw == nil {
			continue
		}
		if rw.BasicAuth != nil {
			out = append(out, fmt.Sprintf("spec.prometheus.remoteWrite[%d].basicAuth", i))
		}
		if t := rw.TLSConfig; t != nil && (t.CA != (v1alpha1.SecretOrConfigMap{}) || t.Cert != (v1alpha1.SecretOrConfigMap{}) || t.KeySecret != nil) {
			out = append(out, fmt.Sprintf("spec.prometheus.remoteWrite[%d].tlsConfig ca/cert/keySecret (use caFile/certFile/keyFile)", i))
		}
		if q := rw.QueueConfig; q != nil && q.MaxRetries != 0 {
			out = append(out, fmt.Sprintf("spec.prometheus.remoteWrite[%d].queueConfig.maxRetries (Prometheus retries until maxBackoff)", i))
		}
	}
	return out
}

func refUnsupported(tm *v1alpha1.TidbMonitor) []string {
	c := tm.Spec.Prometheus.Config
	if c == nil {
		return nil
	}
	var out []string
	if r := c.ConfigMapRef; r != nil && r.Namespace != nil && *r.Namespace != "" && *r.Namespace != tm.Namespace {
		out = append(out, "spec.prometheus.config.configMapRef.namespace (a pod mounts ConfigMaps of its own namespace only; "+tm.Namespace+" is used)")
	}
	if r := c.RuleConfigRef; r != nil && r.Namespace != nil && *r.Namespace != "" && *r.Namespace != tm.Namespace {
		out = append(out, "spec.prometheus.config.ruleConfigRef.namespace (a pod mounts ConfigMaps of its own namespace only; "+tm.Namespace+" is used)")
	}
	return out
}
