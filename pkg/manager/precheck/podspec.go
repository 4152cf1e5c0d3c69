package precheck

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

var (
	restartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	dnsPolicies     = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
	preemptions     = []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}
)

// checkPodSpec checks a pod spec. extraVolumes names volumes a controller
// adds to the pods (StatefulSet claim templates), which mounts may use.
func checkPodSpec(spec *corev1.PodSpec, extraVolumes map[string]bool, p *field.Path) field.ErrorList {
	volumes, errs := checkVolumes(spec.Volumes, p.Child("volumes"))
	for name := range extraVolumes {
		volumes[name] = true
	}
	errs = append(errs, checkAllContainers(spec, volumes, p)...)
	errs = append(errs, checkScheduling(spec, p)...)
	errs = append(errs, checkDNS(spec, p)...)
	errs = append(errs, checkPodSecurityContext(spec.SecurityContext, p.Child("securityContext"))...)
	errs = append(errs, oneOf(p.Child("restartPolicy"), spec.RestartPolicy, restartPolicies...)...)
	errs = append(errs, nonNegative(p.Child("terminationGracePeriodSeconds"), spec.TerminationGracePeriodSeconds)...)
	errs = append(errs, optionalSubdomain(p.Child("serviceAccountName"), spec.ServiceAccountName)...)
	if spec.Hostname != "" {
		errs = append(errs, dnsLabel(p.Child("hostname"), spec.Hostname)...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dnsLabel(p.Child("subdomain"), spec.Subdomain)...)
	}
	// imagePullSecrets are not checked: the API server accepts any name
	// there (an empty one only draws a warning).
	for i, ha := range spec.HostAliases {
		hp := p.Child("hostAliases").Index(i)
		errs = append(errs, ipAddress(hp.Child("ip"), ha.IP)...)
		for j, h := range ha.Hostnames {
			errs = append(errs, invalidAll(hp.Child("hostnames").Index(j), h, utilvalidation.IsDNS1123Subdomain(h))...)
		}
	}
	return errs
}

// checkAllContainers checks init and regular containers (at least one
// regular one), their names unique across both lists, host ports unique in
// the pod and equal to the container port on the host network.
func checkAllContainers(spec *corev1.PodSpec, volumes map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "a pod needs at least one container"))
	}
	names := map[string]bool{}
	for _, list := range []struct {
		path       *field.Path
		containers []corev1.Container
	}{{p.Child("initContainers"), spec.InitContainers}, {p.Child("containers"), spec.Containers}} {
		for i := range list.containers {
			c, cp := &list.containers[i], list.path.Index(i)
			errs = append(errs, checkContainer(c, volumes, cp)...)
			if c.Name != "" && names[c.Name] {
				errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
			}
			names[c.Name] = true
		}
	}
	for i, ec := range spec.EphemeralContainers {
		if ec.Name != "" && names[ec.Name] {
			errs = append(errs, field.Duplicate(p.Child("ephemeralContainers").Index(i).Child("name"), ec.Name))
		}
		names[ec.Name] = true
	}
	return append(errs, checkHostPorts(spec, p.Child("containers"))...)
}

// checkHostPorts: a host port (with its IP and protocol) is used once in the
// pod, and on the host network it equals the container port.
func checkHostPorts(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			pp := p.Index(i).Child("ports").Index(j)
			if spec.HostNetwork && port.HostPort != 0 && port.HostPort != port.ContainerPort {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, "must match `hostPort` when `hostNetwork` is true"))
			}
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.HostIP, defaultProtocol(port.Protocol), port.HostPort)
			if seen[key] {
				errs = append(errs, field.Duplicate(pp.Child("hostPort"), key))
			}
			seen[key] = true
		}
	}
	return errs
}

// checkDNS: dnsPolicy enum (None needs a nameserver in dnsConfig); at most 3
// nameservers, each an IP; at most 32 search domains of at most 2048
// characters in all, each a DNS subdomain (underscores and a trailing dot
// tolerated, or "." alone, as current API servers do); named options.
func checkDNS(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies...)
	cfg := spec.DNSConfig
	if spec.DNSPolicy == corev1.DNSNone && (cfg == nil || len(cfg.Nameservers) == 0) {
		errs = append(errs, field.Required(p.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"))
	}
	if cfg == nil {
		return errs
	}
	cp := p.Child("dnsConfig")
	if len(cfg.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.TooMany(cp.Child("nameservers"), len(cfg.Nameservers), maxDNSNameservers))
	}
	for i, ns := range cfg.Nameservers {
		errs = append(errs, ipAddress(cp.Child("nameservers").Index(i), ns)...)
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.TooMany(cp.Child("searches"), len(cfg.Searches), maxDNSSearchPaths))
	}
	if n := len(strings.Join(cfg.Searches, " ")); n > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(cp.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %d characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range cfg.Searches {
		if s == "." {
			continue
		}
		msgs := utilvalidation.IsDNS1123SubdomainWithUnderscore(strings.TrimSuffix(s, "."))
		errs = append(errs, invalidAll(cp.Child("searches").Index(i), s, msgs)...)
	}
	for i, o := range cfg.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(cp.Child("options").Index(i).Child("name"), ""))
		}
	}
	return errs
}

// checkPodSecurityContext: user, group and fsGroup IDs in range, valid
// supplemental groups, fsGroupChangePolicy and profile enums, named and
// unique sysctls.
func checkPodSecurityContext(sc *corev1.PodSecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	errs := userID(p.Child("runAsUser"), sc.RunAsUser)
	errs = append(errs, groupID(p.Child("runAsGroup"), sc.RunAsGroup)...)
	errs = append(errs, groupID(p.Child("fsGroup"), sc.FSGroup)...)
	for i := range sc.SupplementalGroups {
		errs = append(errs, groupID(p.Child("supplementalGroups").Index(i), &sc.SupplementalGroups[i])...)
	}
	if sc.FSGroupChangePolicy != nil {
		errs = append(errs, requiredOneOf(p.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy,
			corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)...)
	}
	if sc.SupplementalGroupsPolicy != nil {
		errs = append(errs, requiredOneOf(p.Child("supplementalGroupsPolicy"), *sc.SupplementalGroupsPolicy,
			corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)...)
	}
	errs = append(errs, checkSeccomp(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, checkAppArmor(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	seen := map[string]bool{}
	for i, s := range sc.Sysctls {
		sp := p.Child("sysctls").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		} else if len(s.Name) > 253 || !sysctlName.MatchString(s.Name) {
			errs = append(errs, field.Invalid(sp.Child("name"), s.Name,
				"must be a sysctl name: segments of lower-case letters, digits, '-' and '_' joined by '.' or '/'"))
		} else if seen[s.Name] {
			errs = append(errs, field.Duplicate(sp.Child("name"), s.Name))
		}
		seen[s.Name] = true
	}
	return errs
}

// sysctlName is the API server's sysctl name grammar (net.core.somaxconn,
// kernel/shm_rmid_forced).
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

func userID(p *field.Path, id *int64) field.ErrorList {
	if id == nil {
		return nil
	}
	return invalidAll(p, *id, utilvalidation.IsValidUserID(*id))
}

func groupID(p *field.Path, id *int64) field.ErrorList {
	if id == nil {
		return nil
	}
	return invalidAll(p, *id, utilvalidation.IsValidGroupID(*id))
}

// checkSeccomp: a known type; a localhostProfile exactly for Localhost.
func checkSeccomp(s *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := requiredOneOf(p.Child("type"), s.Type, corev1.SeccompProfileTypeRuntimeDefault,
		corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeLocalhost)
	return append(errs, localhostProfile(p, s.Type == corev1.SeccompProfileTypeLocalhost, s.LocalhostProfile)...)
}

// checkAppArmor: as checkSeccomp for the AppArmor profile.
func checkAppArmor(s *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := requiredOneOf(p.Child("type"), s.Type, corev1.AppArmorProfileTypeRuntimeDefault,
		corev1.AppArmorProfileTypeUnconfined, corev1.AppArmorProfileTypeLocalhost)
	return append(errs, localhostProfile(p, s.Type == corev1.AppArmorProfileTypeLocalhost, s.LocalhostProfile)...)
}

func localhostProfile(p *field.Path, isLocalhost bool, profile *string) field.ErrorList {
	lp := p.Child("localhostProfile")
	switch {
	case isLocalhost && (profile == nil || *profile == ""):
		return field.ErrorList{field.Required(lp, "must be set when `type` is 'Localhost'")}
	case !isLocalhost && profile != nil:
		return field.ErrorList{field.Invalid(lp, *profile, "can only be set when `type` is 'Localhost'")}
	}
	return nil
}

// checkSchedulingNames: schedulerName, priorityClassName and
// runtimeClassName are DNS-1123 subdomains when set; preemptionPolicy enum.
func checkSchedulingNames(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	errs := optionalSubdomain(p.Child("schedulerName"), spec.SchedulerName)
	errs = append(errs, optionalSubdomain(p.Child("priorityClassName"), spec.PriorityClassName)...)
	if spec.PreemptionPolicy != nil {
		errs = append(errs, oneOf(p.Child("preemptionPolicy"), *spec.PreemptionPolicy, preemptions...)...)
	}
	if spec.RuntimeClassName != nil {
		errs = append(errs, optionalSubdomain(p.Child("runtimeClassName"), *spec.RuntimeClassName)...)
	}
	return errs
}
