//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// TestNodeFailureReplacesAHostDownStore: basic-tikv-1 runs alone on a node
// of its own, which then fails (KWOK stops heartbeating it, its Ready
// condition goes Unknown and the pod NotReady, as the node lifecycle
// controller does) while PD reports the store Down. With
// --detect-node-failure the failure record is marked host-down
// (NodeFailure); without the auto-failure-recovery annotation nothing is
// deleted; with it the pod is force-deleted and restarts elsewhere, the
// store — still Down — is deleted in PD, and once it is Tombstone the pod
// and its PVC are replaced, so the ordinal comes back with a new store.
func TestNodeFailureReplacesAHostDownStore(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, func(o *app.Options) {
		o.Controller.TiKVFailoverPeriod = time.Second
		o.Controller.DetectNodeFailure = true
		o.Controller.RestartToDeleteStoreGap = 5 * time.Second
	})
	pc := deployBasic(t, env)
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"maxFailoverCount": 1}})
	node := isolatePod(t, env, "basic-tikv-1")
	waitReady(t, env, pc, "basic is Ready with basic-tikv-1 on its own node", nil)

	tc := getTC(t, env, pc)
	var id string
	for sid, s := range tc.Status.TiKV.Stores {
		if s.PodName == "basic-tikv-1" {
			id = sid
		}
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		t.Fatalf("store of basic-tikv-1 %q: %v", id, err)
	}
	oldPod := getPod(t, env, "basic-tikv-1")
	oldPVC := getPVC(t, env, "tikv-basic-tikv-1")
	failNode(t, env, node, "basic-tikv-1")
	if err := sim.SetStoreDown(env.Ctx, env.Namespace, "basic", n, true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "store "+id+" recorded host-down", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "failure stores %+v", tc.Status.TiKV.FailureStores)
		return tc.Status.TiKV.FailureStores[id].HostDown, nil
	})
	if !hasEvent(t, env, "NodeFailure") {
		t.Error("no NodeFailure event")
	}

	// Without the annotation: nothing is deleted, well past the restart gap.
	ctx, cancel := context.WithTimeout(env.Ctx, 15*time.Second)
	poll(ctx, func(ctx context.Context) bool {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-tikv-1", metav1.GetOptions{})
		if err == nil && (p.UID != oldPod.UID || p.DeletionTimestamp != nil) {
			t.Errorf("pod basic-tikv-1 deleted without the annotation")
			return false
		}
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err == nil && tc.Status.TiKV.Stores[id].State != "Down" {
			t.Errorf("store %s is %s without the annotation", id, tc.Status.TiKV.Stores[id].State)
			return false
		}
		return true
	})
	cancel()
	if getPVC(t, env, "tikv-basic-tikv-1").UID != oldPVC.UID {
		t.Fatal("the PVC was replaced without the annotation")
	}

	annotate(t, env, pc, map[string]string{"app.kubernetes.io/auto-failure-recovery": "true"})
	framework.WaitFor(t, env.Ctx, readyTimeout, "store "+id+" Tombstone, pod and PVC replaced, a new store Up", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p, perr := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-tikv-1", metav1.GetOptions{})
		c, cerr := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, "tikv-basic-tikv-1", metav1.GetOptions{})
		if perr != nil || cerr != nil {
			return false, nil //nolint:nilerr // being recreated
		}
		_, tomb := tc.Status.TiKV.TombstoneStores[id]
		framework.Observef(ctx, "failure %+v tombstone %v pod %s on %s, PVC %s", tc.Status.TiKV.FailureStores[id], tomb, p.UID, p.Spec.NodeName, c.UID)
		return tomb && tc.Status.TiKV.FailureStores[id].StoreDeleted && p.UID != oldPod.UID && p.Spec.NodeName != node &&
			c.UID != oldPVC.UID && newStoreUp(tc, "basic-tikv-1", id), nil
	})
	if !hasEvent(t, env, "Recovery") {
		t.Error("no Recovery event for the store's deletion")
	}
}

// TestNodeFailureReplacesAHostDownPDMember: basic-pd-1 runs alone on a
// node of its own, which then fails while PD reports the member unhealthy.
// With --detect-node-failure the failure record is marked host-down
// (NodeFailure); PD failover then deletes the member and — its node being
// Unknown — force-deletes the pod with its own PVC, so the ordinal comes
// back on another node as a new, healthy member and the failover member
// leaves again. (A graceful deletion would never finish on a dead node:
// without the host-down mark the pod would stay Terminating.) It runs
// alone, as isolatePod cordons every other node for a moment.
func TestNodeFailureReplacesAHostDownPDMember(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, func(o *app.Options) {
		o.Controller.PDFailoverPeriod = time.Second
		o.Controller.DetectNodeFailure = true
	})
	pc := deployBasic(t, env)
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"maxFailoverCount": 1}})
	node := isolatePod(t, env, "basic-pd-1")
	waitReady(t, env, pc, "basic is Ready with basic-pd-1 on its own node", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.PD.Members["basic-pd-1"].Health
	})
	oldID := getTC(t, env, pc).Status.PD.Members["basic-pd-1"].ID
	oldPod := getPod(t, env, "basic-pd-1")
	oldPVC := getPVC(t, env, "pd-basic-pd-1")

	failNode(t, env, node, "basic-pd-1")
	if err := sim.SetMemberUnhealthy(env.Ctx, env.Namespace, "basic", "basic-pd-1", true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic-pd-1 recorded host-down", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		f := tc.Status.PD.FailureMembers["basic-pd-1"]
		framework.Observef(ctx, "failure members %+v", tc.Status.PD.FailureMembers)
		return f.HostDown, nil
	})
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic-pd-1 back on another node as a new healthy member, with a new PVC", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p, perr := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-pd-1", metav1.GetOptions{})
		c, cerr := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, "pd-basic-pd-1", metav1.GetOptions{})
		if perr != nil || cerr != nil {
			return false, nil //nolint:nilerr // being recreated
		}
		m := tc.Status.PD.Members["basic-pd-1"]
		framework.Observef(ctx, "member %+v, pod %s on %s, PVC %s, failures %+v", m, p.UID, p.Spec.NodeName, c.UID, tc.Status.PD.FailureMembers)
		return m.ID != "" && m.ID != oldID && m.Health && p.UID != oldPod.UID && p.Spec.NodeName != node && c.UID != oldPVC.UID, nil
	})
	for _, reason := range []string{"NodeFailure", "PDMemberDeleted"} {
		if !hasEvent(t, env, reason) {
			t.Errorf("no %s event", reason)
		}
	}
	waitReady(t, env, pc, "PD recovers with three healthy members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.FailureMembers) == 0 && tc.Status.PD.StatefulSet.Replicas == 3 && len(tc.Status.PD.Members) == 3
	})
}

// newStoreUp reports whether pod has an Up store other than old.
func newStoreUp(tc *v1alpha1.TidbCluster, pod, old string) bool {
	for id, s := range tc.Status.TiKV.Stores {
		if s.PodName == pod && id != old && s.State == "Up" {
			return true
		}
	}
	return false
}

// isolatePod moves pod onto a new KWOK node of its own (the other nodes
// cordoned while its StatefulSet recreates it) and returns the node's name;
// the node goes at cleanup.
func isolatePod(t *testing.T, env *framework.Env, pod string) string {
	t.Helper()
	name := "nodefailure-" + env.Namespace
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "zone-a"}},
		Status: corev1.NodeStatus{Allocatable: kwokCapacity(), Capacity: kwokCapacity()}}
	if _, err := env.Kube.CoreV1().Nodes().Create(env.Ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNode(t, env, name) })
	nodes, err := env.Kube.CoreV1().Nodes().List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cordoned []string
	for _, n := range nodes.Items {
		if n.Name != name && !n.Spec.Unschedulable {
			setUnschedulable(t, env, n.Name, true)
			cordoned = append(cordoned, n.Name)
		}
	}
	uncordon := func() {
		for _, n := range cordoned {
			setUnschedulable(t, env, n, false)
		}
		cordoned = nil
	}
	t.Cleanup(uncordon)
	if err := env.Kube.CoreV1().Pods(env.Namespace).Delete(env.Ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, pod+" Ready on "+name, func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // being recreated
		}
		return p.Spec.NodeName == name && podReady(p), nil
	})
	uncordon()
	return name
}

// failNode does what a node's failure looks like to the API: KWOK stops
// heartbeating the node, its Ready condition turns Unknown, it is
// unschedulable, and pod on it turns NotReady (the node lifecycle
// controller does the same after its grace period).
func failNode(t *testing.T, env *framework.Env, name, pod string) {
	t.Helper()
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{kwokNodeAnnotation: nil}},
		"spec": map[string]any{"unschedulable": true}}
	mergePatch(t, env, "nodes", "", name, patch, "")
	now := metav1.Now()
	status := map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{Type: corev1.NodeReady,
		Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastHeartbeatTime: now, LastTransitionTime: now}}}}
	body, _ := json.Marshal(status)
	if _, err := env.Kube.CoreV1().Nodes().Patch(env.Ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("node %s Unknown: %v", name, err)
	}
	podStatus := map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{Type: corev1.PodReady,
		Status: corev1.ConditionFalse, LastTransitionTime: now}}}}
	body, _ = json.Marshal(podStatus)
	if _, err := env.Kube.CoreV1().Pods(env.Namespace).Patch(env.Ctx, pod, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("pod %s NotReady: %v", pod, err)
	}
}

func mergePatch(t *testing.T, env *framework.Env, resource, namespace, name string, patch map[string]any, sub string) {
	t.Helper()
	body, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	switch resource {
	case "nodes":
		_, err = env.Kube.CoreV1().Nodes().Patch(env.Ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subs...)
	default:
		_, err = env.Kube.CoreV1().Pods(namespace).Patch(env.Ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subs...)
	}
	if err != nil {
		t.Fatalf("patch %s %s: %v", resource, name, err)
	}
}

func setUnschedulable(t *testing.T, env *framework.Env, name string, on bool) {
	t.Helper()
	mergePatch(t, env, "nodes", "", name, map[string]any{"spec": map[string]any{"unschedulable": on}}, "")
}

// deleteNode force-deletes what is left on the failed node, then the node.
func deleteNode(t *testing.T, env *framework.Env, name string) {
	ctx := context.Background()
	pods, err := env.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err == nil {
		zero := int64(0)
		for _, p := range pods.Items {
			_ = env.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	if err := env.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Logf("delete node %s: %v", name, err)
	}
}

func kwokCapacity() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resourceMust("32"), corev1.ResourceMemory: resourceMust("256Gi"),
		corev1.ResourcePods: resourceMust("1000"), corev1.ResourceEphemeralStorage: resourceMust("1Ti")}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil
		}
	}
	return false
}

func getTC(t *testing.T, env *framework.Env, pc versioned.Interface) *v1alpha1.TidbCluster {
	t.Helper()
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func getPod(t *testing.T, env *framework.Env, name string) *corev1.Pod {
	t.Helper()
	p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func getPVC(t *testing.T, env *framework.Env, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	c, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hasEvent(t *testing.T, env *framework.Env, reason string) bool {
	t.Helper()
	events, err := env.Kube.CoreV1().Events(env.Namespace).List(env.Ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
	if err != nil {
		t.Fatal(err)
	}
	return len(events.Items) > 0
}

// annotate merge-patches basic's annotations.
func annotate(t *testing.T, env *framework.Env, pc versioned.Interface, ann map[string]string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotate basic: %v", err)
	}
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
