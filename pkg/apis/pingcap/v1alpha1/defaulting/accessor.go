package defaulting

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// Component names a TidbCluster component. The values are the JSON names of
// the spec fields (spec.pd, spec.tikv, …), so they can be used in field paths
// and in the app.kubernetes.io/component label.
type Component string

// The components NewComponentAccessor knows: discovery and every
// descriptor of package components (the constants are their names).
const (
	ComponentPD        Component = "pd"
	ComponentTiKV      Component = "tikv"
	ComponentTiDB      Component = "tidb"
	ComponentTiFlash   Component = "tiflash"
	ComponentTiCDC     Component = "ticdc"
	ComponentPump      Component = "pump"
	ComponentTiProxy   Component = "tiproxy"
	ComponentDiscovery Component = "discovery"
)

// DefaultBaseImage returns the untagged image component c runs when its
// baseImage is empty, such as "pingcap/pd" (its descriptor's BaseImage). It
// returns "" for the discovery component, which runs the operator's own
// image, and for unknown components.
func DefaultBaseImage(c Component) string {
	if d := components.Lookup(string(c)); d != nil {
		return d.BaseImage
	}
	return ""
}

// resolveBaseImage returns the base image component c uses (spec §2.2).
// An explicit baseImage wins. Otherwise the default base image applies when a
// version is known, because then the TiDB Operator defaults baseImage and the
// deprecated image is ignored; and also when no legacy image is set, so that a
// component without any image runs the untagged default image. Only a legacy
// image without any version keeps the base image empty.
func resolveBaseImage(c Component, baseImage, legacyImage, version string) string {
	if baseImage != "" {
		return baseImage
	}
	if version != "" || legacyImage == "" {
		return DefaultBaseImage(c)
	}
	return ""
}

// componentVersion is the component's version, else the cluster's.
func componentVersion(cs *v1alpha1.ComponentSpec, clusterVersion string) string {
	if cs.Version != nil && *cs.Version != "" {
		return *cs.Version
	}
	return clusterVersion
}

// ComponentAccessor answers "what value does this component effectively use"
// for the pod-level fields that exist both on the cluster (spec.*) and on the
// component (spec.<component>.*), following spec §2.1: a scalar set on the
// component wins; the maps nodeSelector, labels and annotations are merged
// with the component winning; the lists tolerations, imagePullSecrets and
// topologySpreadConstraints are the component's when non-empty.
//
// It reads the TidbCluster it was built from and never changes it; maps,
// slices and pointers it returns are copies the caller may modify. It works
// the same on a defaulted and an undefaulted cluster, and on a component that
// is absent (its own fields then count as unset).
type ComponentAccessor struct {
	component      Component
	cluster        *v1alpha1.TidbClusterSpec
	spec           *v1alpha1.ComponentSpec
	exists         bool
	baseImage      string
	serviceAccount string
}

// NewComponentAccessor returns the accessor of component c of tc. A nil tc,
// an absent component (spec.<c> == nil) or an unknown c yields an accessor
// that reports only cluster-level values and built-in defaults.
func NewComponentAccessor(tc *v1alpha1.TidbCluster, c Component) ComponentAccessor {
	a := ComponentAccessor{component: c, cluster: &noCluster, spec: &noComponent}
	if tc == nil {
		return a
	}
	a.cluster = &tc.Spec
	if c == ComponentDiscovery {
		// Discovery is a value, not a pointer: it always exists.
		a.set(&tc.Spec.Discovery.ComponentSpec, "", "")
	} else if d := components.Lookup(string(c)); d != nil {
		if f, ok := d.Spec(&tc.Spec); ok {
			a.set(f.Spec, *f.BaseImage, f.ServiceAccount)
		}
	}
	return a
}

// noCluster and noComponent stand for an absent cluster or component
// spec. Accessors only read them, so all share these (a sync builds
// dozens of accessors; each used to allocate its own 1.4 KB of empties).
var (
	noCluster   v1alpha1.TidbClusterSpec
	noComponent v1alpha1.ComponentSpec
)

func (a *ComponentAccessor) set(spec *v1alpha1.ComponentSpec, baseImage, serviceAccount string) {
	a.spec, a.exists, a.baseImage, a.serviceAccount = spec, true, baseImage, serviceAccount
}

// Component returns the component this accessor reads.
func (a ComponentAccessor) Component() Component { return a.component }

// Exists reports whether the component is configured (spec.<component> != nil);
// discovery always exists.
func (a ComponentAccessor) Exists() bool { return a.exists }

// Version returns the component's version, else the cluster's; "" when neither is set.
func (a ComponentAccessor) Version() string {
	return componentVersion(a.spec, a.cluster.Version)
}

// Image returns the main container's image (spec §2.2): baseImage:version,
// or the bare base image when no version is set, where an empty baseImage
// means the default image unless only the deprecated image is given, which is
// then returned as is. For discovery "" means "the operator's own image".
func (a ComponentAccessor) Image() string {
	version := a.Version()
	base := resolveBaseImage(a.component, a.baseImage, a.spec.Image, version)
	switch {
	case base == "":
		return a.spec.Image
	case version == "":
		return base
	default:
		return base + ":" + version
	}
}

// ImagePullPolicy returns the component's pull policy, else the cluster's, else IfNotPresent.
func (a ComponentAccessor) ImagePullPolicy() corev1.PullPolicy {
	if p := a.spec.ImagePullPolicy; p != nil && *p != "" {
		return *p
	}
	if a.cluster.ImagePullPolicy != "" {
		return a.cluster.ImagePullPolicy
	}
	return corev1.PullIfNotPresent
}

// ImagePullSecrets returns the component's pull secrets when non-empty, else the cluster's.
func (a ComponentAccessor) ImagePullSecrets() []corev1.LocalObjectReference {
	return deepCopySlice(firstNonEmpty(a.spec.ImagePullSecrets, a.cluster.ImagePullSecrets))
}

// ServiceAccount returns the component's service account, else the cluster's; "" means the namespace default.
func (a ComponentAccessor) ServiceAccount() string {
	if a.serviceAccount != "" {
		return a.serviceAccount
	}
	return a.cluster.ServiceAccount
}

// HostNetwork reports whether the pods use the host's network, from the component, else the cluster.
func (a ComponentAccessor) HostNetwork() bool {
	if a.spec.HostNetwork != nil {
		return *a.spec.HostNetwork
	}
	return a.cluster.HostNetwork != nil && *a.cluster.HostNetwork
}

// DNSPolicy returns the component's DNS policy, else the cluster's, else
// ClusterFirstWithHostNet on the host network and ClusterFirst otherwise,
// because a host-network pod with ClusterFirst would resolve through the
// node's resolver and miss the cluster's Services.
func (a ComponentAccessor) DNSPolicy() corev1.DNSPolicy {
	switch {
	case a.spec.DNSPolicy != "":
		return a.spec.DNSPolicy
	case a.cluster.DNSPolicy != "":
		return a.cluster.DNSPolicy
	case a.HostNetwork():
		return corev1.DNSClusterFirstWithHostNet
	default:
		return corev1.DNSClusterFirst
	}
}

// DNSConfig returns the component's DNS config, else the cluster's, else nil.
func (a ComponentAccessor) DNSConfig() *corev1.PodDNSConfig {
	return firstNonNil(a.spec.DNSConfig, a.cluster.DNSConfig).DeepCopy()
}

// Affinity returns the component's affinity, else the cluster's, else nil.
func (a ComponentAccessor) Affinity() *corev1.Affinity {
	return firstNonNil(a.spec.Affinity, a.cluster.Affinity).DeepCopy()
}

// PodSecurityContext returns the component's pod security context, else the cluster's, else nil.
func (a ComponentAccessor) PodSecurityContext() *corev1.PodSecurityContext {
	return firstNonNil(a.spec.PodSecurityContext, a.cluster.PodSecurityContext).DeepCopy()
}

// SecurityContext returns the component's container security context (there
// is no cluster-level one), else nil.
func (a ComponentAccessor) SecurityContext() *corev1.SecurityContext {
	return a.spec.SecurityContext.DeepCopy()
}

// AutomountServiceAccountToken returns the component's setting, else nil (the
// Kubernetes default, mount the token).
func (a ComponentAccessor) AutomountServiceAccountToken() *bool {
	if p := a.spec.AutomountServiceAccountToken; p != nil {
		v := *p
		return &v
	}
	return nil
}

// PriorityClassName returns the component's priority class, else the cluster's; "" means none.
func (a ComponentAccessor) PriorityClassName() string {
	if p := a.spec.PriorityClassName; p != nil && *p != "" {
		return *p
	}
	if p := a.cluster.PriorityClassName; p != nil {
		return *p
	}
	return ""
}

// SchedulerName returns the component's scheduler, else the cluster's; "" means the default scheduler.
func (a ComponentAccessor) SchedulerName() string {
	if s := a.spec.SchedulerName; s != nil && *s != "" {
		return *s
	}
	return a.cluster.SchedulerName
}

// NodeSelector returns the cluster's node selector merged with the component's (component wins); nil when both are empty.
func (a ComponentAccessor) NodeSelector() map[string]string {
	return mergeMaps(a.cluster.NodeSelector, a.spec.NodeSelector)
}

// Labels returns the cluster's pod labels merged with the component's (component wins); nil when both are empty.
func (a ComponentAccessor) Labels() map[string]string {
	return mergeMaps(a.cluster.Labels, a.spec.Labels)
}

// Annotations returns the cluster's pod annotations merged with the component's (component wins); nil when both are empty.
func (a ComponentAccessor) Annotations() map[string]string {
	return mergeMaps(a.cluster.Annotations, a.spec.Annotations)
}

// Tolerations returns the component's tolerations when non-empty, else the cluster's.
func (a ComponentAccessor) Tolerations() []corev1.Toleration {
	return deepCopySlice(firstNonEmpty(a.spec.Tolerations, a.cluster.Tolerations))
}

// TopologySpreadConstraints returns the component's constraints when non-empty,
// else the cluster's; the caller adds the component's label selector.
func (a ComponentAccessor) TopologySpreadConstraints() []v1alpha1.TopologySpreadConstraint {
	return deepCopySlice(firstNonEmpty(a.spec.TopologySpreadConstraints, a.cluster.TopologySpreadConstraints))
}

// ConfigUpdateStrategy returns the component's strategy, else the cluster's, else InPlace.
func (a ComponentAccessor) ConfigUpdateStrategy() v1alpha1.ConfigUpdateStrategy {
	if s := a.spec.ConfigUpdateStrategy; s != nil && *s != "" {
		return *s
	}
	if a.cluster.ConfigUpdateStrategy != "" {
		return a.cluster.ConfigUpdateStrategy
	}
	return v1alpha1.ConfigUpdateStrategyInPlace
}

// StatefulSetUpdateStrategy returns the component's StatefulSet update
// strategy, else the cluster's, else RollingUpdate.
func (a ComponentAccessor) StatefulSetUpdateStrategy() appsv1.StatefulSetUpdateStrategyType {
	switch {
	case a.spec.StatefulSetUpdateStrategy != "":
		return a.spec.StatefulSetUpdateStrategy
	case a.cluster.StatefulSetUpdateStrategy != "":
		return a.cluster.StatefulSetUpdateStrategy
	default:
		return appsv1.RollingUpdateStatefulSetStrategyType
	}
}

// PodManagementPolicy returns OrderedReady when the component (else the
// cluster) asks for it and Parallel otherwise, because the TiDB Operator
// honours only OrderedReady as an alternative to its Parallel default.
func (a ComponentAccessor) PodManagementPolicy() appsv1.PodManagementPolicyType {
	policy := a.spec.PodManagementPolicy
	if policy == "" {
		policy = a.cluster.PodManagementPolicy
	}
	if policy == appsv1.OrderedReadyPodManagement {
		return policy
	}
	return appsv1.ParallelPodManagement
}

// SuspendAction returns the component's suspend action, else the cluster's, else nil.
func (a ComponentAccessor) SuspendAction() *v1alpha1.SuspendAction {
	return firstNonNil(a.spec.SuspendAction, a.cluster.SuspendAction).DeepCopy()
}

// TerminationGracePeriodSeconds returns the component's grace period, or nil for the Kubernetes default.
func (a ComponentAccessor) TerminationGracePeriodSeconds() *int64 {
	if p := a.spec.TerminationGracePeriodSeconds; p != nil {
		v := *p
		return &v
	}
	return nil
}

// Env returns the component's extra environment variables (there is no cluster-level env).
func (a ComponentAccessor) Env() []corev1.EnvVar { return deepCopySlice(a.spec.Env) }

// EnvFrom returns the component's extra environment sources.
func (a ComponentAccessor) EnvFrom() []corev1.EnvFromSource { return deepCopySlice(a.spec.EnvFrom) }

// InitContainers returns the component's extra init containers.
func (a ComponentAccessor) InitContainers() []corev1.Container {
	return deepCopySlice(a.spec.InitContainers)
}

// AdditionalContainers returns the component's extra containers.
func (a ComponentAccessor) AdditionalContainers() []corev1.Container {
	return deepCopySlice(a.spec.AdditionalContainers)
}

// AdditionalVolumes returns the component's extra pod volumes.
func (a ComponentAccessor) AdditionalVolumes() []corev1.Volume {
	return deepCopySlice(a.spec.AdditionalVolumes)
}

// AdditionalVolumeMounts returns the component's extra main-container mounts.
func (a ComponentAccessor) AdditionalVolumeMounts() []corev1.VolumeMount {
	return deepCopySlice(a.spec.AdditionalVolumeMounts)
}

func firstNonNil[T any](vals ...*T) *T {
	for _, v := range vals {
		if v != nil {
			return v
		}
	}
	return nil
}

func firstNonEmpty[T any](component, cluster []T) []T {
	if len(component) > 0 {
		return component
	}
	return cluster
}

func mergeMaps(cluster, component map[string]string) map[string]string {
	if len(cluster)+len(component) == 0 {
		return nil
	}
	out := make(map[string]string, len(cluster)+len(component))
	for k, v := range cluster {
		out[k] = v
	}
	for k, v := range component {
		out[k] = v
	}
	return out
}

// deepCopySlice copies in element by element with the generated DeepCopyInto,
// so the caller may modify the result without touching the TidbCluster.
func deepCopySlice[T any, PT interface {
	*T
	DeepCopyInto(*T)
}](in []T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i := range in {
		PT(&in[i]).DeepCopyInto(&out[i])
	}
	return out
}
