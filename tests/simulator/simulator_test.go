//go:build integration

// Package simulator runs the TiDB cluster simulator in-process against the local control plane
// (kube-apiserver + KWOK) and checks that its PD state follows real StatefulSet pods.
package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }

const (
	tcName  = "basic"
	timeout = 2 * time.Minute
)

// newComponentSet builds the StatefulSet the operator would make for comp: its labels, its peer Service
// name and its data volumeClaimTemplate named after the component.
func newComponentSet(comp string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{
		"app.kubernetes.io/name": "tidb-cluster", simulator.LabelManagedBy: simulator.ManagedByValue,
		simulator.LabelInstance: tcName, simulator.LabelComponent: comp,
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: tcName + "-" + comp, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         tcName + "-" + comp + "-peer",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: comp, Image: "pingcap/" + comp + ":v8.5.0",
					VolumeMounts: []corev1.VolumeMount{{Name: comp, MountPath: "/var/lib/" + comp}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: comp, Labels: labels},
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

// getJSON GETs u through the proxied client and decodes a 200 answer into out.
func getJSON(ctx context.Context, c *http.Client, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

func TestSimulatorFollowsStatefulSetPods(t *testing.T) {
	env := framework.NewEnv(t)
	sim, err := simulator.New(simulator.Config{
		Kube: env.Kube, Dynamic: env.Dynamic, Namespace: env.Namespace, Listen: "127.0.0.1:0",
		Options: simulator.DefaultOptions(), TickInterval: 100 * time.Millisecond,
	}, ktesting.NewLogger(t, ktesting.NewConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(env.Ctx); err != nil {
		t.Fatal(err)
	}
	proxyURL, _ := url.Parse(sim.URL())
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	pd := fmt.Sprintf("http://%s-pd.%s:2379", tcName, env.Namespace)

	for comp, replicas := range map[string]int32{"pd": 3, "tikv": 3} {
		if _, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Create(env.Ctx, newComponentSet(comp, replicas), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s StatefulSet: %v", comp, err)
		}
	}
	waitMembers(t, env, client, pd)
	stores := waitUpStores(t, env, client, pd)
	checkPDMemberSurvivesPodRestart(t, env, client, pd)
	scaleInTiKVAndWaitDown(t, env, client, pd, stores["basic-tikv-2"])
	waitLeaders(t, env, client, "basic-tikv-0", 500)
}

// waitMembers waits until PD lists the three PD pods as members, with a leader, at their peer URLs.
func waitMembers(t *testing.T, env *framework.Env, client *http.Client, pd string) {
	t.Helper()
	var members pdapi.MembersInfo
	framework.WaitFor(t, env.Ctx, timeout, "PD members listing the 3 PD pods", func(ctx context.Context) (bool, error) {
		members = pdapi.MembersInfo{}
		if err := getJSON(ctx, client, pd+"/pd/api/v1/members", &members); err != nil {
			framework.Observef(ctx, "%v", err)
			return false, nil
		}
		var names []string
		for _, m := range members.Members {
			names = append(names, m.Name)
		}
		sort.Strings(names)
		framework.Observef(ctx, "members %v", names)
		return strings.Join(names, ",") == "basic-pd-0,basic-pd-1,basic-pd-2" && members.Leader != nil, nil
	})
	wantURL := fmt.Sprintf("http://basic-pd-0.basic-pd-peer.%s.svc:2379", env.Namespace)
	if got := members.Members[0].ClientUrls[0]; got != wantURL {
		t.Errorf("member client URL = %s, want %s", got, wantURL)
	}
}

// waitUpStores waits for three Up stores and returns their IDs by pod name.
func waitUpStores(t *testing.T, env *framework.Env, client *http.Client, pd string) map[string]uint64 {
	t.Helper()
	var stores pdapi.StoresInfo
	framework.WaitFor(t, env.Ctx, timeout, "3 Up TiKV stores", func(ctx context.Context) (bool, error) {
		stores = pdapi.StoresInfo{}
		if err := getJSON(ctx, client, pd+"/pd/api/v1/stores", &stores); err != nil {
			framework.Observef(ctx, "%v", err)
			return false, nil
		}
		up := 0
		for _, s := range stores.Stores {
			if s.Store.StateName == pdapi.StoreStateNameUp {
				up++
			}
		}
		framework.Observef(ctx, "%d stores, %d Up", stores.Count, up)
		return stores.Count == 3 && up == 3, nil
	})
	byPod := map[string]uint64{}
	for _, s := range stores.Stores {
		byPod[strings.SplitN(s.Store.Address, ".", 2)[0]] = s.Store.ID
	}
	if len(byPod) != 3 {
		t.Fatalf("store addresses do not name 3 pods: %v", byPod)
	}
	return byPod
}

// scaleInTiKVAndWaitDown scales the TiKV StatefulSet to 2; the removed pod's store must stop
// heartbeating: Disconnected first, then Down after max-store-down-time.
func scaleInTiKVAndWaitDown(t *testing.T, env *framework.Env, client *http.Client, pd string, storeID uint64) {
	t.Helper()
	set, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "basic-tikv", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set.Spec.Replicas = ptr.To[int32](2)
	if _, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Update(env.Ctx, set, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	storeURL := fmt.Sprintf("%s/pd/api/v1/store/%d", pd, storeID)
	seen := map[string]bool{}
	framework.WaitFor(t, env.Ctx, timeout, "the scaled-in store to go Disconnected, then Down", func(ctx context.Context) (bool, error) {
		var s pdapi.StoreInfo
		if err := getJSON(ctx, client, storeURL, &s); err != nil {
			framework.Observef(ctx, "%v", err)
			return false, nil
		}
		seen[s.Store.StateName] = true
		framework.Observef(ctx, "store %d is %s (seen %v)", storeID, s.Store.StateName, seen)
		return seen[pdapi.StoreStateNameDisconnected] && s.Store.StateName == pdapi.StoreStateNameDown, nil
	})
}

// waitLeaders waits until the TiKV pod's status port reports want region leaders.
func waitLeaders(t *testing.T, env *framework.Env, client *http.Client, pod string, want int) {
	t.Helper()
	u := fmt.Sprintf("http://%s.basic-tikv-peer.%s:20180/metrics", pod, env.Namespace)
	line := fmt.Sprintf("tikv_raftstore_region_count{type=\"leader\"} %d\n", want)
	framework.WaitFor(t, env.Ctx, timeout, pod+" metrics showing "+line, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := client.Do(req)
		if err != nil {
			framework.Observef(ctx, "%v", err)
			return false, nil
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		framework.Observef(ctx, "%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), line), nil
	})
}

// checkPDMemberSurvivesPodRestart deletes a PD pod; the StatefulSet recreates it with the same PVC, so
// it must come back as the same member (same ID) and healthy.
func checkPDMemberSurvivesPodRestart(t *testing.T, env *framework.Env, client *http.Client, pd string) {
	t.Helper()
	memberID := func(ctx context.Context) (uint64, bool, error) {
		var health pdapi.HealthInfo
		if err := getJSON(ctx, client, pd+"/pd/api/v1/health", &health); err != nil {
			return 0, false, err
		}
		for _, h := range health {
			if h.Name == "basic-pd-1" {
				return h.MemberID, h.Health, nil
			}
		}
		return 0, false, fmt.Errorf("basic-pd-1 not in %+v", health)
	}
	before, _, err := memberID(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "basic-pd-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Kube.CoreV1().Pods(env.Namespace).Delete(env.Ctx, "basic-pd-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, timeout, "basic-pd-1 recreated and healthy as the same member", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-pd-1", metav1.GetOptions{})
		if err != nil || p.UID == pod.UID {
			framework.Observef(ctx, "old pod still there or not yet recreated (%v)", err)
			return false, nil
		}
		id, healthy, err := memberID(ctx)
		framework.Observef(ctx, "member ID %d (before %d) healthy=%v err=%v", id, before, healthy, err)
		if err == nil && id != before {
			return false, fmt.Errorf("basic-pd-1 came back as member %d, want %d (same PVC)", id, before)
		}
		return err == nil && healthy, nil
	})
}
