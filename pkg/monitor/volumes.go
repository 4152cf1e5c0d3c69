package monitor

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// volumes are the pod's operator-made volumes (the data volume aside): the
// Prometheus configuration (generated, or prometheus.config.configMapRef's),
// the rules and dashboards the initializer fills, Grafana's provisioning,
// external rules, and each TLS cluster's client certificate.
func volumes(tm *v1alpha1.TidbMonitor, targets []Target) []corev1.Volume {
	emptyDir := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	vols := []corev1.Volume{
		{Name: configVolume, VolumeSource: configMapSource(ConfigMapName(tm), nil)},
		{Name: rulesVolume, VolumeSource: emptyDir},
	}
	if tm.Spec.Grafana != nil {
		vols = append(vols,
			corev1.Volume{Name: dashboardsVolume, VolumeSource: emptyDir},
			corev1.Volume{Name: grafanaVolume, VolumeSource: configMapSource(GrafanaConfigMap(tm.Name), []corev1.KeyToPath{
				{Key: "datasources.yaml", Path: "datasources/datasources.yaml"},
				{Key: "dashboards.yaml", Path: "dashboards/dashboards.yaml"},
			})})
	}
	if c := tm.Spec.Prometheus.Config; c != nil && c.RuleConfigRef != nil && c.RuleConfigRef.Name != "" {
		vols = append(vols, corev1.Volume{Name: extRulesVolume, VolumeSource: configMapSource(c.RuleConfigRef.Name, nil)})
	}
	for i, t := range tlsTargets(targets) {
		vols = append(vols, corev1.Volume{Name: tlsVolume(i), VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: names.ClusterClientSecret(t.Name)},
		}})
	}
	return vols
}

func configMapSource(name string, items []corev1.KeyToPath) corev1.VolumeSource {
	return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items,
	}}
}

// ConfigMapName is the ConfigMap Prometheus reads its configuration from:
// prometheus.config.configMapRef's when set, else <tm>-monitor.
func ConfigMapName(tm *v1alpha1.TidbMonitor) string {
	if ref := ExternalConfig(tm); ref != nil {
		return ref.Name
	}
	return Member(tm.Name)
}

// ExternalConfig is prometheus.config.configMapRef when it names a ConfigMap.
func ExternalConfig(tm *v1alpha1.TidbMonitor) *v1alpha1.ConfigMapRef {
	if c := tm.Spec.Prometheus.Config; c != nil && c.ConfigMapRef != nil && c.ConfigMapRef.Name != "" {
		return c.ConfigMapRef
	}
	return nil
}

// tlsTargets are the targets whose pods serve TLS, each once by namespace and name.
func tlsTargets(targets []Target) []Target {
	var out []Target
	seen := map[string]bool{}
	for _, t := range targets {
		key := t.Namespace + "/" + t.Name
		if t.TLS && !seen[key] {
			seen[key] = true
			out = append(out, t)
		}
	}
	return out
}

func tlsVolume(i int) string { return fmt.Sprintf("cluster-client-tls-%d", i) }
