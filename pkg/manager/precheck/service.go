package precheck

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	serviceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}
	protocols        = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
	trafficPolicies  = []string{"Cluster", "Local"}
	sessionAffinites = []corev1.ServiceAffinity{corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP}
	ipFamilyPolicies = []corev1.IPFamilyPolicy{corev1.IPFamilyPolicySingleStack,
		corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack}
	ipFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
)

// checkService checks a Service: a DNS-1035 name, metadata, and the spec.
func checkService(s *corev1.Service, root *field.Path) field.ErrorList {
	errs := checkObjectMeta(&s.ObjectMeta, nameIsDNS1035Label, root.Child("metadata"))
	return append(errs, checkServiceSpec(&s.Spec, root.Child("spec"))...)
}

// serviceType is the type the API server defaults an empty one to.
func serviceType(spec *corev1.ServiceSpec) corev1.ServiceType {
	if spec.Type == "" {
		return corev1.ServiceTypeClusterIP
	}
	return spec.Type
}

func isHeadless(spec *corev1.ServiceSpec) bool {
	return spec.ClusterIP == corev1.ClusterIPNone
}

func checkServiceSpec(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("type"), spec.Type, serviceTypes...)
	errs = append(errs, checkServicePorts(spec, p.Child("ports"))...)
	errs = append(errs, checkClusterIPs(spec, p)...)
	errs = append(errs, checkExternalName(spec, p)...)
	errs = append(errs, checkLoadBalancerFields(spec, p)...)
	errs = append(errs, checkTrafficPolicies(spec, p)...)
	errs = append(errs, checkLabels(spec.Selector, p.Child("selector"))...)
	errs = append(errs, oneOf(p.Child("sessionAffinity"), spec.SessionAffinity, sessionAffinites...)...)
	errs = append(errs, checkIPFamilies(spec, p)...)
	for i, ip := range spec.ExternalIPs {
		errs = append(errs, ipAddress(p.Child("externalIPs").Index(i), ip)...)
	}
	return errs
}

// checkServicePorts: at least one port unless headless or ExternalName;
// names required when more than one, DNS-1123 labels and unique; port and
// nodePort numbers; no duplicate port/protocol or nodePort/protocol pairs;
// no nodePort on a ClusterIP Service.
func checkServicePorts(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Ports) == 0 && serviceType(spec) != corev1.ServiceTypeExternalName && !isHeadless(spec) {
		errs = append(errs, field.Required(p, ""))
	}
	names := map[string]bool{}
	ports := map[string]bool{}
	nodePorts := map[string]bool{}
	for i := range spec.Ports {
		sp, ip := &spec.Ports[i], p.Index(i)
		errs = append(errs, checkServicePort(sp, len(spec.Ports) > 1, ip)...)
		if sp.Name != "" && names[sp.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), sp.Name))
		}
		names[sp.Name] = true
		key := fmt.Sprintf("%d/%s", sp.Port, defaultProtocol(sp.Protocol))
		if ports[key] {
			errs = append(errs, field.Duplicate(ip, key))
		}
		ports[key] = true
		if sp.NodePort == 0 {
			continue
		}
		if serviceType(spec) == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Forbidden(ip.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		nodeKey := fmt.Sprintf("%d/%s", sp.NodePort, defaultProtocol(sp.Protocol))
		if nodePorts[nodeKey] {
			errs = append(errs, field.Duplicate(ip.Child("nodePort"), nodeKey))
		}
		nodePorts[nodeKey] = true
	}
	return errs
}

func checkServicePort(sp *corev1.ServicePort, nameRequired bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sp.Name != "" {
		errs = append(errs, dnsLabel(p.Child("name"), sp.Name)...)
	} else if nameRequired {
		errs = append(errs, field.Required(p.Child("name"), "required when the Service has more than one port"))
	}
	errs = append(errs, portNumber(p.Child("port"), sp.Port)...)
	errs = append(errs, oneOf(p.Child("protocol"), sp.Protocol, protocols...)...)
	if sp.NodePort != 0 {
		errs = append(errs, portNumber(p.Child("nodePort"), sp.NodePort)...)
	}
	// A zero or empty targetPort is defaulted to port by the API server.
	if sp.TargetPort != intstr.FromInt32(0) && sp.TargetPort != intstr.FromString("") {
		errs = append(errs, namedOrNumberedPort(p.Child("targetPort"), sp.TargetPort)...)
	}
	if sp.AppProtocol != nil {
		errs = append(errs, qualifiedName(p.Child("appProtocol"), *sp.AppProtocol)...)
	}
	return errs
}

// namedOrNumberedPort checks a required int-or-string port reference: a
// port number 1–65535 or an IANA service name.
func namedOrNumberedPort(p *field.Path, port intstr.IntOrString) field.ErrorList {
	if port.Type != intstr.String {
		return portNumber(p, port.IntVal)
	}
	if port.StrVal == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalidAll(p, port.StrVal, utilvalidation.IsValidPortName(port.StrVal))
}

func defaultProtocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// checkClusterIPs: clusterIP and clusterIPs are "", "None" or IPs, the first
// of clusterIPs equals clusterIP, and NodePort and LoadBalancer Services are
// not headless.
func checkClusterIPs(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.ClusterIP != "" && !isHeadless(spec) {
		errs = append(errs, ipAddress(p.Child("clusterIP"), spec.ClusterIP)...)
	}
	for i, ip := range spec.ClusterIPs {
		if ip != corev1.ClusterIPNone {
			errs = append(errs, ipAddress(p.Child("clusterIPs").Index(i), ip)...)
		}
	}
	if len(spec.ClusterIPs) > 0 && spec.ClusterIP != "" && spec.ClusterIPs[0] != spec.ClusterIP {
		errs = append(errs, field.Invalid(p.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "must match `clusterIP` when set"))
	}
	if t := serviceType(spec); isHeadless(spec) && (t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer) {
		errs = append(errs, field.Invalid(p.Child("clusterIP"), spec.ClusterIP, fmt.Sprintf("may not be set to 'None' for %s services", t)))
	}
	return errs
}

// checkExternalName: an ExternalName Service names a DNS subdomain and has
// no cluster IP.
func checkExternalName(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	if serviceType(spec) != corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	if spec.ClusterIP != "" {
		errs = append(errs, field.Forbidden(p.Child("clusterIP"), "may not be set for ExternalName services"))
	}
	if spec.ExternalName == "" {
		return append(errs, field.Required(p.Child("externalName"), ""))
	}
	name := strings.TrimSuffix(spec.ExternalName, ".")
	return append(errs, invalidAll(p.Child("externalName"), spec.ExternalName, utilvalidation.IsDNS1123Subdomain(name))...)
}

// checkLoadBalancerFields: loadBalancerSourceRanges, loadBalancerClass and
// allocateLoadBalancerNodePorts only on LoadBalancer Services; source ranges
// are CIDRs (surrounding spaces tolerated, as by the API server);
// loadBalancerIP is an IP.
func checkLoadBalancerFields(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	isLB := serviceType(spec) == corev1.ServiceTypeLoadBalancer
	if len(spec.LoadBalancerSourceRanges) > 0 && !isLB {
		errs = append(errs, field.Forbidden(p.Child("loadBalancerSourceRanges"), "may only be used when `type` is 'LoadBalancer'"))
	}
	for i, r := range spec.LoadBalancerSourceRanges {
		errs = append(errs, cidr(p.Child("loadBalancerSourceRanges").Index(i), strings.TrimSpace(r))...)
	}
	if spec.LoadBalancerClass != nil {
		if !isLB {
			errs = append(errs, field.Forbidden(p.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		}
		errs = append(errs, qualifiedName(p.Child("loadBalancerClass"), *spec.LoadBalancerClass)...)
	}
	if spec.AllocateLoadBalancerNodePorts != nil && !isLB {
		errs = append(errs, field.Forbidden(p.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.LoadBalancerIP != "" {
		errs = append(errs, ipAddress(p.Child("loadBalancerIP"), spec.LoadBalancerIP)...)
	}
	return errs
}

// checkTrafficPolicies: both policies are Cluster or Local; an external
// policy and a healthCheckNodePort only on externally reachable Services
// (NodePort, LoadBalancer, or with externalIPs), the latter only for a
// LoadBalancer with policy Local.
func checkTrafficPolicies(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("externalTrafficPolicy"), string(spec.ExternalTrafficPolicy), trafficPolicies...)
	if spec.InternalTrafficPolicy != nil {
		errs = append(errs, oneOf(p.Child("internalTrafficPolicy"), string(*spec.InternalTrafficPolicy), trafficPolicies...)...)
	}
	t := serviceType(spec)
	external := t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer ||
		(t == corev1.ServiceTypeClusterIP && len(spec.ExternalIPs) > 0)
	if spec.ExternalTrafficPolicy != "" && !external {
		errs = append(errs, field.Invalid(p.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
	}
	if spec.HealthCheckNodePort != 0 {
		if t != corev1.ServiceTypeLoadBalancer || spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
			errs = append(errs, field.Invalid(p.Child("healthCheckNodePort"), spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
		errs = append(errs, portNumber(p.Child("healthCheckNodePort"), spec.HealthCheckNodePort)...)
	}
	return errs
}

// checkIPFamilies: ipFamilyPolicy and ipFamilies enums, at most two
// distinct families.
func checkIPFamilies(spec *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.IPFamilyPolicy != nil {
		errs = append(errs, oneOf(p.Child("ipFamilyPolicy"), *spec.IPFamilyPolicy, ipFamilyPolicies...)...)
	}
	if len(spec.IPFamilies) > 2 {
		errs = append(errs, field.TooMany(p.Child("ipFamilies"), len(spec.IPFamilies), 2))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		errs = append(errs, requiredOneOf(p.Child("ipFamilies").Index(i), f, ipFamilies...)...)
		if seen[f] {
			errs = append(errs, field.Duplicate(p.Child("ipFamilies").Index(i), f))
		}
		seen[f] = true
	}
	return errs
}
