package tidb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

func TestSwitchControlled(t *testing.T) {
	t.Parallel()
	cases := map[[2]string]bool{
		{"v7.1.2", "v7.1.5"}: true, {"v7.1.2", "v7.5.0"}: true, {"v7.4.0", "v8.5.1"}: true, {"v7.5.0", "v7.5.1"}: true,
		{"v7.1.1", "v7.5.0"}: false, {"v7.1.0", "v7.1.1"}: false, {"v7.2.0", "v7.3.0"}: false, {"v7.3.0", "v7.4.0"}: false,
		{"v6.5.10", "v8.1.0"}: false, {"v7.1.5", "v7.2.0"}: false, {"nightly", "v8.5.0"}: false, {"v8.5.0", "latest"}: false,
		{"v7.5.0-pre", "v8.1.0"}: true, {"7.5.0", "8.1.0"}: false,
	}
	for pair, want := range cases {
		if got := switchControlled(pair[0], pair[1]); got != want {
			t.Errorf("switchControlled(%s, %s) = %v, want %v", pair[0], pair[1], got, want)
		}
	}
	for image, want := range map[string]string{"pingcap/tidb:v7.1.2": "v7.1.2", "reg:5000/pingcap/tidb": "", "pingcap/tidb@sha256:ab": "", "tidb": ""} {
		if got := imageTag(image); got != want {
			t.Errorf("imageTag(%s) = %q, want %q", image, got, want)
		}
	}
}

type smoothFixture struct {
	c    *Component
	tidb *tidbapi.FakeClient
	pc   *fake.Clientset
	tc   *v1alpha1.TidbCluster
}

// newSmoothFixture is a cluster of three healthy TiDB servers, the
// TidbCluster in the fake API with the annotations given.
func newSmoothFixture(t *testing.T, annotations map[string]string) *smoothFixture {
	t.Helper()
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "tc-uid", Annotations: annotations},
		Spec: v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Replicas: 3}}}
	tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{
		"basic-tidb-0": {Health: false}, "basic-tidb-1": {Health: true}, "basic-tidb-2": {Health: true}}
	pc := fake.NewSimpleClientset(tc.DeepCopy())
	client := tidbapi.NewFakeClient()
	writer := apply.NewApplier(kubefake.NewClientset(), record.NewFakeRecorder(10), apply.Caches{}).WithClusters(pc)
	c := NewWithClient(&component.Env{Writer: writer, Recorder: record.NewFakeRecorder(10),
		Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))}, client)
	pc.ClearActions()
	return &smoothFixture{c: c, tidb: client, pc: pc, tc: tc}
}

func tidbPod(tag string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb-2", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:" + tag}}}}
}

func tidbSet(tag string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:" + tag}}
	return sts
}

func (f *smoothFixture) calls() []string {
	var out []string
	for _, c := range f.tidb.Calls() {
		out = append(out, c.Method+" "+c.PodName)
	}
	return out
}

func (f *smoothFixture) liveAnnotations(t *testing.T) map[string]string {
	t.Helper()
	tc, err := f.pc.PingcapV1alpha1().TidbClusters("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tc.Annotations
}

func patches(pc *fake.Clientset) int {
	n := 0
	for _, a := range pc.Actions() {
		if _, ok := a.(k8stesting.PatchAction); ok {
			n++
		}
	}
	return n
}

// TestSmoothUpgradeStartsOnceAndRecordsIt: the first restart of a
// switch-controlled version pair starts the smooth upgrade through the
// lowest healthy server and records it; later restarts of the pair ask
// and write nothing.
func TestSmoothUpgradeStartsOnceAndRecordsIt(t *testing.T) {
	t.Parallel()
	f := newSmoothFixture(t, nil)
	ctx := context.Background()
	if err := f.c.BeginRollout(ctx, f.tc, tidbPod("v7.1.2"), tidbSet("v7.5.0")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls(), ","); got != "StartUpgrade basic-tidb-1" {
		t.Errorf("calls %s, want StartUpgrade through basic-tidb-1 (the lowest healthy)", got)
	}
	live := f.liveAnnotations(t)
	want := map[string]string{label.AnnSmoothUpgradeDDLPaused: "true", label.AnnSmoothUpgradeSourceVersion: "v7.1.2",
		label.AnnSmoothUpgradeTargetVersion: "v7.5.0", label.AnnSmoothUpgradeStartedAt: "2026-01-01T01:00:00Z"}
	for k, v := range want {
		if live[k] != v || f.tc.Annotations[k] != v {
			t.Errorf("annotation %s = %q in the API, %q in memory; want %q", k, live[k], f.tc.Annotations[k], v)
		}
	}
	f.pc.ClearActions()
	if err := f.c.BeginRollout(ctx, f.tc, tidbPod("v7.1.2"), tidbSet("v7.5.0")); err != nil {
		t.Fatal(err)
	}
	if len(f.calls()) != 1 || patches(f.pc) != 0 {
		t.Errorf("a later restart of the same pair called %v and patched %d times; want nothing", f.calls(), patches(f.pc))
	}
}

// TestSmoothUpgradeWaitsAndWritesNothing: a failed start, no healthy
// server, a config-only restart and pairs TiDB does not switch write
// nothing; the first two keep the pod from restarting.
func TestSmoothUpgradeWaitsAndWritesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		from, to       string
		prepare        func(*smoothFixture)
		wantErr, calls bool
	}{
		{"start fails", "v7.1.2", "v7.5.0", func(f *smoothFixture) { f.tidb.SetError("ns", "basic-tidb-1", errors.New("400 session closed")) }, true, true},
		{"no healthy server", "v7.1.2", "v7.5.0", func(f *smoothFixture) { f.tc.Status.TiDB.Members = nil }, true, false},
		{"config-only restart", "v7.5.0", "v7.5.0", nil, false, false},
		{"auto-smooth pair", "v7.1.0", "v7.3.0", nil, false, false},
		{"unsupported pair", "v7.3.0", "v7.4.0", nil, false, false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newSmoothFixture(t, nil)
			if tt.prepare != nil {
				tt.prepare(f)
			}
			err := f.c.BeginRollout(context.Background(), f.tc, tidbPod(tt.from), tidbSet(tt.to))
			if (err != nil) != tt.wantErr {
				t.Fatalf("BeginRollout = %v, want error %v", err, tt.wantErr)
			}
			if (len(f.calls()) > 0) != tt.calls || patches(f.pc) != 0 || len(f.tc.Annotations) != 0 {
				t.Errorf("calls %v, %d patches, annotations %v", f.calls(), patches(f.pc), f.tc.Annotations)
			}
		})
	}
}

// TestSmoothUpgradeOfAnotherPairIsFinishedFirst: a record of another
// version pair is finished and cleared, and the restart waits.
func TestSmoothUpgradeOfAnotherPairIsFinishedFirst(t *testing.T) {
	t.Parallel()
	f := newSmoothFixture(t, map[string]string{label.AnnSmoothUpgradeDDLPaused: "true",
		label.AnnSmoothUpgradeSourceVersion: "v7.1.2", label.AnnSmoothUpgradeTargetVersion: "v7.5.0", label.AnnSmoothUpgradeStartedAt: "x"})
	err := f.c.BeginRollout(context.Background(), f.tc, tidbPod("v7.5.0"), tidbSet("v8.1.0"))
	if _, waiting := flow.AsRequeue(err); !waiting {
		t.Fatalf("BeginRollout = %v, want a wait after finishing the stale pause", err)
	}
	if got := strings.Join(f.calls(), ","); got != "FinishUpgrade basic-tidb-1" {
		t.Errorf("calls %s", got)
	}
	if live := f.liveAnnotations(t); len(live) != 0 || len(f.tc.Annotations) != 0 {
		t.Errorf("annotations left: %v / %v", live, f.tc.Annotations)
	}
}

// TestSmoothUpgradeEnds: EndRollout finishes a recorded pause and clears
// it; a failure keeps it and asks for a revisit; without one it does nothing.
func TestSmoothUpgradeEnds(t *testing.T) {
	t.Parallel()
	paused := func() map[string]string {
		return map[string]string{label.AnnSmoothUpgradeDDLPaused: "true", label.AnnSmoothUpgradeSourceVersion: "v7.1.2",
			label.AnnSmoothUpgradeTargetVersion: "v7.5.0", label.AnnSmoothUpgradeStartedAt: "x", "other": "kept"}
	}
	f := newSmoothFixture(t, paused())
	f.tidb.SetError("ns", "basic-tidb-1", errors.New("unreachable"))
	ctx, revisits := flow.WithRevisits(context.Background())
	if err := f.c.EndRollout(ctx, f.tc); err != nil || revisits.Err() == nil {
		t.Fatalf("EndRollout = %v, revisit %v; want nil and a revisit", err, revisits.Err())
	}
	if patches(f.pc) != 0 || f.tc.Annotations[label.AnnSmoothUpgradeDDLPaused] != "true" {
		t.Fatalf("a failed finish must keep the record: %d patches, %v", patches(f.pc), f.tc.Annotations)
	}
	f.tidb.SetError("ns", "basic-tidb-1", nil)
	if err := f.c.EndRollout(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	if live := f.liveAnnotations(t); len(live) != 1 || live["other"] != "kept" {
		t.Errorf("annotations after finish %v, want only the user's", live)
	}
	f.pc.ClearActions()
	if err := f.c.EndRollout(context.Background(), f.tc); err != nil || patches(f.pc) != 0 || len(f.calls()) != 2 {
		t.Errorf("with nothing recorded EndRollout = %v, %d patches, calls %v", err, patches(f.pc), f.calls())
	}
}

// TestSmoothUpgradeOfAMissingPodTakesTheVersionOfTheOthers: when the pod
// the rollout restarts first is missing, the version TiDB upgrades from is
// the one other servers still run (the lowest ordinal's differing from the
// target), so DDL is paused all the same; with no other server on another
// version nothing is asked and the restart goes on.
func TestSmoothUpgradeOfAMissingPodTakesTheVersionOfTheOthers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		others     map[string]string // pod → tag
		wantCalls  string
		wantSource string
	}{
		{name: "others run the old version", others: map[string]string{"basic-tidb-0": "v7.1.2", "basic-tidb-1": "v8.1.0"},
			wantCalls: "StartUpgrade basic-tidb-1", wantSource: "v7.1.2"},
		{name: "others run the target", others: map[string]string{"basic-tidb-0": "v8.1.0", "basic-tidb-1": "v8.1.0"}},
		{name: "no other pod", others: map[string]string{}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newSmoothFixture(t, nil)
			pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for name, tag := range tt.others {
				p := tidbPod(tag)
				p.Name = name
				if err := pods.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			f.c.pods = corelisters.NewPodLister(pods)
			if err := f.c.BeginRollout(context.Background(), f.tc, nil, tidbSet("v8.1.0")); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.calls(), ","); got != tt.wantCalls {
				t.Errorf("calls %q, want %q", got, tt.wantCalls)
			}
			if got := f.tc.Annotations[label.AnnSmoothUpgradeSourceVersion]; got != tt.wantSource {
				t.Errorf("recorded source %q, want %q", got, tt.wantSource)
			}
		})
	}
}
