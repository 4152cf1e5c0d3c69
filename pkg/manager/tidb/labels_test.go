package tidb

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

func TestServerLabels(t *testing.T) {
	t.Parallel()
	node := map[string]string{corev1.LabelTopologyZone: "zone-a", corev1.LabelHostname: "n0", "rack": "r1"}
	cases := []struct {
		locations []string
		want      map[string]string
	}{
		{[]string{"zone", "host"}, map[string]string{"zone": "zone-a", "host": "n0"}},
		{[]string{corev1.LabelTopologyZone}, map[string]string{corev1.LabelTopologyZone: "zone-a", "zone": "zone-a"}},
		{[]string{"host"}, map[string]string{"host": "n0"}},
	}
	for _, c := range cases {
		if got := ServerLabels(node, c.locations); !maps.Equal(got, c.want) {
			t.Errorf("ServerLabels(%v) = %v, want %v", c.locations, got, c.want)
		}
	}
}

func TestTakesServerLabels(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]bool{"v6.3.0": true, "v8.5.0": true, "v6.2.9": false, "v5.4.0": false, "latest": true, "7.1.0": true} {
		tc := observedCluster()
		tc.Spec.Version = version
		if got := takesServerLabels(tc); got != want {
			t.Errorf("takesServerLabels(%s) = %v, want %v", version, got, want)
		}
	}
}

type labelsFixture struct {
	c    *Component
	tc   *v1alpha1.TidbCluster
	tidb *tidbapi.FakeClient
	pd   *pdapi.FakeClient
}

func newLabelsFixture(t *testing.T, locations ...string) *labelsFixture {
	t.Helper()
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "basic")
	pd.SetConfig(pdapi.Config{Replication: pdapi.ReplicationConfig{LocationLabels: locations}})
	kube := kubefake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a", corev1.LabelHostname: "n0"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "zone-b", corev1.LabelHostname: "n1"}}})
	fake := tidbapi.NewFakeClient()
	env := &component.Env{PD: ctl, Kube: kube, Pods: podLister(t, map[int32]string{0: "n0", 1: "n1", 2: ""}),
		Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	tc := observedCluster()
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.Version = "v8.5.0"
	return &labelsFixture{c: NewWithClient(env, fake), tc: tc, tidb: fake, pd: pd}
}

func (f *labelsFixture) observe(t *testing.T) {
	t.Helper()
	if err := f.c.Observe(flow.WithMemo(context.Background()), f.tc, stsWith(3)); err != nil {
		t.Fatal(err)
	}
}

func (f *labelsFixture) setCalls() []tidbapi.Call {
	var out []tidbapi.Call
	for _, c := range f.tidb.Calls() {
		if c.Method == "SetLabels" {
			out = append(out, c)
		}
	}
	return out
}

// TestServerLabelsSetOnceThenConverged: each healthy, scheduled server
// gets its node's zone and host; a second observation sets nothing.
func TestServerLabelsSetOnceThenConverged(t *testing.T) {
	t.Parallel()
	f := newLabelsFixture(t, "zone", "host")
	f.observe(t)
	got := map[string]string{}
	for _, c := range f.setCalls() {
		got[c.PodName] = c.Labels
	}
	want := map[string]string{"basic-tidb-0": "host=n0,zone=zone-a", "basic-tidb-1": "host=n1,zone=zone-b"}
	if !maps.Equal(got, want) {
		t.Fatalf("SetLabels calls = %v, want %v (the unscheduled basic-tidb-2 left alone)", got, want)
	}
	f.observe(t)
	if n := len(f.setCalls()); n != 2 {
		t.Errorf("a converged observation set labels again: %d calls in all, want 2", n)
	}
}

// TestServerLabelsNeedAZoneKeyAndTiDB63: no labels without a zone key in
// PD's location-labels, nor for TiDB before v6.3.0.
func TestServerLabelsNeedAZoneKeyAndTiDB63(t *testing.T) {
	t.Parallel()
	f := newLabelsFixture(t, "host")
	f.observe(t)
	if c := f.setCalls(); len(c) != 0 {
		t.Errorf("labels set without a zone location label: %v", c)
	}
	f = newLabelsFixture(t, "zone")
	f.tc.Spec.Version = "v6.1.0"
	f.observe(t)
	if c := f.setCalls(); len(c) != 0 {
		t.Errorf("labels set on TiDB v6.1.0: %v", c)
	}
}

// TestServerLabelsNotSetWhenTiDBReportsThem: a server whose /info already
// holds its zone is not asked again, and the members are still observed.
func TestServerLabelsNotSetWhenTiDBReportsThem(t *testing.T) {
	t.Parallel()
	f := newLabelsFixture(t, "zone")
	f.tidb.SetInfo("ns", "basic-tidb-0", tidbapi.Info{Labels: map[string]string{"zone": "zone-a"}})
	f.observe(t)
	for _, c := range f.setCalls() {
		if c.PodName == "basic-tidb-0" {
			t.Errorf("a server that already reports its zone was labelled again: %v", c)
		}
	}
	if len(f.tc.Status.TiDB.Members) != 3 {
		t.Errorf("members = %v, want 3", f.tc.Status.TiDB.Members)
	}
}
