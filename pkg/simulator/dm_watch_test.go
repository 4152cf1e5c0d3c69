package simulator_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// dmPodObject is a Running, Ready pod of DMCluster default/basic.
func dmPodObject(comp, name, uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid), Labels: map[string]string{
			"app.kubernetes.io/name": "dm-cluster", "app.kubernetes.io/managed-by": "tidb-operator",
			"app.kubernetes.io/instance": "basic", "app.kubernetes.io/component": comp,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: comp, Image: "pingcap/dm:v8.5.1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// TestDMPodsThroughInformers: the pods of DMCluster default/basic make its dm-master members and
// workers, apart from TidbCluster default/basic's; a stopped worker pod goes offline.
func TestDMPodsThroughInformers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	worker := dmPodObject("dm-worker", "basic-dm-worker-0", "w0")
	kube := fake.NewClientset(pod("pd", "basic-pd-0", true), pvc("pd", "basic-pd-0", "pd-uid"),
		dmPodObject("dm-master", "basic-dm-master-0", "m0"), worker)
	clk := clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC))
	sim, err := simulator.New(simulator.Config{Kube: kube, Clock: clk}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin := client.New(sim.URL(), nil)
	waitFor(t, func() bool {
		st, err := admin.DMCluster(ctx, "default", "basic")
		return err == nil && st.Leader == "basic-dm-master-0" && len(st.Workers) == 1 && st.Workers[0].Stage == "free"
	})
	waitFor(t, func() bool {
		st, err := admin.Cluster(ctx, "default", "basic")
		return err == nil && len(st.Members) == 1
	})
	st, _ := admin.Cluster(ctx, "default", "basic")
	if len(st.Stores) != 0 || len(st.TiDBServers) != 0 || st.Members[0].Name != "basic-pd-0" {
		t.Errorf("the TidbCluster of the same name holds DM pods: %+v", st)
	}

	worker.Status.Phase = corev1.PodFailed
	if _, err := kube.CoreV1().Pods("default").UpdateStatus(ctx, worker, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st, err := admin.DMCluster(ctx, "default", "basic")
		return err == nil && len(st.Workers) == 1 && st.Workers[0].Stage == "offline"
	})
}
