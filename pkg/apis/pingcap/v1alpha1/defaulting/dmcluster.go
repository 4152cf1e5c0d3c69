package defaulting

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The components of a DMCluster, for NewDMAccessor and the labels of their
// objects; ComponentDiscovery is the DM cluster's discovery.
const (
	ComponentDMMaster Component = "dm-master"
	ComponentDMWorker Component = "dm-worker"
)

// DefaultDMBaseImage is the untagged image of dm-master and dm-worker.
const DefaultDMBaseImage = "pingcap/dm"

// Defaults of a DMCluster applied in memory (TiDB Operator v1.6's).
const (
	defaultDMStorageSize      = "10Gi"
	defaultDMMaxFailoverCount = int32(3)
)

// DefaultDMCluster fills dc's unset fields, in memory only, with the values
// the TiDB Operator v1.6 assumes: baseImage pingcap/dm, storageSize 10Gi,
// maxFailoverCount 3, imagePullPolicy IfNotPresent, pvReclaimPolicy Retain,
// timezone UTC. It never fails.
func DefaultDMCluster(dc *v1alpha1.DMCluster) {
	s := &dc.Spec
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.PVReclaimPolicy == nil {
		p := corev1.PersistentVolumeReclaimRetain
		s.PVReclaimPolicy = &p
	}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	defaultDMMember(&s.Master.BaseImage, &s.Master.StorageSize, &s.Master.MaxFailoverCount)
	if s.Worker != nil {
		defaultDMMember(&s.Worker.BaseImage, &s.Worker.StorageSize, &s.Worker.MaxFailoverCount)
	}
}

func defaultDMMember(baseImage, storageSize *string, maxFailover **int32) {
	if *baseImage == "" {
		*baseImage = DefaultDMBaseImage
	}
	if *storageSize == "" {
		*storageSize = defaultDMStorageSize
	}
	if *maxFailover == nil {
		n := defaultDMMaxFailoverCount
		*maxFailover = &n
	}
}

// NewDMAccessor returns the accessor of a DMCluster's component c
// (ComponentDMMaster, ComponentDMWorker or ComponentDiscovery): the
// cluster's top-level pod fields under the component's own, with the
// precedence of NewComponentAccessor. Image() is baseImage:version, the
// version the component's, else the cluster's; the legacy image field is
// not read for dm-master and dm-worker (as in v1.6). A worker that dc does
// not have yields an accessor over an empty spec.
func NewDMAccessor(dc *v1alpha1.DMCluster, c Component) ComponentAccessor {
	inherited := dmClusterLevel(&dc.Spec)
	var own *v1alpha1.ComponentSpec
	base := ""
	switch c {
	case ComponentDMMaster:
		own, base = &dc.Spec.Master.ComponentSpec, dc.Spec.Master.BaseImage
	case ComponentDMWorker:
		if w := dc.Spec.Worker; w != nil {
			own, base = &w.ComponentSpec, w.BaseImage
		}
	case ComponentDiscovery:
		own = &dc.Spec.Discovery.ComponentSpec
	}
	if base == "" && c != ComponentDiscovery {
		base = DefaultDMBaseImage
	}
	if own != nil && c != ComponentDiscovery {
		o := *own
		o.Image = ""
		own = &o
	}
	return NewStandaloneAccessor(c, inherited, own, base)
}

// dmClusterLevel is a DMCluster's top-level pod fields as a ComponentSpec.
func dmClusterLevel(s *v1alpha1.DMClusterSpec) *v1alpha1.ComponentSpec {
	out := &v1alpha1.ComponentSpec{
		ImagePullSecrets:          s.ImagePullSecrets,
		HostNetwork:               s.HostNetwork,
		Affinity:                  s.Affinity,
		PriorityClassName:         s.PriorityClassName,
		NodeSelector:              s.NodeSelector,
		Annotations:               s.Annotations,
		Labels:                    s.Labels,
		Tolerations:               s.Tolerations,
		DNSConfig:                 s.DNSConfig,
		DNSPolicy:                 s.DNSPolicy,
		StatefulSetUpdateStrategy: s.StatefulSetUpdateStrategy,
		PodManagementPolicy:       s.PodManagementPolicy,
		PodSecurityContext:        s.PodSecurityContext,
		TopologySpreadConstraints: s.TopologySpreadConstraints,
		SuspendAction:             s.SuspendAction,
	}
	if s.Version != "" {
		out.Version = &s.Version
	}
	if s.ImagePullPolicy != "" {
		out.ImagePullPolicy = &s.ImagePullPolicy
	}
	if s.SchedulerName != "" {
		out.SchedulerName = &s.SchedulerName
	}
	if s.ConfigUpdateStrategy != "" {
		out.ConfigUpdateStrategy = &s.ConfigUpdateStrategy
	}
	return out
}
