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

// TestTiCDCAndTiProxyPodsThroughInformers: TiCDC and TiProxy pods are watched without waiting for a PVC
// (the TiCDC pod mounts one that does not exist), and a container restart the kubelet reports gives the
// capture a new ID.
func TestTiCDCAndTiProxyPodsThroughInformers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cdc := pod("ticdc", "basic-ticdc-0", true)
	cdc.UID = types.UID("cdc-pod-uid")
	cdc.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ticdc", RestartCount: 0}}
	kube := fake.NewClientset(pod("pd", "basic-pd-0", true), pvc("pd", "basic-pd-0", "pd-uid"), cdc, pod("tiproxy", "basic-tiproxy-0", true))
	sim, err := simulator.New(simulator.Config{
		Kube: kube, Clock: clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC)),
	}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin := client.New(sim.URL(), nil)
	captureID := func() string {
		st, err := admin.Cluster(ctx, "default", "basic")
		if err != nil || len(st.Captures) != 1 || len(st.TiProxyServers) != 1 || !st.TiProxyServers[0].Healthy {
			return ""
		}
		return st.Captures[0].ID
	}
	waitFor(t, func() bool { return captureID() != "" })
	first := captureID()

	cdc.Status.ContainerStatuses[0].RestartCount = 1
	if _, err := kube.CoreV1().Pods("default").UpdateStatus(ctx, cdc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { id := captureID(); return id != "" && id != first })
}
