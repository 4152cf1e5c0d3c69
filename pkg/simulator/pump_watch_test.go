package simulator_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// TestPumpPodsThroughInformers: a Pump pod registers without waiting for its data PVC (the node ID is the
// pod's hostname), goes offline when told to close, and registers online again when the kubelet reports
// its container restarted.
func TestPumpPodsThroughInformers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pump := pod("pump", "basic-pump-0", true)
	pump.UID = types.UID("pump-pod-uid")
	pump.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "data-basic-pump-0" // not created
	pump.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pump", RestartCount: 0}}
	kube := fake.NewClientset(pod("pd", "basic-pd-0", true), pvc("pd", "basic-pd-0", "pd-uid"), pump)
	clk := clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC))
	sim, err := simulator.New(simulator.Config{Kube: kube, Clock: clk}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin := client.New(sim.URL(), nil)
	node := func() api.PumpNode {
		st, err := admin.Cluster(ctx, "default", "basic")
		if err != nil || len(st.PumpNodes) != 1 {
			return api.PumpNode{}
		}
		return st.PumpNodes[0]
	}
	waitFor(t, func() bool { n := node(); return n.State == "online" && n.Serving })

	proxyURL, _ := url.Parse(sim.URL())
	proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://basic-pump-0.basic-pump.default:8250/state/basic-pump-0:8250/close", nil)
	resp, err := proxied.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"code": 200`) {
		t.Fatalf("close = %d %s", resp.StatusCode, body)
	}
	clk.Step(simulator.FastTimings().PumpOfflineTime)
	if n := node(); n.State != "offline" || n.Serving {
		t.Fatalf("after the offline time: %+v", n)
	}

	pump.Status.ContainerStatuses[0].RestartCount = 1
	if _, err := kube.CoreV1().Pods("default").UpdateStatus(ctx, pump, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { n := node(); return n.State == "online" && n.Serving && n.NodeID == "basic-pump-0:8250" })
}
