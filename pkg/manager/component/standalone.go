package component

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Standalone names the StatefulSet of a workload that is its own custom
// resource (TidbDashboard, TidbNGMonitoring) rather than a TidbCluster
// component: its name, namespace, the labels of its pods (also its
// selector), and the TZ of its containers ("" is UTC).
type Standalone struct {
	Name, Namespace string
	PodLabels       map[string]string
	Timezone        string
}

// NewStandaloneStatefulSet builds such a workload's StatefulSet with the
// same pod builder as the TidbCluster components (NewStatefulSet): the pod
// fields come from acc (defaulting.NewStandaloneAccessor), the main
// container, volumes and claims from spec. It is pure and fails only on an
// unreadable storage volume size or an additional container that cannot be
// merged into a generated one.
func NewStandaloneStatefulSet(w Standalone, acc defaulting.ComponentAccessor, spec PodSpec) (*appsv1.StatefulSet, error) {
	// The pod builder reads only the timezone from the cluster.
	tz := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{Timezone: w.Timezone}}
	main, err := mainContainer(tz, acc, spec)
	if err != nil {
		return nil, err
	}
	containers, err := mergeContainers(append(append([]corev1.Container{}, spec.Sidecars...), main), acc.AdditionalContainers())
	if err != nil {
		return nil, err
	}
	vcts, err := volumeClaims(tz, spec, w.PodLabels)
	if err != nil {
		return nil, err
	}
	pod := corev1.PodSpec{
		SchedulerName:                 acc.SchedulerName(),
		Affinity:                      acc.Affinity(),
		NodeSelector:                  acc.NodeSelector(),
		Tolerations:                   acc.Tolerations(),
		PriorityClassName:             acc.PriorityClassName(),
		HostNetwork:                   acc.HostNetwork(),
		DNSPolicy:                     acc.DNSPolicy(),
		DNSConfig:                     acc.DNSConfig(),
		SecurityContext:               acc.PodSecurityContext(),
		ImagePullSecrets:              acc.ImagePullSecrets(),
		ServiceAccountName:            acc.ServiceAccount(),
		AutomountServiceAccountToken:  acc.AutomountServiceAccountToken(),
		TerminationGracePeriodSeconds: acc.TerminationGracePeriodSeconds(),
		InitContainers:                acc.InitContainers(),
		Containers:                    containers,
		Volumes:                       append(podVolumes(spec), acc.AdditionalVolumes()...),
		TopologySpreadConstraints:     topologySpread(acc.TopologySpreadConstraints(), w.PodLabels),
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, Labels: copyLabels(w.PodLabels)},
		Spec: appsv1.StatefulSetSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: copyLabels(w.PodLabels)},
			ServiceName:          spec.ServiceName,
			PodManagementPolicy:  acc.PodManagementPolicy(),
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: acc.StatefulSetUpdateStrategy()},
			VolumeClaimTemplates: vcts,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      mergeLabels(acc.Labels(), w.PodLabels),
					Annotations: podAnnotations(acc.Annotations(), spec.MetricsPort),
				},
				Spec: pod,
			},
		},
	}, nil
}

// NewStandaloneService builds such a workload's client Service shaped by
// the user's ServiceSpec like ClientService does (spec may be nil), labelled
// with podLabels plus used-by=end-user and selecting podLabels.
func NewStandaloneService(namespace, name string, podLabels map[string]string, spec *v1alpha1.ServiceSpec, ports ...corev1.ServicePort) *corev1.Service {
	svc := ClientService(&v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}, "", name, spec, ports...)
	ours := label.Label(copyLabels(podLabels)).UsedBy(label.UsedByEndUser).Labels()
	if spec != nil {
		svc.Labels = mergeLabels(spec.Labels, ours)
	} else {
		svc.Labels = ours
	}
	svc.Spec.Selector = copyLabels(podLabels)
	return svc
}

// NewStandaloneHeadlessService builds such a workload's headless Service
// (no cluster IP, not-ready addresses published), labelled with podLabels
// plus used-by=peer and selecting podLabels.
func NewStandaloneHeadlessService(namespace, name string, podLabels map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: label.Label(copyLabels(podLabels)).UsedBy(label.UsedByPeer).Labels()},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Ports:                    ports,
			Selector:                 copyLabels(podLabels),
			PublishNotReadyAddresses: true,
		},
	}
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
