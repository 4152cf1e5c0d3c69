package simulator_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

func clusterLabels(comp string) map[string]string {
	return map[string]string{
		simulator.LabelManagedBy: simulator.ManagedByValue, simulator.LabelInstance: "basic",
		simulator.LabelComponent: comp, "app.kubernetes.io/name": "tidb-cluster",
	}
}

func pvc(comp, pod, uid string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: comp + "-" + pod, Namespace: "default", UID: types.UID(uid), Labels: clusterLabels(comp),
	}}
}

func pod(comp, name string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: clusterLabels(comp)},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: comp, Image: "pingcap/" + comp + ":v8.5.1"}},
			Volumes: []corev1.Volume{{Name: comp, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: comp + "-" + name},
			}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func tidbCluster(domain string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pingcap.com/v1alpha1", "kind": "TidbCluster",
		"metadata": map[string]any{"name": "basic", "namespace": "default"},
		"spec":     map[string]any{"clusterDomain": domain},
	}}
	return u
}

// TestSimulatorFollowsPodsThroughInformers runs the whole simulator on fake clients: informers, the
// TidbCluster watch, the listeners and the admin API.
func TestSimulatorFollowsPodsThroughInformers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var objs []runtime.Object
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("basic-pd-%d", i)
		objs = append(objs, pod("pd", name, true), pvc("pd", name, "pd-uid-"+name))
	}
	objs = append(objs, pod("tikv", "basic-tikv-0", true), pvc("tikv", "basic-tikv-0", "kv-uid-0"))
	objs = append(objs, pod("tikv", "basic-tikv-1", true)) // its PVC appears later
	kube := fake.NewClientset(objs...)
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: "pingcap.com/v1alpha1", APIResources: []metav1.APIResource{{Name: "tidbclusters", Namespaced: true, Kind: "TidbCluster"}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{simulator.TidbClusterGVR: "TidbClusterList"}, tidbCluster("cluster.local"))

	sim, err := simulator.New(simulator.Config{
		Kube: kube, Dynamic: dyn, ExtraListen: []string{"127.0.0.1:0"},
		Clock: clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC)),
	}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin := client.New(sim.URL(), nil)
	state := func() *api.ClusterState {
		st, err := admin.Cluster(ctx, "default", "basic")
		if err != nil {
			return &api.ClusterState{}
		}
		return st
	}
	waitFor(t, func() bool {
		st := state()
		return len(st.Members) == 3 && len(st.Stores) == 1 && st.Leader == "basic-pd-0" &&
			st.Members[0].ClientURL == "http://basic-pd-0.basic-pd-peer.default.svc.cluster.local:2379"
	})

	// The pending PVC appears: the second TiKV registers.
	if _, err := kube.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc("tikv", "basic-tikv-1", "kv-uid-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(state().Stores) == 2 })

	// Readiness drives health; the leader moves.
	notReady := pod("pd", "basic-pd-0", false)
	if _, err := kube.CoreV1().Pods("default").UpdateStatus(ctx, notReady, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { st := state(); return st.Leader == "basic-pd-1" && !st.Members[0].Healthy })

	// A deleted TiKV pod's store stops heartbeating.
	if err := kube.CoreV1().Pods("default").Delete(ctx, "basic-tikv-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return state().Stores[0].StateName == pdapi.StoreStateNameDisconnected })

	// The extra listener answers plain requests on their Host header.
	addrs := sim.Addrs()
	if len(addrs) != 2 || addrs[0] == addrs[1] || sim.URL() != "http://"+addrs[0] {
		t.Fatalf("Addrs = %v, URL = %s", addrs, sim.URL())
	}
	checkHostDispatch(t, ctx, addrs[1])
}

func checkHostDispatch(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/pd/api/v1/members", nil)
	req.Host = "basic-pd.default.svc:2379"
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"basic-pd-2"`) {
		t.Fatalf("Host-dispatched members = %d %s", resp.StatusCode, body)
	}
}
