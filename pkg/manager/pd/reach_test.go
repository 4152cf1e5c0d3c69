package pd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var (
	clusterCreated = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	before         = clusterCreated.Add(-48 * time.Hour)
	after          = clusterCreated.Add(time.Minute)
)

func claims(created time.Time, ordinals ...int32) []dataClaim {
	out := make([]dataClaim, len(ordinals))
	for i, o := range ordinals {
		out[i] = dataClaim{name: names.PVC(dataVolume, "basic", names.PD, o), ordinal: o, created: created}
	}
	return out
}

// TestRetainedData: a PD without a leader is explained by PVCs older
// than the cluster or beyond its replicas, and by nothing else.
func TestRetainedData(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		replicas int32
		failover int32
		claims   []dataClaim
		want     string
	}{
		{"re-created with fewer members", 1, 0, claims(before, 0, 1, 2),
			"the PVCs pd-basic-pd-0…2 predate this TidbCluster (created 2026-02-27T12:00:00Z, the cluster 2026-03-01T12:00:00Z) " +
				"and PVCs exist for 3 PD members (up to pd-basic-pd-2), so PD's data records members that do not run: " +
				"scale spec.pd.replicas back to 3, or delete the PVCs pd-basic-pd-0…2 and their pods to start with empty data"},
		{"members beyond the replicas", 3, 0, claims(after, 0, 1, 2, 4),
			"PVCs exist for 5 PD members (up to pd-basic-pd-4), so PD's data records members that do not run: " +
				"scale spec.pd.replicas back to 5, or delete the PVCs pd-basic-pd-0, pd-basic-pd-1, pd-basic-pd-2, pd-basic-pd-4 " +
				"and their pods to start with empty data"},
		{"re-created with as many members", 1, 0, claims(before, 0),
			"the PVC pd-basic-pd-0 predates this TidbCluster (created 2026-02-27T12:00:00Z, the cluster 2026-03-01T12:00:00Z), " +
				"so PD's data comes from an earlier cluster whose members may not all run: " +
				"delete the PVC pd-basic-pd-0 and its pod to start with empty data"},
		{"fresh PVCs", 3, 0, claims(after, 0, 1, 2), ""},
		{"a failover pod is no extra member", 3, 1, claims(after, 0, 1, 2, 3), ""},
		{"no PVC", 3, 0, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := basicTC()
			tc.CreationTimestamp = metav1.NewTime(clusterCreated)
			tc.Spec.PD.Replicas = c.replicas
			if got := retainedData(tc, c.failover, c.claims); got != c.want {
				t.Errorf("retainedData\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestDataClaims: only the cluster's PD data PVCs count, by ordinal; one
// being deleted or left behind by a scale-in does not.
func TestDataClaims(t *testing.T) {
	t.Parallel()
	pvc := func(name string, mutate func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	now := metav1.Now()
	got := dataClaims(basicTC(), []*corev1.PersistentVolumeClaim{
		pvc("pd-basic-pd-10", nil), pvc("pd-basic-pd-2", nil), pvc("tikv-basic-tikv-0", nil),
		pvc("pd-basic-pd-x", nil), pvc("pd-basic-pd-01", nil), pvc("pd-other-pd-0", nil),
		pvc("pd-basic-pd-3", func(p *corev1.PersistentVolumeClaim) { p.DeletionTimestamp = &now }),
		pvc("pd-basic-pd-4", func(p *corev1.PersistentVolumeClaim) {
			p.Annotations = map[string]string{label.AnnPVCDeferDeleting: "2026-01-01T00:00:00Z"}
		}),
	})
	if fmt.Sprint(got) != fmt.Sprint(claims(time.Time{}, 2, 10)) {
		t.Fatalf("dataClaims = %v, want pd-basic-pd-2 and pd-basic-pd-10", got)
	}
}

// reachFixture is PD with one Ready pod in the cache, the PD PVCs given,
// and a fake PD.
type reachFixture struct {
	c    *Component
	ctl  *pdapi.FakeControl
	rec  *record.FakeRecorder
	pods cache.Indexer
	tc   *v1alpha1.TidbCluster
}

func newReachFixture(t *testing.T, replicas int32, pvcCreated time.Time, pvcOrdinals ...int32) *reachFixture {
	t.Helper()
	tc := basicTC()
	tc.UID = "uid-1"
	tc.CreationTimestamp = metav1.NewTime(clusterCreated)
	tc.Spec.PD.Replicas = replicas
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	pods, pvcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers), cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-0", Namespace: "ns", Labels: component.Labels(tc, names.PD)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	for _, cl := range claims(pvcCreated, pvcOrdinals...) {
		if err := pvcs.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: cl.name, Namespace: "ns",
			CreationTimestamp: metav1.NewTime(cl.created)}}); err != nil {
			t.Fatal(err)
		}
	}
	ctl := pdapi.NewFakeControl()
	c := newFailoverPD(ctl, kubefake.NewClientset(), clusterCreated)
	rec := record.NewFakeRecorder(10)
	c.recorder = rec
	c.meta = &Meta{writer: apply.NewApplier(kubefake.NewClientset(), rec, apply.Caches{}),
		pods: corelisters.NewPodLister(pods), pvcs: corelisters.NewPersistentVolumeClaimLister(pvcs)}
	return &reachFixture{c: c, ctl: ctl, rec: rec, pods: pods, tc: tc}
}

// observe runs Observe in a sync of its own and returns the blockers it named.
func (f *reachFixture) observe(t *testing.T) []string {
	t.Helper()
	ctx, blockers := flow.WithBlockers(context.Background())
	_ = f.c.Observe(ctx, f.tc, &appsv1.StatefulSet{})
	return blockers.List()
}

func (f *reachFixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func leaderNil() error {
	return pdapi.Trace(fmt.Errorf("pd GetHealth: %w", &pdapi.StatusError{Method: "GET",
		URL: "http://basic-pd.ns:2379/pd/api/v1/health", StatusCode: 503, Message: "[PD:server:ErrLeaderNil]leader is nil"}))
}

// TestNoLeaderOverRetainedPVCs: a cluster created again with one PD
// member over the three PVCs of an earlier one is told why PD has no
// leader, with one Warning event; the cause stays while PD is not asked
// and goes once PD answers.
func TestNoLeaderOverRetainedPVCs(t *testing.T) {
	t.Parallel()
	f := newReachFixture(t, 1, before, 0, 1, 2)
	client := f.ctl.ClusterClient("ns", "basic")
	client.SetError(pdapi.MethodGetHealth, leaderNil())
	want := "PD at http://basic-pd.ns:2379 answers but has no leader (503 [PD:server:ErrLeaderNil]leader is nil): " +
		"the PVCs pd-basic-pd-0…2 predate this TidbCluster (created 2026-02-27T12:00:00Z, the cluster 2026-03-01T12:00:00Z) " +
		"and PVCs exist for 3 PD members (up to pd-basic-pd-2), so PD's data records members that do not run: " +
		"scale spec.pd.replicas back to 3, or delete the PVCs pd-basic-pd-0…2 and their pods to start with empty data"
	for range 3 {
		if got := f.observe(t); len(got) != 1 || got[0] != want {
			t.Fatalf("blockers %q\nwant [%q]", got, want)
		}
	}
	if ev := f.events(); len(ev) != 1 || ev[0] != "Warning "+ReasonPDNoLeader+" "+want {
		t.Fatalf("events over three syncs = %q, want one Warning %s", ev, ReasonPDNoLeader)
	}

	// No PD pod Ready: PD is not asked, and the cause stays named.
	notReady := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-0", Namespace: "ns", Labels: component.Labels(f.tc, names.PD)}}
	if err := f.pods.Update(notReady); err != nil {
		t.Fatal(err)
	}
	client.ResetCalls()
	if got := f.observe(t); len(got) != 1 || got[0] != want || len(client.Calls()) != 0 {
		t.Fatalf("sync not asking PD: blockers %q, calls %v; want the cause kept and PD not asked", got, client.Calls())
	}

	// PD answers: the cause goes.
	if err := f.pods.Update(&corev1.Pod{ObjectMeta: notReady.ObjectMeta, Status: corev1.PodStatus{
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}); err != nil {
		t.Fatal(err)
	}
	client.SetError(pdapi.MethodGetHealth, nil)
	client.SetMembers("basic-pd-0", &pdapi.Member{Name: "basic-pd-0", MemberID: 1})
	client.SetHealth(pdapi.HealthInfo{{Name: "basic-pd-0", MemberID: 1, Health: true,
		ClientUrls: []string{"http://basic-pd-0.basic-pd-peer.ns.svc:2379"}}})
	if got := f.observe(t); len(got) != 0 || !f.tc.Status.PD.Synced {
		t.Fatalf("PD answering: blockers %q, synced %v; want none and synced", got, f.tc.Status.PD.Synced)
	}
	if err := f.pods.Update(notReady); err != nil {
		t.Fatal(err)
	}
	if got := f.observe(t); len(got) != 0 {
		t.Fatalf("after PD answered, a sync not asking it names %q", got)
	}

	// The same failure again is a new event.
	client.SetError(pdapi.MethodGetHealth, leaderNil())
	if err := f.pods.Update(&corev1.Pod{ObjectMeta: notReady.ObjectMeta, Status: corev1.PodStatus{
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}); err != nil {
		t.Fatal(err)
	}
	f.observe(t)
	if ev := f.events(); len(ev) != 1 {
		t.Fatalf("events after PD failed again = %q, want one", ev)
	}
}

// TestUnreachablePDIsNamed: PD that cannot be reached is named with the
// cause, and a PD without a leader over fresh PVCs is named plainly.
func TestUnreachablePDIsNamed(t *testing.T) {
	t.Parallel()
	dns := &url.Error{Op: "Get", URL: "https://basic-pd.ns:2379/pd/api/v1/health", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "basic-pd.ns", IsNotFound: true}}}
	cases := []struct {
		name string
		tls  bool
		err  error
		want string
	}{
		{"DNS", true, pdapi.Trace(fmt.Errorf("pd GetHealth: %w", dns)),
			"PD at https://basic-pd.ns:2379 cannot be reached: DNS lookup failed (lookup basic-pd.ns: no such host)"},
		{"no leader, fresh PVCs", false, leaderNil(),
			"PD at http://basic-pd.ns:2379 answers but has no leader (503 [PD:server:ErrLeaderNil]leader is nil)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newReachFixture(t, 3, after, 0, 1, 2)
			if c.tls {
				f.tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			}
			f.ctl.ClusterClient("ns", "basic").SetError(pdapi.MethodGetHealth, c.err)
			if got := f.observe(t); len(got) != 1 || got[0] != c.want {
				t.Fatalf("blockers %q\nwant [%q]", got, c.want)
			}
			if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning ") {
				t.Fatalf("events %q, want one Warning", ev)
			}
		})
	}
}

// TestReachMemoryRecordsEachCauseOnce: causes that alternate while PD
// does not answer are recorded once each; once PD answers, a cause is new
// again.
func TestReachMemoryRecordsEachCauseOnce(t *testing.T) {
	t.Parallel()
	var r reachMemory
	var recorded []bool
	for _, why := range []string{"timed out", "no leader", "timed out", "no leader"} {
		recorded = append(recorded, r.remember("uid", why))
	}
	if fmt.Sprint(recorded) != "[true true false false]" || r.recall("uid") != "no leader" {
		t.Fatalf("recorded %v, recall %q; want each cause once and the last one recalled", recorded, r.recall("uid"))
	}
	r.forget("uid")
	if r.recall("uid") != "" || !r.remember("uid", "timed out") {
		t.Fatal("after PD answered, the cause is not new again")
	}
}
