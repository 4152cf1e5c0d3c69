//go:build integration

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestTopologyLabels runs examples/basic with PD's location-labels
// ["zone", "host"] on the KWOK nodes (zones zone-a/b/c, hostnames
// kwok-node-N): every TiKV store in PD gets the zone and host of its pod's
// node, every TiDB server its zone, the PD and TiKV pods, their PVCs and
// PVs the meta labels, and once converged further syncs write no label —
// neither in PD nor TiDB nor on a pod, PVC or PV.
func TestTopologyLabels(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	mgr := operator.StartManager(t, env.Namespace, nil)
	ctx := env.Ctx
	pc := versioned.NewForConfigOrDie(env.Config)

	example, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(example), "max-replicas = 3", "max-replicas = 3\n      location-labels = [\"zone\", \"host\"]", 1)
	if manifest == string(example) {
		t.Fatal("examples/basic no longer sets max-replicas in PD's config; the test cannot add location-labels")
	}
	framework.ApplyYAML(t, ctx, manifest, env.Namespace)
	waitReady(t, env, pc, "basic is Ready", nil)

	framework.WaitFor(t, ctx, 2*time.Minute, "stores and TiDB servers carry their nodes' topology", func(ctx context.Context) (bool, error) {
		return topologyLabelled(ctx, env, sim)
	})
	framework.WaitFor(t, ctx, 2*time.Minute, "pods, PVCs and PVs carry the meta labels", func(ctx context.Context) (bool, error) {
		return metaLabelled(ctx, env, pc)
	})

	checkNoWritesWhenConverged(t, ctx, env, mgr)
	writesBefore := labelWrites(t, ctx, env, sim)
	versionsBefore := volumeVersions(t, ctx, env)
	waitSyncs(t, ctx, env, mgr, 4) // resyncs every 5s, members read again every 10s
	if after := labelWrites(t, ctx, env, sim); after != writesBefore {
		t.Errorf("labels written in PD or TiDB while converged: %s → %s", writesBefore, after)
	}
	for k, v := range volumeVersions(t, ctx, env) {
		if versionsBefore[k] != v {
			t.Errorf("%s was written while converged (resourceVersion %s → %s)", k, versionsBefore[k], v)
		}
	}
}

// nodeOf returns the labels of the node the pod runs on.
func nodeOf(ctx context.Context, env *framework.Env, pod string) (map[string]string, string, error) {
	p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, "", err
	}
	if p.Spec.NodeName == "" {
		return nil, "", fmt.Errorf("pod %s not scheduled", pod)
	}
	n, err := env.Kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, "", err
	}
	return n.Labels, n.Name, nil
}

func topologyLabelled(ctx context.Context, env *framework.Env, sim *simclient.Client) (bool, error) {
	st, err := sim.Cluster(ctx, env.Namespace, "basic")
	if err != nil {
		return false, err
	}
	if len(st.Stores) < 3 || len(st.TiDBServers) < 2 {
		framework.Observef(ctx, "%d stores, %d TiDB servers", len(st.Stores), len(st.TiDBServers))
		return false, nil
	}
	for _, s := range st.Stores {
		node, name, err := nodeOf(ctx, env, s.PodName)
		if err != nil {
			return false, err
		}
		zone := node[corev1.LabelTopologyZone]
		if zone == "" || s.Labels["zone"] != zone || s.Labels["host"] != name {
			framework.Observef(ctx, "store %d of %s: labels %v, want zone=%s host=%s", s.ID, s.PodName, s.Labels, zone, name)
			return false, nil
		}
	}
	for _, s := range st.TiDBServers {
		node, _, err := nodeOf(ctx, env, s.Name)
		if err != nil {
			return false, err
		}
		if zone := node[corev1.LabelTopologyZone]; zone == "" || s.Labels["zone"] != zone {
			framework.Observef(ctx, "TiDB %s: labels %v, want zone=%s", s.Name, s.Labels, zone)
			return false, nil
		}
	}
	return true, nil
}

// metaLabelled checks cluster-id and member-id (PD) or store-id (TiKV) on
// the pods, their PVCs (also pod-name) and the PVs behind them.
func metaLabelled(ctx context.Context, env *framework.Env, pc versioned.Interface) (bool, error) {
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if tc.Status.ClusterID == "" {
		framework.Observef(ctx, "no cluster ID in status yet")
		return false, nil
	}
	want := map[string]map[string]string{} // pod → labels
	for name, m := range tc.Status.PD.Members {
		want[name] = map[string]string{label.ClusterIDLabelKey: tc.Status.ClusterID, label.MemberIDLabelKey: m.ID}
	}
	for _, s := range tc.Status.TiKV.Stores {
		want[s.PodName] = map[string]string{label.ClusterIDLabelKey: tc.Status.ClusterID, label.StoreIDLabelKey: s.ID}
	}
	if len(want) < 6 {
		framework.Observef(ctx, "status names %d PD members and TiKV stores", len(want))
		return false, nil
	}
	for pod, labels := range want {
		if ok, err := podMetaLabelled(ctx, env, pod, labels); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

func podMetaLabelled(ctx context.Context, env *framework.Env, podName string, want map[string]string) (bool, error) {
	pod, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if !hasLabels(pod.Labels, want) {
		framework.Observef(ctx, "pod %s labels %v, want %v", podName, pod.Labels, want)
		return false, nil
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !hasLabels(pvc.Labels, want) || pvc.Labels[label.AnnPodNameKey] != podName || pvc.Annotations[label.AnnPodNameKey] != podName {
			framework.Observef(ctx, "PVC %s labels %v annotations %v, want %v and pod-name %s", pvc.Name, pvc.Labels, pvc.Annotations, want, podName)
			return false, nil
		}
		pv, err := env.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !hasLabels(pv.Labels, want) || pv.Annotations[label.AnnPodNameKey] != podName {
			framework.Observef(ctx, "PV %s labels %v annotations %v, want %v and pod-name %s", pv.Name, pv.Labels, pv.Annotations, want, podName)
			return false, nil
		}
	}
	return true, nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// labelWrites sums the label writes the simulator accepted, per store and
// TiDB server.
func labelWrites(t *testing.T, ctx context.Context, env *framework.Env, sim *simclient.Client) string {
	t.Helper()
	st, err := sim.Cluster(ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, s := range st.Stores {
		parts = append(parts, "store "+strconv.FormatUint(s.ID, 10)+":"+strconv.Itoa(s.LabelWrites))
	}
	for _, s := range st.TiDBServers {
		parts = append(parts, s.Name+":"+strconv.Itoa(s.LabelWrites))
	}
	return strings.Join(parts, " ")
}

// volumeVersions returns the resourceVersions of the cluster's PD and TiKV
// pods, their PVCs and PVs, keyed by kind/name.
func volumeVersions(t *testing.T, ctx context.Context, env *framework.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	opts := metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic," + label.ComponentLabelKey + " in (pd,tikv)"}
	pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out["Pod/"+p.Name] = p.ResourceVersion
	}
	pvcs, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, pvc := range pvcs.Items {
		out["PersistentVolumeClaim/"+pvc.Name] = pvc.ResourceVersion
		if pv, err := env.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{}); err == nil {
			out["PersistentVolume/"+pv.Name] = pv.ResourceVersion
		}
	}
	if len(out) < 12 {
		t.Fatalf("expected 6 pods with their PVCs and PVs, found %v", out)
	}
	return out
}
