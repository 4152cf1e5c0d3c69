package tiproxy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tiproxyapi"
)

var (
	before = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	now    = metav1.NewTime(before.Add(time.Hour))
)

// readyPod is a TiProxy pod Ready since readySince (not Ready when zero).
func readyPod(ordinal int32, readySince time.Time) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: names.Pod("basic", names.TiProxy, ordinal), Namespace: "ns"}}
	status := corev1.ConditionFalse
	if !readySince.IsZero() {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(readySince)}}
	return pod
}

func podLister(t *testing.T, pods ...*corev1.Pod) corelisters.PodLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(indexer)
}

func hookTC() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			PD:      &v1alpha1.PDSpec{Replicas: 1},
			TiProxy: &v1alpha1.TiProxySpec{Replicas: 3},
		},
	}
}

func newTestComponent(t *testing.T, client tiproxyapi.Client, pods ...*corev1.Pod) *Component {
	t.Helper()
	return NewWithClient(&component.Env{Pods: podLister(t, pods...), Clock: clocktesting.NewFakePassiveClock(now.Time)}, client)
}

func waiting(err error) bool {
	_, ok := flow.AsRequeue(err)
	return ok
}

// TestPostUpgradePod: the next proxy restarts only once the restarted one
// answers healthy and has been Ready for min-ready-seconds.
func TestPostUpgradePod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxies := tiproxyapi.NewFakeClient()
	c := newTestComponent(t, proxies, readyPod(2, now.Add(-10*time.Second)), readyPod(1, time.Time{}))
	tc := hookTC()

	if err := c.PostUpgradePod(ctx, tc, 2); err != nil {
		t.Fatalf("healthy proxy without min-ready-seconds: %v", err)
	}
	proxies.SetUnhealthy("ns", "basic-tiproxy-2", "not ready yet (500 service not ready)")
	if err := c.PostUpgradePod(ctx, tc, 2); !waiting(err) {
		t.Fatalf("unhealthy proxy: %v, want a wait", err)
	}
	proxies.SetError("ns", "basic-tiproxy-2", errors.New("no TLS material"))
	if err := c.PostUpgradePod(ctx, tc, 2); !waiting(err) {
		t.Fatalf("health not known: %v, want a wait", err)
	}
	proxies.SetError("ns", "basic-tiproxy-2", nil)
	proxies.SetHealthy("ns", "basic-tiproxy-2", 1)

	tc.Annotations = map[string]string{label.AnnTiProxyMinReadySeconds: "30"}
	err := c.PostUpgradePod(ctx, tc, 2)
	re, ok := flow.AsRequeue(err)
	if !ok || re.After != 20*time.Second {
		t.Fatalf("Ready for 10s of 30: %v, want a wait of 20s", err)
	}
	if err := c.PostUpgradePod(ctx, tc, 1); !waiting(err) {
		t.Fatalf("a pod not Ready: %v, want a wait", err)
	}
	if err := c.PostUpgradePod(ctx, tc, 0); !waiting(err) {
		t.Fatalf("a pod not in the cache: %v, want a wait", err)
	}
	tc.Annotations[label.AnnTiProxyMinReadySeconds] = "10"
	if err := c.PostUpgradePod(ctx, tc, 2); err != nil {
		t.Fatalf("Ready for 10s of 10: %v", err)
	}
	tc.Annotations[label.AnnTiProxyMinReadySeconds] = "soon"
	// An unreadable annotation is ignored, as the TiDB Operator does: only
	// the health of the (not Ready) pod is asked.
	if err := c.PostUpgradePod(ctx, tc, 1); err != nil {
		t.Fatalf("an unreadable annotation: %v", err)
	}
	noClient := NewWithClient(&component.Env{Pods: podLister(t)}, nil)
	if err := noClient.PostUpgradePod(ctx, hookTC(), 0); err != nil {
		t.Fatalf("without a client nothing is asked: %v", err)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	c := newTestComponent(t, nil)
	tc := hookTC()
	if reason := c.Gate(tc); reason == "" {
		t.Error("PD without members: the gate is open")
	}
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	if reason := c.Gate(tc); reason != "" {
		t.Errorf("PD available: gate says %q", reason)
	}
	tc.Spec.PD = nil
	tc.Status.PD = v1alpha1.PDStatus{}
	if reason := c.Gate(tc); reason != "" {
		t.Errorf("another cluster's PD: gate says %q", reason)
	}
}

func TestReadinessAndHealth(t *testing.T) {
	t.Parallel()
	c := newTestComponent(t, nil)
	tc := hookTC()
	tc.Status.TiProxy.Members = map[string]v1alpha1.TiProxyMember{
		"basic-tiproxy-0": {Name: "basic-tiproxy-0", Health: true},
		"basic-tiproxy-1": {Name: "basic-tiproxy-1", Health: false},
		"basic-tiproxy-2": {Name: "basic-tiproxy-2", Health: true},
	}
	reason, msg := c.NotReady(tc)
	if reason != ReasonUnhealthy || msg != "TiProxy(s) are not healthy: 2 of 3" {
		t.Errorf("NotReady = %q, %q", reason, msg)
	}
	if c.PodHealthy(tc, "basic-tiproxy-1") || !c.PodHealthy(tc, "basic-tiproxy-2") || c.PodHealthy(tc, "basic-tiproxy-7") {
		t.Error("PodHealthy does not follow the members")
	}
	tc.Spec.TiProxy.Replicas = 2
	if reason, _ := c.NotReady(tc); reason != "" {
		t.Errorf("2 healthy of 2: NotReady = %q", reason)
	}
	if !c.Traits().FreeScaleIn || !c.Traits().ReloadsConfig {
		t.Errorf("Traits %+v: a proxy keeps no data and reloads its config", c.Traits())
	}
	if got := c.Traits().UpgradeBlockers; !cmp.Equal(got, []string{"pd"}) {
		t.Errorf("UpgradeBlockers = %v", got)
	}
}

func member(ordinal int32, health bool, info string, transition metav1.Time) v1alpha1.TiProxyMember {
	return v1alpha1.TiProxyMember{Name: names.Pod("basic", names.TiProxy, ordinal), Health: health, Info: info, LastTransitionTime: transition}
}

// TestObserve: one member per ordinal; a missing pod is unhealthy and not
// asked; lastTransitionTime moves only with the health; the operator's own
// failure keeps the members it had.
func TestObserve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxies := tiproxyapi.NewFakeClient()
	proxies.SetHealthy("ns", "basic-tiproxy-0", 42)
	proxies.SetUnhealthy("ns", "basic-tiproxy-2", "shutting down (502)")
	c := newTestComponent(t, proxies, readyPod(0, before.Time), readyPod(2, before.Time))
	tc := hookTC()
	tc.Status.TiProxy.Members = map[string]v1alpha1.TiProxyMember{
		"basic-tiproxy-0": member(0, true, "old", before),
		"basic-tiproxy-2": member(2, true, "old", before),
		"basic-tiproxy-5": member(5, true, "", before), // scaled in long ago
	}
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}}
	if err := c.Observe(ctx, tc, sts); err != nil {
		t.Fatal(err)
	}
	want := map[string]v1alpha1.TiProxyMember{
		"basic-tiproxy-0": member(0, true, `{"config_checksum":42}`, before),
		"basic-tiproxy-1": member(1, false, "", now),
		"basic-tiproxy-2": member(2, false, "", now),
	}
	if diff := cmp.Diff(want, tc.Status.TiProxy.Members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if !tc.Status.TiProxy.Synced {
		t.Error("synced is false after every proxy was asked")
	}
	for _, call := range proxies.Calls() {
		if call.PodName == "basic-tiproxy-1" {
			t.Error("a pod that does not exist was asked")
		}
	}

	proxies.SetError("ns", "basic-tiproxy-0", errors.New("no TLS material"))
	if err := c.Observe(ctx, tc, sts); err == nil {
		t.Fatal("the operator's own failure is not reported")
	}
	if diff := cmp.Diff(want, tc.Status.TiProxy.Members); diff != "" || tc.Status.TiProxy.Synced {
		t.Errorf("after the operator's failure: synced %v, members changed (-want +got):\n%s", tc.Status.TiProxy.Synced, diff)
	}

	if err := c.Observe(ctx, tc, nil); err != nil || tc.Status.TiProxy.Members != nil || tc.Status.TiProxy.Synced {
		t.Errorf("before the StatefulSet exists: %v, %+v", err, tc.Status.TiProxy)
	}
}

func TestClientOptions(t *testing.T) {
	t.Parallel()
	tc := hookTC()
	tc.Spec.ClusterDomain = "cluster.local"
	tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
	if got := ClientOptions(tc); got.TLSEnabled || got.ClusterDomain != "cluster.local" {
		t.Errorf("TiDB's client TLS alone: %+v; the API serves plain HTTP", got)
	}
	tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	if got := ClientOptions(tc); !got.TLSEnabled {
		t.Errorf("tlsCluster: %+v", got)
	}
}
