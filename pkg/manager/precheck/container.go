package precheck

import (
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	pullPolicies       = []corev1.PullPolicy{corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent}
	messagePolicies    = []corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}
	containerRestarts  = []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways, "OnFailure", "Never"}
	mountPropagations  = []corev1.MountPropagationMode{corev1.MountPropagationNone, corev1.MountPropagationHostToContainer, corev1.MountPropagationBidirectional}
	procMountTypes     = []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}
	containerResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}
)

// checkContainer checks one (init) container; volumes names the pod's
// volumes, which volume mounts must refer to.
func checkContainer(c *corev1.Container, volumes map[string]bool, p *field.Path) field.ErrorList {
	errs := dnsLabel(p.Child("name"), c.Name)
	switch {
	case c.Image == "":
		errs = append(errs, field.Required(p.Child("image"), ""))
	case c.Image != strings.TrimSpace(c.Image):
		errs = append(errs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, oneOf(p.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies...)...)
	errs = append(errs, oneOf(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, messagePolicies...)...)
	if c.RestartPolicy != nil {
		errs = append(errs, requiredOneOf(p.Child("restartPolicy"), *c.RestartPolicy, containerRestarts...)...)
	}
	errs = append(errs, checkContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, checkEnv(c.Env, p.Child("env"))...)
	errs = append(errs, checkEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, checkResources(&c.Resources, p.Child("resources"))...)
	errs = append(errs, checkVolumeMounts(c.VolumeMounts, volumes, p.Child("volumeMounts"))...)
	errs = append(errs, checkProbe(c.LivenessProbe, true, p.Child("livenessProbe"))...)
	errs = append(errs, checkProbe(c.ReadinessProbe, false, p.Child("readinessProbe"))...)
	errs = append(errs, checkProbe(c.StartupProbe, true, p.Child("startupProbe"))...)
	if c.Lifecycle != nil {
		errs = append(errs, checkLifecycleHandler(c.Lifecycle.PostStart, p.Child("lifecycle", "postStart"))...)
		errs = append(errs, checkLifecycleHandler(c.Lifecycle.PreStop, p.Child("lifecycle", "preStop"))...)
	}
	return append(errs, checkSecurityContext(c.SecurityContext, p.Child("securityContext"))...)
}

// checkContainerPorts: containerPort 1–65535, hostPort 0–65535, a known
// protocol, a host IP, and names that are IANA service names (at most 15
// characters) unique in the container.
func checkContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		pp := p.Index(i)
		if port.Name != "" {
			errs = append(errs, invalidAll(pp.Child("name"), port.Name, utilvalidation.IsValidPortName(port.Name))...)
			if names[port.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		errs = append(errs, portNumber(pp.Child("containerPort"), port.ContainerPort)...)
		if port.HostPort != 0 {
			errs = append(errs, portNumber(pp.Child("hostPort"), port.HostPort)...)
		}
		if port.HostIP != "" {
			errs = append(errs, ipAddress(pp.Child("hostIP"), port.HostIP)...)
		}
		errs = append(errs, oneOf(pp.Child("protocol"), port.Protocol, protocols...)...)
	}
	return errs
}

// checkEnv: names are printable ASCII without '=' (the relaxed rule of API
// servers ≥ 1.32, GA in 1.34); value and valueFrom are exclusive; valueFrom
// has exactly one source, each with its required fields.
func checkEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range env {
		ep := p.Index(i)
		errs = append(errs, envVarName(ep.Child("name"), ev.Name)...)
		if ev.ValueFrom == nil {
			continue
		}
		vp := ep.Child("valueFrom")
		if ev.Value != "" {
			errs = append(errs, field.Invalid(vp, "", "may not be specified when `value` is not empty"))
		}
		switch n := countSet(ev.ValueFrom); {
		case n == 0:
			errs = append(errs, field.Invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(vp, "", "may not have more than one field specified at a time"))
		}
		errs = append(errs, checkEnvSource(ev.ValueFrom, vp)...)
	}
	return errs
}

func envVarName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalidAll(p, name, utilvalidation.IsRelaxedEnvVarName(name))
}

func checkEnvSource(s *corev1.EnvVarSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.FieldRef != nil && s.FieldRef.FieldPath == "" {
		errs = append(errs, field.Required(p.Child("fieldRef", "fieldPath"), ""))
	}
	if s.ResourceFieldRef != nil && s.ResourceFieldRef.Resource == "" {
		errs = append(errs, field.Required(p.Child("resourceFieldRef", "resource"), ""))
	}
	if r := s.ConfigMapKeyRef; r != nil {
		errs = append(errs, keyRef(p.Child("configMapKeyRef"), r.Name, r.Key)...)
	}
	if r := s.SecretKeyRef; r != nil {
		errs = append(errs, keyRef(p.Child("secretKeyRef"), r.Name, r.Key)...)
	}
	if r := s.FileKeyRef; r != nil {
		errs = append(errs, dnsLabel(p.Child("fileKeyRef", "volumeName"), r.VolumeName)...)
		if r.Path == "" {
			errs = append(errs, field.Required(p.Child("fileKeyRef", "path"), ""))
		}
		errs = append(errs, relativePath(p.Child("fileKeyRef", "path"), r.Path, false)...)
	}
	return errs
}

// keyRef: a ConfigMap or Secret key selector names its object (a DNS-1123
// subdomain) and a valid key.
func keyRef(p *field.Path, name, key string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, optionalSubdomain(p.Child("name"), name)...)
	}
	if key == "" {
		return append(errs, field.Required(p.Child("key"), ""))
	}
	return append(errs, invalidAll(p.Child("key"), key, utilvalidation.IsConfigMapKey(key))...)
}

// checkEnvFrom: exactly one of configMapRef and secretRef, naming its
// object; a prefix, when set, follows the relaxed variable name rule.
func checkEnvFrom(sources []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range sources {
		s, sp := &sources[i], p.Index(i)
		if s.Prefix != "" {
			errs = append(errs, invalidAll(sp.Child("prefix"), s.Prefix, utilvalidation.IsRelaxedEnvVarName(s.Prefix))...)
		}
		switch countSet(s) {
		case 0:
			errs = append(errs, field.Invalid(sp, "", "must specify one of: `configMapRef` or `secretRef`"))
		case 1:
		default:
			errs = append(errs, field.Invalid(sp, "", "may not have more than one field specified at a time"))
		}
		if s.ConfigMapRef != nil {
			errs = append(errs, requiredSubdomain(sp.Child("configMapRef", "name"), s.ConfigMapRef.Name)...)
		}
		if s.SecretRef != nil {
			errs = append(errs, requiredSubdomain(sp.Child("secretRef", "name"), s.SecretRef.Name)...)
		}
	}
	return errs
}

func requiredSubdomain(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return optionalSubdomain(p, v)
}

// checkResources: valid names and non-negative quantities in limits and
// requests; a request at most its limit; resources that cannot be
// overcommitted (huge pages, extended resources) need a limit equal to the
// request.
func checkResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	lp, rp := p.Child("limits"), p.Child("requests")
	errs := checkResourceList(r.Limits, lp, true)
	errs = append(errs, checkResourceList(r.Requests, rp, true)...)
	for _, name := range sortedKeys(r.Requests) {
		req := r.Requests[corev1.ResourceName(name)]
		limit, hasLimit := r.Limits[corev1.ResourceName(name)]
		kp := rp.Key(name)
		switch {
		case isHuge(req) || (hasLimit && isHuge(limit)):
			// Already reported by checkResourceList.
		case overcommitAllowed(name):
			if hasLimit && req.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(kp, req.String(), "must be less than or equal to "+name+" limit of "+limit.String()))
			}
		case !hasLimit:
			errs = append(errs, field.Forbidden(rp.Key(name), "Limit must be set for non overcommitable resources"))
		case req.Cmp(limit) != 0:
			errs = append(errs, field.Invalid(kp, req.String(), "must be equal to "+name+" limit of "+limit.String()))
		}
	}
	return errs
}

// checkResourceList checks resource names (qualified names; an unprefixed
// name must be a standard one when container is set) and that quantities
// are not negative.
func checkResourceList(list corev1.ResourceList, p *field.Path, container bool) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(list) {
		kp := p.Key(name)
		errs = append(errs, invalidAll(kp, name, utilvalidation.IsQualifiedName(name))...)
		if container && !strings.Contains(name, "/") && !isStandardContainerResource(name) {
			errs = append(errs, field.Invalid(kp, name, "must be a standard resource for containers"))
		}
		errs = append(errs, nonNegativeQuantity(kp, list[corev1.ResourceName(name)])...)
	}
	return errs
}

func isStandardContainerResource(name string) bool {
	for _, r := range containerResources {
		if string(r) == name {
			return true
		}
	}
	return strings.HasPrefix(name, corev1.ResourceHugePagesPrefix)
}

// overcommitAllowed: native resources other than huge pages may be
// requested below their limit.
func overcommitAllowed(name string) bool {
	if strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return false
	}
	domain, _, prefixed := strings.Cut(name, "/")
	return !prefixed || domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// nonNegativeQuantity rejects a negative quantity, and one beyond the range
// of a float64 (such as "1e99999999"), because comparing or printing that
// takes the arbitrary-precision arithmetic seconds to hours and no real
// resource is that large.
func nonNegativeQuantity(p *field.Path, q resource.Quantity) field.ErrorList {
	if isHuge(q) {
		return field.ErrorList{field.Invalid(p, "", "must be a quantity within the range of a float64")}
	}
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, q.String(), validation.IsNegativeErrorMsg)}
	}
	return nil
}

// isHuge reports whether q is beyond the range of a float64; it costs no
// arbitrary-precision arithmetic.
func isHuge(q resource.Quantity) bool {
	return math.IsInf(q.AsApproximateFloat64(), 0)
}
