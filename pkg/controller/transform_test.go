package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripCachedKeepsWhatThePodCacheIsReadFor: a cached pod keeps its
// metadata, status, node, scheduler, container names and images, and its
// PVC volumes; commands, environment, probes, mounts and other volumes go.
func TestStripCachedKeepsWhatThePodCacheIsReadFor(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-tidb-0", Labels: map[string]string{"a": "b"},
			Annotations:   map[string]string{"tidb.pingcap.com/tidb-graceful-shutdown": "true"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}},
		Spec: corev1.PodSpec{
			NodeName: "node-1", SchedulerName: "tidb-scheduler", Hostname: "db-tidb-0",
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:v8.5.0", Command: []string{"/bin/sh"},
				Env: []corev1.EnvVar{{Name: "A", Value: "1"}}, VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc"}}}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "tidb", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tidb-db-tidb-0"}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	status := *pod.Status.DeepCopy()
	got, err := StripCached(pod)
	if err != nil {
		t.Fatal(err)
	}
	p := got.(*corev1.Pod)
	want := corev1.PodSpec{NodeName: "node-1", SchedulerName: "tidb-scheduler",
		Containers: []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:v8.5.0"}},
		Volumes:    []corev1.Volume{{Name: "tidb", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tidb-db-tidb-0"}}}},
	}
	if !reflect.DeepEqual(p.Spec, want) {
		t.Errorf("stripped spec %+v, want %+v", p.Spec, want)
	}
	if p.ManagedFields != nil || p.Labels["a"] != "b" || p.Annotations["tidb.pingcap.com/tidb-graceful-shutdown"] != "true" ||
		!reflect.DeepEqual(p.Status, status) {
		t.Errorf("metadata or status changed: %+v", p.ObjectMeta)
	}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}}
	if got, _ := StripCached(svc); got.(*corev1.Service).Spec.ClusterIP != "None" {
		t.Error("a Service's spec was changed; only pods are stripped")
	}
}
