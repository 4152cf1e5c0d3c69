//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// v16MicroServiceCluster is the shape of the TiDB Operator v1.6's
// examples/basic/pd-micro-service-cluster.yaml, written from its facts
// (spec pd-microservices §12): PD in mode ms with a dev-build image, and
// two tso and two scheduling servers.
const v16MicroServiceCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: basic
spec:
  version: v8.5.7
  timezone: UTC
  pvReclaimPolicy: Retain
  enableDynamicConfiguration: true
  configUpdateStrategy: RollingUpdate
  discovery: {}
  helper:
    image: alpine:3.16.0
  pd:
    baseImage: hub.pingcap.net/devbuild/pd
    version: v8.3.0-5427
    maxFailoverCount: 0
    replicas: 1
    requests:
      storage: "1Gi"
    config: {}
    mode: "ms"
  pdms:
  - name: "tso"
    baseImage: hub.pingcap.net/devbuild/pd
    version: v8.3.0-5427
    replicas: 2
  - name: "scheduling"
    baseImage: hub.pingcap.net/devbuild/pd
    version: v8.3.0-5427
    replicas: 2
  tikv:
    baseImage: pingcap/tikv
    version: v8.5.7
    maxFailoverCount: 0
    evictLeaderTimeout: 1m
    replicas: 1
    requests:
      storage: "1Gi"
    config:
      storage:
        reserve-space: "0MB"
      rocksdb:
        max-open-files: 256
      raftdb:
        max-open-files: 256
  tidb:
    baseImage: pingcap/tidb
    version: v8.5.7
    maxFailoverCount: 0
    replicas: 1
    service:
      type: ClusterIP
    config: {}
`

func pdmsMembers(tc *v1alpha1.TidbCluster, svc string) int {
	if st := tc.Status.PDMS[svc]; st != nil && st.Synced {
		return len(st.Members)
	}
	return 0
}

// TestPDMicroServicesExampleScalesAndRollsItsPrimaryLast applies the v1.6
// micro-service example: Ready with 2 tso and 2 scheduling members, PD
// started as the API service, the services' objects named as v1.6 names
// them; both services scale 2→1→2→1→2; then an upgrade restarts one pod
// of each at a time, highest ordinal first, and moves each primary off
// <svc>-0 before it restarts (afterwards PD names <svc>-1, which only a
// transfer makes primary while <svc>-0 runs).
func TestPDMicroServicesExampleScalesAndRollsItsPrimaryLast(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAML(t, env.Ctx, v16MicroServiceCluster, env.Namespace)
	f.waitReady(t, "the micro-service example is Ready with 2 tso and 2 scheduling members", func(tc *v1alpha1.TidbCluster) bool {
		return pdmsMembers(tc, "tso") == 2 && pdmsMembers(tc, "scheduling") == 2 && tc.Status.PDMS["tso"].Healthy
	})
	f.checkMicroServiceObjects(t)
	if tc, err := f.get(env.Ctx); err != nil {
		t.Fatal(err)
	} else if c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported); c != nil &&
		(strings.Contains(c.Message, "pdms") || strings.Contains(c.Message, "pd.mode")) {
		t.Errorf("Unsupported names the micro-services of a cluster that runs them: %s", c.Message)
	}
	if got := f.primary(t, "tso"); !strings.Contains(got, "basic-tso-0.") {
		t.Fatalf("tso primary %q before the upgrade, want basic-tso-0", got)
	}

	for _, n := range []int{1, 2, 1, 2} { // 2→1, then 1→2→1, then back to 2 for the upgrade
		patchPDMS(t, f, pdmsList("v8.3.0-5427", "v8.3.0-5427", n))
		f.waitReady(t, fmt.Sprintf("tso and scheduling scaled to %d", n), func(tc *v1alpha1.TidbCluster) bool {
			return pdmsMembers(tc, "tso") == n && pdmsMembers(tc, "scheduling") == n &&
				tc.Status.PDMS["tso"].StatefulSet.Replicas == int32(n) && tc.Status.PDMS["scheduling"].StatefulSet.Replicas == int32(n)
		})
	}
	if got := f.primary(t, "scheduling"); !strings.Contains(got, "basic-scheduling-0.") {
		t.Fatalf("scheduling primary %q before the upgrade, want basic-scheduling-0", got)
	}

	mostTSO, mostScheduling := f.watchMostDown(t, "tso", 2), f.watchMostDown(t, "scheduling", 2)
	patchPDMS(t, f, pdmsList("v8.3.0-5430", "v8.3.0-5430", 2))
	f.waitReady(t, "every tso and scheduling pod runs v8.3.0-5430", func(tc *v1alpha1.TidbCluster) bool {
		return pdmsMembers(tc, "tso") == 2 && f.podsRun(t, "tso", "v8.3.0-5430", 2) &&
			pdmsMembers(tc, "scheduling") == 2 && f.podsRun(t, "scheduling", "v8.3.0-5430", 2)
	})
	for svc, most := range map[string]func() (int, string){"tso": mostTSO, "scheduling": mostScheduling} {
		if down, at := most(); down > 1 {
			t.Errorf("%d %s pods were down at once during the rollout (%s)", down, svc, at)
		}
		if got := f.primary(t, svc); !strings.Contains(got, "basic-"+svc+"-1.") {
			t.Errorf("%s primary %q after the upgrade, want basic-%s-1: the primary was not moved before basic-%s-0 restarted",
				svc, got, svc, svc)
		}
	}
}

// pdmsList is the example's spec.pdms with tso and scheduling at the versions given and n replicas each.
func pdmsList(tsoVersion, schedulingVersion string, n int) string {
	return fmt.Sprintf(`[{"name":"tso","baseImage":"hub.pingcap.net/devbuild/pd","version":%q,"replicas":%d},`+
		`{"name":"scheduling","baseImage":"hub.pingcap.net/devbuild/pd","version":%q,"replicas":%d}]`, tsoVersion, n, schedulingVersion, n)
}

// checkMicroServiceObjects checks the names, ports and start commands v1.6 gives the services and PD.
func (f *clusterFixture) checkMicroServiceObjects(t *testing.T) {
	t.Helper()
	ctx, ns := f.env.Ctx, f.env.Namespace
	for _, svc := range []string{"tso", "scheduling"} {
		client, err := f.env.Kube.CoreV1().Services(ns).Get(ctx, "basic-"+svc, metav1.GetOptions{})
		if err != nil || len(client.Spec.Ports) != 1 || client.Spec.Ports[0].Name != "client" || client.Spec.Ports[0].Port != 2379 {
			t.Errorf("Service basic-%s: %v %+v, want one port client 2379", svc, err, client)
		}
		peer, err := f.env.Kube.CoreV1().Services(ns).Get(ctx, "basic-"+svc+"-peer", metav1.GetOptions{})
		if err != nil || !peer.Spec.PublishNotReadyAddresses || len(peer.Spec.Ports) != 2 {
			t.Errorf("Service basic-%s-peer: %v, want a headless Service publishing not-ready addresses on 2380 and 2379", svc, err)
		}
		sts, err := f.env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "basic-"+svc, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("StatefulSet basic-%s: %v", svc, err)
		}
		if sel := sts.Spec.Selector.MatchLabels["app.kubernetes.io/component"]; sel != svc || len(sts.Spec.VolumeClaimTemplates) != 0 {
			t.Errorf("StatefulSet basic-%s: selector component %q, %d claim templates; want %s and none", svc, sel, len(sts.Spec.VolumeClaimTemplates), svc)
		}
		script := f.startScript(t, "basic-"+svc)
		if want := "services " + svc + " --name=${PDMS_POD_NAME}"; !strings.Contains(script, want) ||
			!strings.Contains(script, "--backend-endpoints=http://basic-pd:2379") {
			t.Errorf("basic-%s start script lacks %q or PD's backend:\n%s", svc, want, script)
		}
	}
	if script := f.startScript(t, "basic-pd"); !strings.Contains(script, `ARGS="services api --data-dir=`) {
		t.Errorf("PD's start script does not start the API service:\n%s", script)
	}
}

// startScript is the start script in the ConfigMap the StatefulSet sts mounts.
func (f *clusterFixture) startScript(t *testing.T, sts string) string {
	t.Helper()
	set, err := f.env.Kube.AppsV1().StatefulSets(f.env.Namespace).Get(f.env.Ctx, sts, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("StatefulSet %s: %v", sts, err)
	}
	for _, v := range set.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil || v.Name != "startup-script" {
			continue
		}
		cm, err := f.env.Kube.CoreV1().ConfigMaps(f.env.Namespace).Get(f.env.Ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap %s: %v", v.ConfigMap.Name, err)
		}
		return cm.Data["startup-script"]
	}
	t.Fatalf("StatefulSet %s mounts no start script", sts)
	return ""
}

// primary asks PD, through the simulator, for svc's primary.
func (f *clusterFixture) primary(t *testing.T, svc string) string {
	t.Helper()
	proxy, err := url.Parse("http://" + simAddr)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	u := fmt.Sprintf("http://%s-pd.%s:2379/pd/api/v2/ms/primary/%s", f.name, f.env.Namespace, svc)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var primary string
	if err := json.Unmarshal(body, &primary); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %q (%v)", u, resp.StatusCode, body, err)
	}
	return primary
}

// patchPDMS replaces spec.pdms with the JSON list value.
func patchPDMS(t *testing.T, f *clusterFixture, value string) {
	t.Helper()
	body := []byte(`{"spec":{"pdms":` + value + `}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(f.env.Namespace).Patch(f.env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch spec.pdms: %v", err)
	}
}

// TestPDSwitchesIntoAndOutOfMicroServiceMode: examples/basic turned to mode
// ms with tso and scheduling creates both services and rolls PD into the
// API service; turned back, PD rolls out of it and both StatefulSets are
// scaled to 0 (kept, as v1.6 keeps them) only once PD no longer needs them.
func TestPDSwitchesIntoAndOutOfMicroServiceMode(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), env.Namespace)
	f.waitReady(t, "examples/basic is Ready", func(*v1alpha1.TidbCluster) bool { return true })

	body := []byte(`{"spec":{"pd":{"mode":"ms"},"pdms":[{"name":"tso","replicas":1},{"name":"scheduling","replicas":1}]}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "tso and scheduling run and PD rolled into the API service", func(tc *v1alpha1.TidbCluster) bool {
		return pdmsMembers(tc, "tso") == 1 && pdmsMembers(tc, "scheduling") == 1 &&
			strings.Contains(f.startScript(t, "basic-pd"), `ARGS="services api `) && tc.Status.PD.Phase == v1alpha1.NormalPhase
	})

	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json",
		[]byte(`{"spec":{"pd":{"mode":""}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "PD runs as one service again and the services are scaled to 0", func(tc *v1alpha1.TidbCluster) bool {
		if strings.Contains(f.startScript(t, "basic-pd"), "services api") {
			return false
		}
		for _, svc := range []string{"tso", "scheduling"} {
			sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "basic-"+svc, metav1.GetOptions{})
			if err != nil || sts.Spec.Replicas == nil || *sts.Spec.Replicas != 0 {
				return false
			}
		}
		return true
	})
	tc, err := f.get(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported); c == nil ||
		!strings.Contains(c.Message, "spec.pdms (PD runs as one service unless spec.pd.mode is ms") {
		t.Errorf("Unsupported = %+v, want spec.pdms named as ignored without mode ms", c)
	}
}
