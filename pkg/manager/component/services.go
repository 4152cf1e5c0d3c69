package component

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

func intstrPort(p int32) intstr.IntOrString { return intstr.FromInt32(p) }

// Port is a named TCP port with the same port and target port.
func Port(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstrPort(port), Protocol: corev1.ProtocolTCP}
}

// HeadlessService returns the headless peer Service of a component: no
// cluster IP, and not-ready addresses published so members find each other
// while starting. It reads only tc's metadata, so any owner kind may use it.
func HeadlessService(tc metav1.Object, component, name string, ports ...corev1.ServicePort) *corev1.Service {
	podLabels := Labels(tc, component)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.GetNamespace(),
			Labels: label.Label(podLabels).Copy().UsedBy(label.UsedByPeer).Labels()},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Ports:                    ports,
			Selector:                 podLabels,
			PublishNotReadyAddresses: true,
		},
	}
}

// ClientService returns a component's client Service shaped by the user's
// ServiceSpec (type, labels, annotations, load-balancer fields; spec may be
// nil for a plain ClusterIP Service).
func ClientService(tc *v1alpha1.TidbCluster, component, name string, spec *v1alpha1.ServiceSpec, ports ...corev1.ServicePort) *corev1.Service {
	podLabels := Labels(tc, component)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.GetNamespace(),
			Labels: label.Label(podLabels).Copy().UsedBy(label.UsedByEndUser).Labels()},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports, Selector: podLabels},
	}
	if t := legacyServiceType(tc, component); t != "" {
		svc.Spec.Type = t
	}
	if spec == nil {
		return svc
	}
	if spec.Type != "" {
		svc.Spec.Type = spec.Type
	}
	svc.Labels = mergeLabels(spec.Labels, svc.Labels)
	if len(spec.Annotations) > 0 {
		svc.Annotations = map[string]string{}
		for k, v := range spec.Annotations {
			svc.Annotations[k] = v
		}
	}
	if spec.ClusterIP != nil {
		svc.Spec.ClusterIP = *spec.ClusterIP
	}
	if spec.LoadBalancerIP != nil && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = *spec.LoadBalancerIP
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerSourceRanges = spec.LoadBalancerSourceRanges
		svc.Spec.LoadBalancerClass = spec.LoadBalancerClass
	}
	if spec.PortName != nil && len(svc.Spec.Ports) > 0 {
		svc.Spec.Ports[0].Name = *spec.PortName
	}
	return svc
}

// legacyServiceType reads the deprecated spec.services list.
func legacyServiceType(tc *v1alpha1.TidbCluster, component string) corev1.ServiceType {
	for _, s := range tc.Spec.Services {
		if s.Name == component {
			return corev1.ServiceType(s.Type)
		}
	}
	return ""
}
