package simulator_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// tiflashPod is a TiFlash pod as the operator builds it: data volumes data0..dataN from storageClaims,
// PVCs named data<i>-<pod>; here data1 is mounted first to show that data0 holds the identity.
func tiflashPod(name string) *corev1.Pod {
	p := pod("tiflash", name, true)
	p.Spec.Volumes = nil
	for _, claim := range []string{"data1", "data0"} {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim + "-" + name},
		}})
	}
	return p
}

func tiflashPVC(claim, podName, uid string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: claim + "-" + podName, Namespace: "default", UID: types.UID(uid), Labels: clusterLabels("tiflash"),
	}}
}

// TestTiFlashPodsThroughInformers: pods labelled component=tiflash are watched, and a TiFlash pod's
// identity is its data0 PVC, so it registers only once that PVC exists.
func TestTiFlashPodsThroughInformers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	objs := []runtime.Object{
		pod("pd", "basic-pd-0", true), pvc("pd", "basic-pd-0", "pd-uid"),
		pod("tikv", "basic-tikv-0", true), pvc("tikv", "basic-tikv-0", "kv-uid"),
		tiflashPod("basic-tiflash-0"), tiflashPVC("data1", "basic-tiflash-0", "flash-data1-uid"),
	}
	kube := fake.NewClientset(objs...)
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
	engines := func() map[string]int {
		out := map[string]int{}
		if st, err := admin.Cluster(ctx, "default", "basic"); err == nil {
			for _, s := range st.Stores {
				out[s.Engine]++
			}
		}
		return out
	}
	waitFor(t, func() bool { return engines()["tikv"] == 1 })
	if n := engines()["tiflash"]; n != 0 {
		t.Fatalf("a TiFlash pod without its data0 PVC registered %d stores", n)
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims("default").Create(ctx,
		tiflashPVC("data0", "basic-tiflash-0", "flash-data0-uid"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return engines()["tiflash"] == 1 })
}
