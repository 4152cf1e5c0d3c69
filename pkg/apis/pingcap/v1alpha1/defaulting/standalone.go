package defaulting

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// NewStandaloneAccessor returns the accessor of a workload that is its own
// custom resource rather than a TidbCluster component (TidbDashboard,
// TidbNGMonitoring). inherited plays the cluster level (the resource's
// top-level pod fields, nil for none) and own the component level, with the
// precedence of NewComponentAccessor; the fields a TidbCluster has only on
// its components (env, extra containers and volumes, security context, …)
// fall back to inherited too when own leaves them empty. baseImage is the
// untagged image; Image() returns baseImage:version. Nothing is copied out
// of inherited or own until a method is called.
func NewStandaloneAccessor(name Component, inherited, own *v1alpha1.ComponentSpec, baseImage string) ComponentAccessor {
	if inherited == nil {
		inherited = &v1alpha1.ComponentSpec{}
	}
	if own == nil {
		own = &v1alpha1.ComponentSpec{}
	}
	merged := *own
	inheritComponentOnly(&merged, inherited)
	return ComponentAccessor{
		component: name,
		cluster:   clusterLevel(inherited),
		spec:      &merged,
		exists:    true,
		baseImage: baseImage,
	}
}

// clusterLevel puts the fields a TidbCluster also has at its top level into
// a TidbClusterSpec, so the accessor's precedence rules apply unchanged.
func clusterLevel(in *v1alpha1.ComponentSpec) *v1alpha1.TidbClusterSpec {
	out := &v1alpha1.TidbClusterSpec{
		ImagePullSecrets:          in.ImagePullSecrets,
		HostNetwork:               in.HostNetwork,
		Affinity:                  in.Affinity,
		PriorityClassName:         in.PriorityClassName,
		NodeSelector:              in.NodeSelector,
		Annotations:               in.Annotations,
		Labels:                    in.Labels,
		Tolerations:               in.Tolerations,
		DNSConfig:                 in.DNSConfig,
		DNSPolicy:                 in.DNSPolicy,
		StatefulSetUpdateStrategy: in.StatefulSetUpdateStrategy,
		PodManagementPolicy:       in.PodManagementPolicy,
		PodSecurityContext:        in.PodSecurityContext,
		TopologySpreadConstraints: in.TopologySpreadConstraints,
		SuspendAction:             in.SuspendAction,
	}
	if in.Version != nil {
		out.Version = *in.Version
	}
	if in.ImagePullPolicy != nil {
		out.ImagePullPolicy = *in.ImagePullPolicy
	}
	if in.SchedulerName != nil {
		out.SchedulerName = *in.SchedulerName
	}
	if in.ConfigUpdateStrategy != nil {
		out.ConfigUpdateStrategy = *in.ConfigUpdateStrategy
	}
	return out
}

// inheritComponentOnly fills the fields a TidbCluster has only per
// component from inherited where own leaves them unset.
func inheritComponentOnly(own, inherited *v1alpha1.ComponentSpec) {
	if len(own.Env) == 0 {
		own.Env = inherited.Env
	}
	if len(own.EnvFrom) == 0 {
		own.EnvFrom = inherited.EnvFrom
	}
	if len(own.InitContainers) == 0 {
		own.InitContainers = inherited.InitContainers
	}
	if len(own.AdditionalContainers) == 0 {
		own.AdditionalContainers = inherited.AdditionalContainers
	}
	if len(own.AdditionalVolumes) == 0 {
		own.AdditionalVolumes = inherited.AdditionalVolumes
	}
	if len(own.AdditionalVolumeMounts) == 0 {
		own.AdditionalVolumeMounts = inherited.AdditionalVolumeMounts
	}
	if own.SecurityContext == nil {
		own.SecurityContext = inherited.SecurityContext
	}
	if own.TerminationGracePeriodSeconds == nil {
		own.TerminationGracePeriodSeconds = inherited.TerminationGracePeriodSeconds
	}
	if own.AutomountServiceAccountToken == nil {
		own.AutomountServiceAccountToken = inherited.AutomountServiceAccountToken
	}
	if own.ReadinessProbe == nil {
		own.ReadinessProbe = inherited.ReadinessProbe
	}
}
