package unsupported

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TidbMonitor lists the TidbMonitor fields nothing acts on yet.
var TidbMonitor = []Field[v1alpha1.TidbMonitor]{
	{
		Path:    "spec.prometheus.ingress",
		Why:     "no Ingress is created",
		Set:     func(tm *v1alpha1.TidbMonitor) bool { return tm.Spec.Prometheus.Ingress != nil },
		Example: func(tm *v1alpha1.TidbMonitor) { tm.Spec.Prometheus.Ingress = &v1alpha1.IngressSpec{} },
	},
	{
		Path: "spec.grafana.ingress",
		Why:  "no Ingress is created",
		Set:  func(tm *v1alpha1.TidbMonitor) bool { return tm.Spec.Grafana != nil && tm.Spec.Grafana.Ingress != nil },
		Example: func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.Grafana = &v1alpha1.GrafanaSpec{Ingress: &v1alpha1.IngressSpec{}}
		},
	},
	{
		Path:    "spec.kubePrometheusURL",
		Set:     func(tm *v1alpha1.TidbMonitor) bool { return tm.Spec.KubePrometheusURL != nil },
		Example: func(tm *v1alpha1.TidbMonitor) { tm.Spec.KubePrometheusURL = ptr("http://prometheus:9090") },
	},
	{
		Path:    "spec.clusterScoped",
		Why:     "no ClusterRole is created; the Role covers the monitor's namespace",
		Set:     func(tm *v1alpha1.TidbMonitor) bool { return tm.Spec.ClusterScoped },
		Example: func(tm *v1alpha1.TidbMonitor) { tm.Spec.ClusterScoped = true },
	},
	{
		Path:    "spec.preferIPv6",
		Set:     func(tm *v1alpha1.TidbMonitor) bool { return tm.Spec.PreferIPv6 },
		Example: func(tm *v1alpha1.TidbMonitor) { tm.Spec.PreferIPv6 = true },
	},
	{
		Path: "spec.dm.initializer",
		Why:  "DM dashboards and rules are not copied",
		Set: func(tm *v1alpha1.TidbMonitor) bool {
			if tm.Spec.DM == nil {
				return false
			}
			i := tm.Spec.DM.Initializer
			return i.BaseImage != "" || i.Version != "" || len(i.Envs) > 0
		},
		Example: func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.DM = &v1alpha1.DMMonitorSpec{Initializer: v1alpha1.InitializerSpec{Envs: map[string]string{"A": "1"}}}
		},
	},
	{
		Path: "spec.thanos.grpcServerTlsConfig",
		Set: func(tm *v1alpha1.TidbMonitor) bool {
			return tm.Spec.Thanos != nil && tm.Spec.Thanos.GRPCServerTLSConfig != nil
		},
		Example: func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.Thanos = &v1alpha1.ThanosSpec{GRPCServerTLSConfig: &v1alpha1.TLSConfig{}}
		},
	},
	{
		Path:    "spec.prometheus.remoteWrite.basicAuth",
		Set:     anyRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) bool { return rw.BasicAuth != nil }),
		Example: withRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) { rw.BasicAuth = &v1alpha1.BasicAuth{} }),
	},
	{
		Path: "spec.prometheus.remoteWrite.tlsConfig.ca",
		Why:  "use caFile",
		Set: anyRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) bool {
			return rw.TLSConfig != nil && rw.TLSConfig.CA != (v1alpha1.SecretOrConfigMap{})
		}),
		Example: withRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) {
			rw.TLSConfig = &v1alpha1.TLSConfig{SafeTLSConfig: v1alpha1.SafeTLSConfig{
				CA: v1alpha1.SecretOrConfigMap{Secret: &corev1.SecretKeySelector{Key: "ca.crt"}}}}
		}),
	},
	{
		Path: "spec.prometheus.remoteWrite.tlsConfig.cert",
		Why:  "use certFile",
		Set: anyRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) bool {
			return rw.TLSConfig != nil && rw.TLSConfig.Cert != (v1alpha1.SecretOrConfigMap{})
		}),
		Example: withRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) {
			rw.TLSConfig = &v1alpha1.TLSConfig{SafeTLSConfig: v1alpha1.SafeTLSConfig{
				Cert: v1alpha1.SecretOrConfigMap{Secret: &corev1.SecretKeySelector{Key: "tls.crt"}}}}
		}),
	},
	{
		Path: "spec.prometheus.remoteWrite.tlsConfig.keySecret",
		Why:  "use keyFile",
		Set: anyRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) bool {
			return rw.TLSConfig != nil && rw.TLSConfig.KeySecret != nil
		}),
		Example: withRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) {
			rw.TLSConfig = &v1alpha1.TLSConfig{SafeTLSConfig: v1alpha1.SafeTLSConfig{KeySecret: &corev1.SecretKeySelector{Key: "tls.key"}}}
		}),
	},
	{
		Path: "spec.prometheus.remoteWrite.queueConfig.maxRetries",
		Why:  "Prometheus retries until maxBackoff",
		Set: anyRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) bool {
			return rw.QueueConfig != nil && rw.QueueConfig.MaxRetries != 0
		}),
		Example: withRemoteWrite(func(rw *v1alpha1.RemoteWriteSpec) { rw.QueueConfig = &v1alpha1.QueueConfig{MaxRetries: 3} }),
	},
}

// anyRemoteWrite reports whether one remote write target of a monitor
// matches set.
func anyRemoteWrite(set func(*v1alpha1.RemoteWriteSpec) bool) func(*v1alpha1.TidbMonitor) bool {
	return func(tm *v1alpha1.TidbMonitor) bool {
		return slices.ContainsFunc(tm.Spec.Prometheus.RemoteWrite, func(rw *v1alpha1.RemoteWriteSpec) bool {
			return rw != nil && set(rw)
		})
	}
}

// withRemoteWrite adds a remote write target that set fills.
func withRemoteWrite(set func(*v1alpha1.RemoteWriteSpec)) func(*v1alpha1.TidbMonitor) {
	return func(tm *v1alpha1.TidbMonitor) {
		rw := &v1alpha1.RemoteWriteSpec{URL: "http://remote:9090/api/v1/write"}
		set(rw)
		tm.Spec.Prometheus.RemoteWrite = append(tm.Spec.Prometheus.RemoteWrite, rw)
	}
}
