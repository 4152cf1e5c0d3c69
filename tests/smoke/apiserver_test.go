//go:build integration

package smoke

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// TestServerVersion checks the API server is the Kubernetes minor the client libraries are built for.
func TestServerVersion(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	v, err := e.Kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.36.") {
		t.Errorf("server version = %s, want v1.36.x (the minor of k8s.io/client-go v0.36)", v.GitVersion)
	}
}

// TestConfigMapCRUDAndWatch creates, reads, updates and deletes a ConfigMap and sees each change on a
// watch opened before the create.
func TestConfigMapCRUDAndWatch(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	cms := e.Kube.CoreV1().ConfigMaps(e.Namespace)

	list, err := cms.List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := cms.Watch(e.Ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=smoke"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	created, err := cms.Create(e.Ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
		Data:       map[string]string{"k": "v1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	expectEvent(t, w, watch.Added, "v1")

	got, err := cms.Get(e.Ctx, "smoke", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Data["k"] != "v1" || got.UID != created.UID {
		t.Fatalf("get returned data %v uid %s, want k=v1 uid %s", got.Data, got.UID, created.UID)
	}

	got.Data["k"] = "v2"
	updated, err := cms.Update(e.Ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.ResourceVersion == got.ResourceVersion {
		t.Errorf("update kept resourceVersion %s", got.ResourceVersion)
	}
	expectEvent(t, w, watch.Modified, "v2")

	if err := cms.Delete(e.Ctx, "smoke", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectEvent(t, w, watch.Deleted, "v2")
	if _, err := cms.Get(e.Ctx, "smoke", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: err = %v, want NotFound", err)
	}
}

// expectEvent reads the next watch event and checks its type and the ConfigMap's data["k"].
func expectEvent(t *testing.T, w watch.Interface, want watch.EventType, wantData string) {
	t.Helper()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed while waiting for %s", want)
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != want || !isCM || cm.Data["k"] != wantData {
			t.Fatalf("watch event = %s %T %v, want %s of a ConfigMap with k=%s", ev.Type, ev.Object, ev.Object, want, wantData)
		}
	case <-timer.C:
		t.Fatalf("no %s watch event within 30s", want)
	}
}

// TestStaleUpdateConflicts checks optimistic concurrency: an Update carrying an old resourceVersion
// is refused with 409 Conflict, and the stored object keeps the winning write.
func TestStaleUpdateConflicts(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	cms := e.Kube.CoreV1().ConfigMaps(e.Namespace)
	cm, err := cms.Create(e.Ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "conflict"},
		Data:       map[string]string{"writer": "none"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	first, second := cm.DeepCopy(), cm.DeepCopy()
	first.Data["writer"] = "first"
	if _, err := cms.Update(e.Ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("first update: %v", err)
	}
	second.Data["writer"] = "second"
	_, err = cms.Update(e.Ctx, second, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: err = %v, want a 409 Conflict", err)
	}
	got, err := cms.Get(e.Ctx, "conflict", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Data["writer"] != "first" {
		t.Errorf("stored writer = %q, want first", got.Data["writer"])
	}
}

// TestGarbageCollection deletes an owner and waits for the garbage collector to delete the ConfigMap
// whose ownerReference points at it, while an unowned ConfigMap survives.
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	cms := e.Kube.CoreV1().ConfigMaps(e.Namespace)
	owner, err := cms.Create(e.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create owner: %v", err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{ref}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bystander"}},
	} {
		if _, err := cms.Create(e.Ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", cm.Name, err)
		}
	}
	if err := cms.Delete(e.Ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete owner: %v", err)
	}
	framework.WaitFor(t, e.Ctx, time.Minute, "garbage collection of ConfigMap owned", func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, "owned", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		framework.Observef(ctx, "owned still exists (err=%v)", err)
		return false, nil
	})
	if _, err := cms.Get(e.Ctx, "bystander", metav1.GetOptions{}); err != nil {
		t.Errorf("unowned ConfigMap: %v, want it kept", err)
	}
}

// TestNodesReady checks the KWOK nodes are Ready and schedulable with the capacity the harness promises.
func TestNodesReady(t *testing.T) {
	t.Parallel()
	e := framework.NewEnv(t)
	nodes, err := e.Kube.CoreV1().Nodes().List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	var ready []string
	for _, n := range nodes.Items {
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" || n.Spec.Unschedulable || !isNodeReady(&n) {
			continue
		}
		if pods := n.Status.Allocatable.Pods().Value(); pods < 100 {
			t.Errorf("node %s allocatable pods = %d, want >= 100", n.Name, pods)
		}
		ready = append(ready, n.Name)
	}
	if len(ready) < 3 {
		t.Fatalf("Ready KWOK nodes = %v, want at least 3", ready)
	}
	out := framework.Kubectl(t, "get", "nodes", "-l", "type=kwok", "-o", "name")
	for _, name := range ready {
		if !strings.Contains(out, fmt.Sprintf("node/%s\n", name)) {
			t.Errorf("kubectl get nodes output %q lacks node/%s", out, name)
		}
	}
}

func isNodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
