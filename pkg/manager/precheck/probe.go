package precheck

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkProbe: exactly one handler with a valid port; non-negative timings;
// a success threshold of 1 for liveness and startup probes (mustBeOne).
func checkProbe(pr *corev1.Probe, mustBeOne bool, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := checkHandlerCount(countSet(&pr.ProbeHandler), p)
	errs = append(errs, checkHandlerPorts(pr.HTTPGet, pr.TCPSocket, p)...)
	if pr.GRPC != nil {
		errs = append(errs, portNumber(p.Child("grpc", "port"), pr.GRPC.Port)...)
	}
	errs = append(errs, nonNegative(p.Child("initialDelaySeconds"), &pr.InitialDelaySeconds)...)
	errs = append(errs, nonNegative(p.Child("timeoutSeconds"), &pr.TimeoutSeconds)...)
	errs = append(errs, nonNegative(p.Child("periodSeconds"), &pr.PeriodSeconds)...)
	errs = append(errs, nonNegative(p.Child("successThreshold"), &pr.SuccessThreshold)...)
	errs = append(errs, nonNegative(p.Child("failureThreshold"), &pr.FailureThreshold)...)
	if mustBeOne && pr.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	if g := pr.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

// checkLifecycleHandler: exactly one action with a valid port.
func checkLifecycleHandler(h *corev1.LifecycleHandler, p *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	errs := checkHandlerCount(countSet(h), p)
	return append(errs, checkHandlerPorts(h.HTTPGet, h.TCPSocket, p)...)
}

func checkHandlerCount(n int, p *field.Path) field.ErrorList {
	switch {
	case n == 0:
		return field.ErrorList{field.Required(p, "must specify a handler type")}
	case n > 1:
		return field.ErrorList{field.Forbidden(p, "may not specify more than 1 handler type")}
	}
	return nil
}

func checkHandlerPorts(h *corev1.HTTPGetAction, t *corev1.TCPSocketAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h != nil {
		errs = append(errs, namedOrNumberedPort(p.Child("httpGet", "port"), h.Port)...)
		errs = append(errs, oneOf(p.Child("httpGet", "scheme"), h.Scheme, corev1.URISchemeHTTP, corev1.URISchemeHTTPS)...)
	}
	if t != nil {
		errs = append(errs, namedOrNumberedPort(p.Child("tcpSocket", "port"), t.Port)...)
	}
	return errs
}

// checkSecurityContext checks a container's security context: user and
// group IDs in range, privilege escalation consistent with privileged and
// CAP_SYS_ADMIN, procMount and profile enums.
func checkSecurityContext(sc *corev1.SecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	errs := userID(p.Child("runAsUser"), sc.RunAsUser)
	errs = append(errs, groupID(p.Child("runAsGroup"), sc.RunAsGroup)...)
	if sc.ProcMount != nil {
		errs = append(errs, oneOf(p.Child("procMount"), *sc.ProcMount, procMountTypes...)...)
	}
	errs = append(errs, checkSeccomp(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, checkAppArmor(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		return errs
	}
	ap := p.Child("allowPrivilegeEscalation")
	if sc.Privileged != nil && *sc.Privileged {
		errs = append(errs, field.Invalid(ap, false, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			if c == "SYS_ADMIN" || c == "CAP_SYS_ADMIN" {
				errs = append(errs, field.Invalid(ap, false, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
			}
		}
	}
	return errs
}
