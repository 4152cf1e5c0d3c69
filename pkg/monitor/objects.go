package monitor

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Ports of the monitor's containers and Services.
const (
	PrometheusPort     = 9090
	GrafanaPort        = 3000
	ConfigReloaderPort = 9088
	ReloaderPort       = 9089
	ThanosGRPCPort     = 10901
	ThanosHTTPPort     = 10902
)

// ConfigKey is the ConfigMap key of the configuration of shard (of shards):
// prometheus.yml, or prometheus-shard-<i>.yml when sharded.
func ConfigKey(shard, shards int32) string {
	if shards <= 1 {
		return "prometheus.yml"
	}
	return fmt.Sprintf("prometheus-shard-%d.yml", shard)
}

// ExternalConfigKey is the key of prometheus.config.configMapRef's
// ConfigMap that replaces the generated configuration.
const ExternalConfigKey = "prometheus-config"

func meta(tm *v1alpha1.TidbMonitor, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: tm.Namespace, Labels: Labels(tm)}
}

// NewConfigMap builds <tm>-monitor: one Prometheus configuration per shard.
// It errors only when encoding fails.
func NewConfigMap(tm *v1alpha1.TidbMonitor, targets []Target) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: meta(tm, Member(tm.Name)), Data: map[string]string{}}
	shards := Shards(tm)
	for i := int32(0); i < shards; i++ {
		b, err := Prometheus(tm, targets, i, shards)
		if err != nil {
			return nil, err
		}
		cm.Data[ConfigKey(i, shards)] = string(b)
	}
	return cm, nil
}

// NewGrafanaConfigMap builds <tm>-monitor-grafana: Grafana's provisioning
// of the Prometheus data source (this pod's Prometheus) and of the
// dashboards the initializer copies out of its image.
func NewGrafanaConfigMap(tm *v1alpha1.TidbMonitor) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta(tm, GrafanaConfigMap(tm.Name)), Data: map[string]string{
		"datasources.yaml": fmt.Sprintf(`apiVersion: 1
datasources:
  - name: %s
    type: prometheus
    access: proxy
    url: http://127.0.0.1:%d
    isDefault: true
    editable: false
`, tm.Name, PrometheusPort),
		"dashboards.yaml": `apiVersion: 1
providers:
  - name: tidb
    folder: TiDB
    type: file
    disableDeletion: true
    options:
      path: ` + DashboardsDir + `
`,
	}}
}

// Shards is spec.shards, at least 1.
func Shards(tm *v1alpha1.TidbMonitor) int32 {
	if s := tm.Spec.Shards; s != nil && *s > 1 {
		return *s
	}
	return 1
}

// Replicas is spec.replicas, 1 by default.
func Replicas(tm *v1alpha1.TidbMonitor) int32 {
	if r := tm.Spec.Replicas; r != nil && *r >= 0 {
		return *r
	}
	return 1
}

// NewServices builds <tm>-prometheus (plus the Thanos sidecar's ports when
// spec.thanos is set), <tm>-grafana when spec.grafana is set, and
// <tm>-monitor-reloader; each selects every shard's pods.
func NewServices(tm *v1alpha1.TidbMonitor) []*corev1.Service {
	prom := []corev1.ServicePort{servicePort("http-prometheus", PrometheusPort)}
	if tm.Spec.Thanos != nil {
		prom = append(prom, servicePort("thanos-grpc", ThanosGRPCPort), servicePort("thanos-http", ThanosHTTPPort))
	}
	out := []*corev1.Service{newService(tm, PrometheusService(tm.Name), tm.Spec.Prometheus.Service, prom)}
	if g := tm.Spec.Grafana; g != nil {
		out = append(out, newService(tm, GrafanaService(tm.Name), g.Service, []corev1.ServicePort{servicePort("http-grafana", GrafanaPort)}))
	}
	return append(out, newService(tm, ReloaderService(tm.Name), tm.Spec.Reloader.Service,
		[]corev1.ServicePort{servicePort("tcp-reloader", ReloaderPort)}))
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

func newService(tm *v1alpha1.TidbMonitor, name string, spec v1alpha1.ServiceSpec, ports []corev1.ServicePort) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: meta(tm, name), Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeClusterIP, Ports: ports, Selector: Labels(tm),
	}}
	if spec.Type != "" {
		svc.Spec.Type = spec.Type
	}
	if spec.PortName != nil && *spec.PortName != "" {
		svc.Spec.Ports[0].Name = *spec.PortName
	}
	if spec.LoadBalancerIP != nil && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = *spec.LoadBalancerIP
	}
	svc.Spec.LoadBalancerSourceRanges = spec.LoadBalancerSourceRanges
	svc.Spec.LoadBalancerClass = spec.LoadBalancerClass
	for k, v := range spec.Labels {
		svc.Labels[k] = v
	}
	if len(spec.Annotations) > 0 {
		svc.Annotations = map[string]string{}
		for k, v := range spec.Annotations {
			svc.Annotations[k] = v
		}
	}
	return svc
}

// NewServiceAccount builds <tm>-monitor, the identity of the monitor's pods.
func NewServiceAccount(tm *v1alpha1.TidbMonitor) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(tm, Member(tm.Name))}
}

// NewRole builds <tm>-monitor in the monitor's namespace: what Prometheus'
// pod discovery reads (pods, services, endpoints: get, list, watch).
func NewRole(tm *v1alpha1.TidbMonitor) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: meta(tm, Member(tm.Name)), Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"pods", "services", "endpoints"},
		Verbs:     []string{"get", "list", "watch"},
	}}}
}

// NewRoleBinding binds the Role <tm>-monitor to the ServiceAccount <tm>-monitor.
func NewRoleBinding(tm *v1alpha1.TidbMonitor) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(tm, Member(tm.Name)),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Member(tm.Name), Namespace: tm.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: Member(tm.Name)},
	}
}
