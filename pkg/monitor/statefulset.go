package monitor

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Mount points and volume names of the monitor pod.
const (
	DataDir          = "/data"
	ConfigDir        = "/etc/prometheus/config"
	RulesRoot        = "/prometheus-rules"
	DashboardsRoot   = "/grafana-dashboard-definitions/tidb"
	DashboardsDir    = DashboardsRoot + "/dashboards"
	ProvisioningDir  = "/etc/grafana/provisioning"
	DataVolume       = "monitor-data"
	configVolume     = "prometheus-config"
	rulesVolume      = "prometheus-rules"
	dashboardsVolume = "grafana-dashboard"
	grafanaVolume    = "grafana-config"
	extRulesVolume   = "prometheus-external-rules"
)

// Default images, used when a container names no baseImage or version.
const (
	DefaultPrometheusImage     = "prom/prometheus:v2.27.1"
	DefaultGrafanaImage        = "grafana/grafana:7.5.11"
	DefaultReloaderImage       = "pingcap/tidb-monitor-reloader:v1.0.1"
	DefaultConfigReloaderImage = "quay.io/prometheus-operator/prometheus-config-reloader:v0.49.0"
	DefaultInitializerBase     = "pingcap/tidb-monitor-initializer"
	DefaultThanosImage         = "thanosio/thanos:v0.17.2"
)

// NewStatefulSets builds one StatefulSet per shard (see NewStatefulSet).
func NewStatefulSets(tm *v1alpha1.TidbMonitor, targets []Target) ([]*appsv1.StatefulSet, error) {
	shards := Shards(tm)
	out := make([]*appsv1.StatefulSet, 0, shards)
	for i := int32(0); i < shards; i++ {
		sts, err := NewStatefulSet(tm, targets, i)
		if err != nil {
			return nil, err
		}
		out = append(out, sts)
	}
	return out, nil
}

// NewStatefulSet builds the StatefulSet of shard i: Prometheus, the rules
// reloader, the config reloader, Grafana and the Thanos sidecar when asked,
// after the initializer that copies dashboards and rules out of its image.
// Data lives on the PVC template monitor-data when spec.persistent is set
// (spec.storage, spec.storageClassName), else on an emptyDir. It errors when
// spec.storage is not a quantity.
func NewStatefulSet(tm *v1alpha1.TidbMonitor, targets []Target, i int32) (*appsv1.StatefulSet, error) {
	shards := Shards(tm)
	podLabels := Labels(tm)
	podLabels[ShardLabelKey] = strconv.Itoa(int(i))
	vcts, err := claims(tm, podLabels)
	if err != nil {
		return nil, err
	}
	pod := podSpec(tm, targets, i, shards)
	if len(vcts) == 0 {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: DataVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	tmplLabels := map[string]string{}
	for k, v := range tm.Spec.Labels {
		tmplLabels[k] = v
	}
	for k, v := range podLabels {
		tmplLabels[k] = v
	}
	replicas := Replicas(tm)
	sts := &appsv1.StatefulSet{
		ObjectMeta: meta(tm, StatefulSet(tm.Name, i, shards)),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: podLabels},
			ServiceName:         Member(tm.Name),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels, Annotations: copyMap(tm.Spec.Annotations)},
				Spec:       pod,
			},
			VolumeClaimTemplates: vcts,
		},
	}
	sts.Labels[ShardLabelKey] = strconv.Itoa(int(i))
	return sts, nil
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// claims is the data PVC template when spec.persistent is set.
func claims(tm *v1alpha1.TidbMonitor, podLabels map[string]string) ([]corev1.PersistentVolumeClaim, error) {
	if !tm.Spec.Persistent {
		return nil, nil
	}
	size := tm.Spec.Storage
	if size == "" {
		size = "10Gi"
	}
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return nil, fmt.Errorf("spec.storage %q of TidbMonitor %s/%s: %w", size, tm.Namespace, tm.Name, err)
	}
	return []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: DataVolume, Labels: podLabels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: tm.Spec.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
		},
	}}, nil
}

// podSpec is the pod of shard i: its containers, volumes and the pod-level
// settings of the spec.
func podSpec(tm *v1alpha1.TidbMonitor, targets []Target, i, shards int32) corev1.PodSpec {
	s := tm.Spec
	containers := []corev1.Container{prometheusContainer(tm, targets, i, shards), reloaderContainer(tm), configReloaderContainer(tm)}
	if s.Grafana != nil {
		containers = append(containers, grafanaContainer(tm))
	}
	if s.Thanos != nil {
		containers = append(containers, thanosContainer(tm))
	}
	containers = append(containers, s.AdditionalContainers...)
	return corev1.PodSpec{
		ServiceAccountName:           Member(tm.Name),
		AutomountServiceAccountToken: s.AutomountServiceAccountToken,
		InitContainers:               []corev1.Container{initializerContainer(tm, targets)},
		Containers:                   containers,
		Volumes:                      append(volumes(tm, targets), s.AdditionalVolumes...),
		NodeSelector:                 s.NodeSelector,
		Tolerations:                  s.Tolerations,
		SecurityContext:              s.PodSecurityContext,
		ImagePullSecrets:             s.ImagePullSecrets,
	}
}
