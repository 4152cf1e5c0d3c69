package discovery

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// The service account token discovery mounts itself when the pod's
// automatic mount is turned off.
const (
	tokenVolume     = "kube-api-access"
	tokenDir        = "/var/run/secrets/kubernetes.io/serviceaccount" //nolint:gosec // G101: a mount path, not a credential
	tokenExpiration = int64(3607)
)

// setServiceAccountToken applies spec.discovery.automountServiceAccountToken
// (through acc) to the discovery pod. The discovery server reads its cluster through
// the API server, so with false — the pod opts out of the automatic mount,
// as policies such as "block automount" require — it mounts the same
// credentials explicitly, as the TiDB Operator does: a projected volume
// with a bound token, the cluster's CA (ConfigMap kube-root-ca.crt) and the
// namespace, where client-go's in-cluster config reads them.
func setServiceAccountToken(acc defaulting.ComponentAccessor, pod *corev1.PodSpec) {
	auto := acc.AutomountServiceAccountToken()
	if auto == nil {
		return
	}
	pod.AutomountServiceAccountToken = auto
	if *auto {
		return
	}
	expiration := tokenExpiration
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: tokenVolume, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiration}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		}},
	}})
	for i := range pod.Containers {
		c := &pod.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tokenVolume, MountPath: tokenDir, ReadOnly: true})
	}
}
