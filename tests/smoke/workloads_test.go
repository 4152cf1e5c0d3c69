//go:build integration

package smoke

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

const workloadTimeout = 2 * time.Minute

// newStatefulSet builds a StatefulSet whose pods each claim a 1Gi volume from the default StorageClass.
func newStatefulSet(name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:         "main",
					Image:        "registry.k8s.io/pause:3.10",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					},
				},
			}},
		},
	}
}

// waitStatefulSetReady waits until the StatefulSet has n ready replicas, each pod Running and Ready
// on a node, and each pod's claim Bound.
func waitStatefulSetReady(t *testing.T, e *framework.Env, name string, n int) {
	t.Helper()
	framework.WaitFor(t, e.Ctx, workloadTimeout, fmt.Sprintf("%d Ready pods with Bound PVCs in StatefulSet %s", n, name), func(ctx context.Context) (bool, error) {
		ready, bound := 0, 0
		for i := range n {
			pod, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, fmt.Sprintf("%s-%d", name, i), metav1.GetOptions{})
			if err == nil && pod.Status.Phase == corev1.PodRunning && isPodReady(pod) && pod.Spec.NodeName != "" {
				ready++
			}
			pvc, err := e.Kube.CoreV1().PersistentVolumeClaims(e.Namespace).Get(ctx, fmt.Sprintf("data-%s-%d", name, i), metav1.GetOptions{})
			if err == nil && pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" {
				bound++
			}
		}
		framework.Observef(ctx, "%d/%d pods Running+Ready on a node, %d/%d PVCs Bound", ready, n, bound, n)
		return ready == n && bound == n, nil
	})
}

func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestStatefulSetWithVolumes checks the StatefulSet controller, the scheduler, KWOK and the PV
// provisioning stages together: 3 replicas become 3 Ready pods with 3 Bound PVCs and a ready status.
func TestStatefulSetWithVolumes(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	if _, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Create(e.Ctx, newStatefulSet("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create StatefulSet: %v", err)
	}
	waitStatefulSetReady(t, e, "web", 3)
	framework.WaitFor(t, e.Ctx, workloadTimeout, "StatefulSet status readyReplicas=3", func(ctx context.Context) (bool, error) {
		sts, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "status %+v", sts.Status)
		return sts.Status.ReadyReplicas == 3 && sts.Status.ObservedGeneration == sts.Generation, nil
	})
}

// TestDeletedPodIsRecreated deletes a StatefulSet pod and waits for the controller to create a new
// pod (a different UID) under the same name that becomes Ready again.
func TestDeletedPodIsRecreated(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	if _, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Create(e.Ctx, newStatefulSet("db", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create StatefulSet: %v", err)
	}
	waitStatefulSetReady(t, e, "db", 1)
	pods := e.Kube.CoreV1().Pods(e.Namespace)
	old, err := pods.Get(e.Ctx, "db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	if err := pods.Delete(e.Ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	var newUID types.UID
	framework.WaitFor(t, e.Ctx, workloadTimeout, "a new Ready db-0 with a different UID", func(ctx context.Context) (bool, error) {
		pod, err := pods.Get(ctx, "db-0", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			framework.Observef(ctx, "db-0 not found")
			return false, nil
		}
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "db-0 uid=%s phase=%s ready=%t", pod.UID, pod.Status.Phase, isPodReady(pod))
		newUID = pod.UID
		return pod.UID != old.UID && pod.DeletionTimestamp == nil && isPodReady(pod), nil
	})
	if newUID == old.UID {
		t.Fatalf("pod UID unchanged: %s", newUID)
	}
}

// TestJobCompletes applies a Job manifest with kubectl and waits for the Job controller to mark it
// Complete after KWOK finishes its pod.
func TestJobCompletes(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	manifest := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.k8s.io/pause:3.10
`), 0o600); err != nil {
		t.Fatal(err)
	}
	framework.ApplyYAMLFile(t, e.Ctx, manifest, e.Namespace)
	framework.WaitFor(t, e.Ctx, workloadTimeout, "Job once Complete", func(ctx context.Context) (bool, error) {
		job, err := e.Kube.BatchV1().Jobs(e.Namespace).Get(ctx, "once", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "status active=%d succeeded=%d failed=%d conditions=%v",
			job.Status.Active, job.Status.Succeeded, job.Status.Failed, job.Status.Conditions)
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return false, fmt.Errorf("job failed: %s", c.Message)
			}
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return job.Status.Succeeded == 1, nil
			}
		}
		return false, nil
	})
}
