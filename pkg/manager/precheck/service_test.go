package precheck

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func lb(mut func(*corev1.Service)) *corev1.Service {
	s := loadBalancerService()
	s.Name = "basic-tidb"
	mut(s)
	return s
}

func TestServiceRules(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"unknown type", svc(func(s *corev1.Service) { s.Spec.Type = "Internal" }),
			[]string{svcP + ".spec.type: Unsupported value"}},
		{"empty type defaults to ClusterIP", svc(func(s *corev1.Service) { s.Spec.Type = "" }), nil},
		{"no ports", svc(func(s *corev1.Service) { s.Spec.Ports = nil }),
			[]string{svcP + ".spec.ports: Required value"}},
		{"headless without ports", svc(func(s *corev1.Service) { s.Spec.ClusterIP = "None"; s.Spec.Ports = nil }), nil},
		{"port 0", svc(func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 }),
			[]string{svcP + ".spec.ports[0].port: Required value"}},
		{"port 65536", svc(func(s *corev1.Service) { s.Spec.Ports[1].Port = 65536 }),
			[]string{svcP + ".spec.ports[1].port: Invalid value"}},
		{"unknown protocol", svc(func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "HTTP" }),
			[]string{svcP + ".spec.ports[0].protocol: Unsupported value"}},
		{"unnamed port among two", svc(func(s *corev1.Service) { s.Spec.Ports[1].Name = "" }),
			[]string{svcP + ".spec.ports[1].name: Required value"}},
		{"single unnamed port", svc(func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1]; s.Spec.Ports[0].Name = "" }), nil},
		{"port name not a label", svc(func(s *corev1.Service) { s.Spec.Ports[0].Name = "MySQL" }),
			[]string{svcP + ".spec.ports[0].name: Invalid value"}},
		{"duplicate port name", svc(func(s *corev1.Service) { s.Spec.Ports[1].Name = "mysql-client" }),
			[]string{svcP + ".spec.ports[1].name: Duplicate value"}},
		{"duplicate port and protocol", svc(func(s *corev1.Service) { s.Spec.Ports[1].Port = 4000 }),
			[]string{svcP + ".spec.ports[1]: Duplicate value"}},
		{"same port, other protocol", svc(func(s *corev1.Service) { s.Spec.Ports[1].Port = 4000; s.Spec.Ports[1].Protocol = "UDP" }), nil},
		{"targetPort name not IANA", svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("mysql_port") }),
			[]string{svcP + ".spec.ports[0].targetPort: Invalid value"}},
		{"targetPort number out of range", svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(70000) }),
			[]string{svcP + ".spec.ports[0].targetPort: Invalid value"}},
		{"zero targetPort defaults to port", svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.IntOrString{} }), nil},
		{"nodePort on ClusterIP", svc(func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 }),
			[]string{svcP + ".spec.ports[0].nodePort: Forbidden"}},
		{"clusterIP not an IP", svc(func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0" }),
			[]string{svcP + ".spec.clusterIP: Invalid value"}},
		{"clusterIPs disagree", svc(func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.96.0.13"} }),
			[]string{svcP + ".spec.clusterIPs[0]: Invalid value"}},
		{"headless LoadBalancer", lb(func(s *corev1.Service) { s.Spec.ClusterIP = "None" }),
			[]string{svcP + ".spec.clusterIP: Invalid value"}},
		{"selector label value", svc(func(s *corev1.Service) { s.Spec.Selector["app.kubernetes.io/instance"] = "bad value" }),
			[]string{svcP + ".spec.selector[app.kubernetes.io/instance]: Invalid value"}},
		{"session affinity", svc(func(s *corev1.Service) { s.Spec.SessionAffinity = "Cookie" }),
			[]string{svcP + ".spec.sessionAffinity: Unsupported value"}},
		{"external IP", svc(func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"example.com"} }),
			[]string{svcP + ".spec.externalIPs[0]: Invalid value"}},
		{"load balancer passes", lb(func(*corev1.Service) {}), nil},
		{"source range not a CIDR", lb(func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges[1] = "10.0.0.1" }),
			[]string{svcP + ".spec.loadBalancerSourceRanges[1]: Invalid value"}},
		{"source ranges on ClusterIP", svc(func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }),
			[]string{svcP + ".spec.loadBalancerSourceRanges: Forbidden"}},
		{"load balancer class on NodePort", lb(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.LoadBalancerSourceRanges = nil
			s.Spec.HealthCheckNodePort = 0
		}), []string{svcP + ".spec.loadBalancerClass: Forbidden"}},
		{"external traffic policy enum", lb(func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = "Node"; s.Spec.HealthCheckNodePort = 0 }),
			[]string{svcP + ".spec.externalTrafficPolicy: Unsupported value"}},
		{"external traffic policy on ClusterIP", svc(func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = "Local" }),
			[]string{svcP + ".spec.externalTrafficPolicy: Invalid value"}},
		{"external traffic policy with externalIPs", svc(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = "Cluster"
			s.Spec.ExternalIPs = []string{"1.2.3.4"}
		}), nil},
		{"health check port needs Local", lb(func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = "Cluster" }),
			[]string{svcP + ".spec.healthCheckNodePort: Invalid value"}},
		{"internal traffic policy enum", svc(func(s *corev1.Service) {
			s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicy("Node"))
		}),
			[]string{svcP + ".spec.internalTrafficPolicy: Unsupported value"}},
		{"ip families", svc(func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{"IPv4", "IPv4"} }),
			[]string{svcP + ".spec.ipFamilies[1]: Duplicate value"}},
		{"external name service", svc(func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com."}
		}), nil},
		{"external name missing", svc(func(s *corev1.Service) { s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName} }),
			[]string{svcP + ".spec.externalName: Required value"}},
		{"app protocol", svc(func(s *corev1.Service) { s.Spec.Ports[0].AppProtocol = ptr.To("my sql") }),
			[]string{svcP + ".spec.ports[0].appProtocol: Invalid value"}},
	})
}
