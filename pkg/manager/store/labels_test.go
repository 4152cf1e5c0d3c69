package store

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestNodeLabels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		node map[string]string
		keys []string
		want map[string]string
	}{
		{name: "own names win over fallbacks",
			node: map[string]string{"zone": "z-own", corev1.LabelTopologyZone: "z-topo"}, keys: []string{"zone"},
			want: map[string]string{"zone": "z-own"}},
		{name: "short names fall back to the topology keys and the hostname",
			node: map[string]string{corev1.LabelTopologyRegion: "r1", corev1.LabelTopologyZone: "z1", corev1.LabelHostname: "n1"},
			keys: []string{"region", "zone", "host"}, want: map[string]string{"region": "r1", "zone": "z1", "host": "n1"}},
		{name: "beta keys when the stable ones are absent",
			node: map[string]string{corev1.LabelFailureDomainBetaRegion: "r-beta", corev1.LabelFailureDomainBetaZone: "z-beta"},
			keys: []string{"region", "zone"}, want: map[string]string{"region": "r-beta", "zone": "z-beta"}},
		{name: "stable before beta",
			node: map[string]string{corev1.LabelFailureDomainBetaZone: "z-beta", corev1.LabelTopologyZone: "z1"},
			keys: []string{"zone"}, want: map[string]string{"zone": "z1"}},
		{name: "missing node labels are left out",
			node: map[string]string{}, keys: []string{"zone", "host", "rack"}, want: map[string]string{}},
		{name: "node labels not named by a key are ignored",
			node: map[string]string{"rack": "r7", "gpu": "yes", corev1.LabelHostname: "n1"}, keys: []string{"rack"},
			want: map[string]string{"rack": "r7"}},
		{name: "full keys are read as they are",
			node: map[string]string{corev1.LabelTopologyZone: "z1"}, keys: []string{corev1.LabelTopologyZone},
			want: map[string]string{corev1.LabelTopologyZone: "z1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := NodeLabels(c.node, c.keys); !maps.Equal(got, c.want) {
				t.Errorf("NodeLabels = %v, want %v", got, c.want)
			}
		})
	}
}

func TestStoreLabelKeysAndDiffers(t *testing.T) {
	t.Parallel()
	got := StoreLabelKeys([]string{"zone", "host"}, []string{"host", "rack"})
	if strings.Join(got, ",") != "zone,host,rack" {
		t.Errorf("StoreLabelKeys = %v, want zone,host,rack", got)
	}
	if d := Differs(map[string]string{"zone": "a", "engine": "x"}, map[string]string{"zone": "a"}); d != nil {
		t.Errorf("Differs of agreeing labels = %v, want nil", d)
	}
	d := Differs(map[string]string{"zone": "a"}, map[string]string{"zone": "b", "host": "n1"})
	if !maps.Equal(d, map[string]string{"zone": "b", "host": "n1"}) {
		t.Errorf("Differs = %v, want zone=b host=n1", d)
	}
}

// labelFixture is a TiKV lifecycle over a fake PD holding stores 1 and 2 of
// pods db-tikv-0 and db-tikv-1 on nodes n0 and n1.
type labelFixture struct {
	l    *Lifecycle
	tc   *v1alpha1.TidbCluster
	pd   *pdapi.FakeClient
	kube *kubefake.Clientset
	rec  *record.FakeRecorder
}

var tikvKind = Kind{
	Component:   "tikv",
	Status:      func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiKV },
	Spec:        func(tc *v1alpha1.TidbCluster) Spec { return Spec{Replicas: tc.Spec.TiKV.Replicas} },
	NotUpReason: "TiKVStoreNotUp", Label: "TiKV",
}

func newLabelFixture(t *testing.T, storeLabels ...map[string]string) *labelFixture {
	t.Helper()
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace, tc.UID = "db", "ns", "uid-1"
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 2}
	tc.Status.ClusterID = "42"
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "db")
	var stores []*pdapi.StoreInfo
	for i, pod := range []string{"db-tikv-0", "db-tikv-1"} {
		var ls []*pdapi.StoreLabel
		if i < len(storeLabels) {
			for k, v := range storeLabels[i] {
				ls = append(ls, &pdapi.StoreLabel{Key: k, Value: v})
			}
		}
		stores = append(stores, &pdapi.StoreInfo{
			Store: &pdapi.MetaStore{ID: uint64(i + 1), Address: pod + ".db-tikv-peer.ns.svc:20160", StateName: pdapi.StoreStateNameUp,
				Labels: ls},
			Status: &pdapi.StoreStatus{},
		})
	}
	pd.SetStores(stores...)
	pd.SetConfig(pdapi.Config{Replication: pdapi.ReplicationConfig{LocationLabels: pdapi.StringSlice{"zone", "host"}}})
	nodes := []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a", corev1.LabelHostname: "n0"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "zone-b", corev1.LabelHostname: "n1"}}},
	}
	kube := kubefake.NewClientset(nodes...)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i, name := range []string{"db-tikv-0", "db-tikv-1"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{"tidb.pingcap.com/cluster-id": "42", "tidb.pingcap.com/store-id": []string{"1", "2"}[i]}},
			Spec: corev1.PodSpec{NodeName: []string{"n0", "n1"}[i]}}
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(20)
	env := &component.Env{PD: ctl, Kube: kube, Pods: corelisters.NewPodLister(pods), Recorder: rec,
		Writer: apply.NewApplier(kube, rec, apply.Caches{}),
		Clock:  clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	return &labelFixture{l: New(tikvKind, env), tc: tc, pd: pd, kube: kube, rec: rec}
}

func (f *labelFixture) labelWrites() []pdapi.Call {
	var out []pdapi.Call
	for _, c := range f.pd.WriteCalls() {
		if c.Method == pdapi.MethodSetStoreLabels {
			out = append(out, c)
		}
	}
	return out
}

func storeLabelsOf(t *testing.T, pd *pdapi.FakeClient, id uint64) map[string]string {
	t.Helper()
	s, err := pd.GetStore(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range s.Store.Labels {
		out[l.Key] = l.Value
	}
	return out
}

func observeWithSTS(t *testing.T, f *labelFixture) {
	t.Helper()
	if err := f.l.Observe(flow.WithMemo(context.Background()), f.tc, stsStub()); err != nil {
		t.Fatal(err)
	}
}

func TestStoreLabelsSetFromNodesThenNoWrite(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t)
	observeWithSTS(t, f)
	for id, want := range map[uint64]map[string]string{1: {"zone": "zone-a", "host": "n0"}, 2: {"zone": "zone-b", "host": "n1"}} {
		if got := storeLabelsOf(t, f.pd, id); !maps.Equal(got, want) {
			t.Errorf("store %d labels = %v, want %v", id, got, want)
		}
	}
	if n := len(f.labelWrites()); n != 2 {
		t.Errorf("label writes = %d, want 2", n)
	}
	f.pd.ResetCalls()
	f.kube.ClearActions()
	observeWithSTS(t, f)
	if w := f.pd.WriteCalls(); len(w) != 0 {
		t.Errorf("a converged observation wrote to PD: %v", w)
	}
	for _, a := range f.kube.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("a converged observation wrote to the API: %v", a)
		}
	}
}

func TestStoreLabelsOnlyTheMissingOrDifferent(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t, map[string]string{"zone": "zone-a", "host": "n0"}, map[string]string{"zone": "old", "host": "n1", "rack": "r1"})
	observeWithSTS(t, f)
	w := f.labelWrites()
	if len(w) != 1 || w[0].Args[0] != uint64(2) || !maps.Equal(w[0].Args[1].(map[string]string), map[string]string{"zone": "zone-b"}) {
		t.Fatalf("label writes = %v, want only store 2 zone=zone-b", w)
	}
}

func TestStoreLabelsFailureIsAnEventNotAnError(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t)
	f.pd.SetError(pdapi.MethodSetStoreLabels, errors.New("PD says no"))
	observeWithSTS(t, f) // fails the test on an error
	if !f.tc.Status.TiKV.Synced || len(f.tc.Status.TiKV.Stores) != 2 {
		t.Errorf("stores not observed after a label failure: %+v", f.tc.Status.TiKV)
	}
	if got := drain(f.rec); strings.Count(got, "Warning "+FailedSetStoreLabels) != 2 || !strings.Contains(got, "PD says no") {
		t.Errorf("events = %q, want two Warning %s naming PD's error", got, FailedSetStoreLabels)
	}
	f.pd.SetError(pdapi.MethodSetStoreLabels, nil)
	observeWithSTS(t, f)
	if got := storeLabelsOf(t, f.pd, 1); got["zone"] != "zone-a" {
		t.Errorf("the next observation did not retry: store 1 labels %v", got)
	}
}

func TestStoreLabelsWithoutNodePermission(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t)
	f.kube.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n0", errors.New("RBAC"))
	})
	observeWithSTS(t, f)
	observeWithSTS(t, f)
	if w := f.labelWrites(); len(w) != 0 {
		t.Errorf("labels written without node labels: %v", w)
	}
	if got := drain(f.rec); strings.Count(got, FailedSetStoreLabels) != 1 || !strings.Contains(got, "clusterPermissions.nodes") {
		t.Errorf("events = %q, want one Warning naming the missing node permission", got)
	}
}

func TestStoreLabelsKeysFromSpecAndSkippedWhenNone(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t)
	f.pd.SetConfig(pdapi.Config{})
	observeWithSTS(t, f)
	if w := f.labelWrites(); len(w) != 0 {
		t.Errorf("labels written without location-labels or storeLabels: %v", w)
	}
	f.tc.Spec.TiKV.StoreLabels = []string{"host"}
	observeWithSTS(t, f)
	if got := storeLabelsOf(t, f.pd, 2); !maps.Equal(got, map[string]string{"host": "n1"}) {
		t.Errorf("store 2 labels = %v, want host=n1 from spec.tikv.storeLabels", got)
	}
}

func TestStoreLabelsSkippedWhilePaused(t *testing.T) {
	t.Parallel()
	f := newLabelFixture(t)
	f.tc.Spec.Paused = true
	observeWithSTS(t, f)
	if w := f.pd.WriteCalls(); len(w) != 0 {
		t.Errorf("a paused cluster's observation wrote to PD: %v", w)
	}
}

func stsStub() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db-tikv", Namespace: "ns"}}
}

func drain(rec *record.FakeRecorder) string {
	var b strings.Builder
	for {
		select {
		case e := <-rec.Events:
			b.WriteString(e + "\n")
		default:
			return b.String()
		}
	}
}
