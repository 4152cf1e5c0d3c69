package tikv

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// evictFixture is a 3-store TiKV cluster (basic-tikv-<i> holds store i+1,
// every store Up with 10 leaders) with its pods in a cache and the API.
type evictFixture struct {
	t       *testing.T
	kube    *kubefake.Clientset
	indexer cache.Indexer
	pd      *pdapi.FakeClient
	clock   *clocktesting.FakeClock
	rec     *record.FakeRecorder
	c       *Component
	tc      *v1alpha1.TidbCluster
}

var evictNow = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

func newEvictFixture(t *testing.T) *evictFixture {
	t.Helper()
	f := &evictFixture{t: t, kube: kubefake.NewClientset(), clock: clocktesting.NewFakeClock(evictNow), rec: record.NewFakeRecorder(50),
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	ctl := pdapi.NewFakeControl()
	f.pd = ctl.ClusterClient("ns", "basic")
	f.c = New(&component.Env{PD: ctl, Pods: corelisters.NewPodLister(f.indexer), Recorder: f.rec, Clock: f.clock,
		Writer: apply.NewApplier(f.kube, f.rec, apply.Caches{})})
	f.tc = observedCluster()
	f.tc.Status.TiKV.Synced = true
	f.tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{}
	for i := int32(0); i < 3; i++ {
		name := names.Pod("basic", names.TiKV, i)
		id := string(rune('1' + i))
		f.tc.Status.TiKV.Stores[id] = v1alpha1.TiKVStore{ID: id, PodName: name, State: pdapi.StoreStateNameUp, LeaderCount: 10}
		f.putPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(evictNow.Add(-time.Hour))}, Status: readyStatus(evictNow.Add(-time.Hour))})
	}
	return f
}

func readyStatus(since time.Time) corev1.PodStatus {
	return corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(since)}}}
}

// putPod stores pod in the cache and the API.
func (f *evictFixture) putPod(pod *corev1.Pod) {
	f.t.Helper()
	if err := f.indexer.Update(pod); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), "ns", pod.Name); err == nil {
		if err := f.kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), pod, "ns"); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	if err := f.kube.Tracker().Add(pod); err != nil {
		f.t.Fatal(err)
	}
}

func (f *evictFixture) pod(ord int32) *corev1.Pod {
	f.t.Helper()
	obj, ok, err := f.indexer.GetByKey("ns/" + names.Pod("basic", names.TiKV, ord))
	if err != nil || !ok {
		f.t.Fatalf("pod %d not in cache: %v", ord, err)
	}
	return obj.(*corev1.Pod).DeepCopy()
}

// annotate sets (value != "") or removes the pod's annotation key.
func (f *evictFixture) annotate(ord int32, key, value string) {
	p := f.pod(ord)
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	if value == "" {
		delete(p.Annotations, key)
	} else {
		p.Annotations[key] = value
	}
	f.putPod(p)
}

// sync runs MaintainPods over the cached pods and returns the revisit it
// asked for (nil: none).
func (f *evictFixture) sync() *flow.RequeueError {
	f.t.Helper()
	ctx, revisits := flow.WithRevisits(context.Background())
	pods := map[int32]*corev1.Pod{}
	for _, obj := range f.indexer.List() {
		p := obj.(*corev1.Pod)
		ord, _ := names.Ordinal(p.Name)
		pods[ord] = p
	}
	if err := f.c.MaintainPods(ctx, f.tc, pods); err != nil {
		f.t.Fatalf("MaintainPods: %v", err)
	}
	re, _ := flow.AsRequeue(revisits.Err())
	return re
}

func (f *evictFixture) evicting() []uint64 {
	f.t.Helper()
	ids, err := f.pd.GetEvictLeaderSchedulers(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return ids
}

func (f *evictFixture) wantEvent(reason string) {
	f.t.Helper()
	for {
		select {
		case e := <-f.rec.Events:
			if strings.Contains(e, " "+reason+" ") {
				return
			}
		default:
			f.t.Fatalf("no %s event", reason)
		}
	}
}

func (f *evictFixture) deletes() []k8stesting.DeleteActionImpl {
	var out []k8stesting.DeleteActionImpl
	for _, a := range f.kube.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestEvictLeaderNoneLastsAsLongAsTheAnnotation(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	f.annotate(1, label.AnnTiKVEvictLeader, label.EvictLeaderNone)

	if re := f.sync(); re != nil {
		t.Errorf("a begun none request asked for a revisit: %v", re)
	}
	rec := f.tc.Status.TiKV.EvictLeader["basic-tikv-1"]
	if rec == nil || rec.Value != label.EvictLeaderNone || !rec.PodCreateTime.Time.Equal(evictNow.Add(-time.Hour)) || rec.BeginTime.IsZero() {
		t.Fatalf("status.tikv.evictLeader = %+v, want a none record of the pod", f.tc.Status.TiKV.EvictLeader)
	}
	if got := f.evicting(); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("evicting %v, want store 2", got)
	}
	f.wantEvent(ReasonEvictLeaderBegin)

	f.pd.ResetCalls()
	f.sync()
	if w := f.pd.WriteCalls(); len(w) != 0 {
		t.Errorf("a second sync wrote to PD: %v", w)
	}
	if len(f.deletes()) != 0 {
		t.Error("a none request deleted a pod")
	}

	f.annotate(1, label.AnnTiKVEvictLeader, "")
	f.sync()
	if got := f.evicting(); len(got) != 0 {
		t.Errorf("still evicting %v after the annotation went", got)
	}
	if f.tc.Status.TiKV.EvictLeader != nil {
		t.Errorf("record kept: %+v", f.tc.Status.TiKV.EvictLeader)
	}
	f.wantEvent(ReasonEvictLeaderEnd)
}

func TestEvictLeaderWaitsUntilEveryStoreIsUp(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	s := f.tc.Status.TiKV.Stores["3"]
	s.State = "Down"
	f.tc.Status.TiKV.Stores["3"] = s
	f.annotate(0, label.AnnTiKVEvictLeader, label.EvictLeaderNone)

	re := f.sync()
	if re == nil || re.After != evictUnstableInterval || !strings.Contains(re.Reason, "basic-tikv-2=Down") {
		t.Fatalf("revisit %v, want one after %v naming the Down store", re, evictUnstableInterval)
	}
	if got := f.evicting(); len(got) != 0 {
		t.Errorf("evicting %v while a store is Down", got)
	}
	if f.tc.Status.TiKV.EvictLeader["basic-tikv-0"] == nil {
		t.Error("the request is not recorded while it waits")
	}
	s.State = pdapi.StoreStateNameUp
	f.tc.Status.TiKV.Stores["3"] = s
	f.sync()
	if got := f.evicting(); !slices.Equal(got, []uint64{1}) {
		t.Errorf("evicting %v once every store is Up, want store 1", got)
	}
}

func TestEvictLeaderDeletePodDeletesOnceLeadersLeftAndEndsWhenRecreatedPodIsReady(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	f.annotate(2, label.AnnTiKVEvictLeader, label.EvictLeaderDeletePod)

	if re := f.sync(); re == nil || re.After != evictPollInterval {
		t.Fatalf("revisit %v, want a poll after %v", re, evictPollInterval)
	}
	if got := f.evicting(); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("evicting %v, want store 3", got)
	}
	f.sync() // leaders still on the store
	if d := f.deletes(); len(d) != 0 {
		t.Fatalf("deleted %v while the store holds leaders", d)
	}

	s := f.tc.Status.TiKV.Stores["3"]
	s.LeaderCount = 0
	f.tc.Status.TiKV.Stores["3"] = s
	if re := f.sync(); re == nil {
		t.Error("no revisit after deleting the pod")
	}
	d := f.deletes()
	if len(d) != 1 || d[0].Name != "basic-tikv-2" || d[0].DeleteOptions.Preconditions == nil || *d[0].DeleteOptions.Preconditions.UID != "uid-basic-tikv-2" {
		t.Fatalf("deletes %+v, want basic-tikv-2 under its UID", d)
	}

	// The StatefulSet recreates the pod, without the annotation, not Ready yet.
	recreated := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-2", Namespace: "ns", UID: "uid-new",
		CreationTimestamp: metav1.NewTime(evictNow.Add(time.Minute))}}
	f.putPod(recreated)
	if re := f.sync(); re == nil || !strings.Contains(re.Reason, "recreated and Ready") {
		t.Fatalf("revisit %v, want a wait for the recreated pod", re)
	}
	if got := f.evicting(); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("eviction ended before the recreated pod is Ready: %v", got)
	}
	recreated = recreated.DeepCopy()
	recreated.Status = readyStatus(evictNow.Add(2 * time.Minute))
	f.putPod(recreated)
	if re := f.sync(); re != nil {
		t.Errorf("revisit %v after the request ended", re)
	}
	if got := f.evicting(); len(got) != 0 || f.tc.Status.TiKV.EvictLeader != nil {
		t.Errorf("evicting %v, records %+v: want both gone", got, f.tc.Status.TiKV.EvictLeader)
	}
	if len(f.deletes()) != 1 {
		t.Error("the recreated pod was deleted again")
	}
}

func TestEvictLeaderExpiredAnnotationIsRemovedAndEndsTheEviction(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	f.annotate(0, label.AnnTiKVEvictLeader, label.EvictLeaderNone)
	f.annotate(0, label.AnnTiKVEvictLeaderExpiration, evictNow.Add(time.Hour).Format(time.RFC3339))
	f.sync()
	if got := f.evicting(); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("evicting %v before the expiry, want store 1", got)
	}

	f.clock.SetTime(evictNow.Add(time.Hour))
	f.sync()
	live, err := f.kube.CoreV1().Pods("ns").Get(context.Background(), "basic-tikv-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{label.AnnTiKVEvictLeader, label.AnnTiKVEvictLeaderExpiration} {
		if _, ok := live.Annotations[k]; ok {
			t.Errorf("expired annotation %s kept on the pod", k)
		}
	}
	if got := f.evicting(); len(got) != 0 || f.tc.Status.TiKV.EvictLeader != nil {
		t.Errorf("evicting %v, records %+v after expiry: want both gone", got, f.tc.Status.TiKV.EvictLeader)
	}
}

func TestEvictLeaderWithoutRequestsAsksNothingOfPD(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	f.annotate(1, label.AnnTiKVEvictLeader, "sometimes") // unknown value: ignored
	if re := f.sync(); re != nil {
		t.Errorf("revisit %v without a request", re)
	}
	if calls := f.pd.Calls(); len(calls) != 0 {
		t.Errorf("PD calls without a request: %v", calls)
	}
	if len(f.kube.Actions()) != 0 || f.tc.Status.TiKV.EvictLeader != nil {
		t.Errorf("writes %v, records %+v without a request", f.kube.Actions(), f.tc.Status.TiKV.EvictLeader)
	}
}

// TestRolloutKeepsAnAnnotatedEviction: the end of a rollout sweeps the
// evict-leader schedulers it left, but not the one a pod's annotation asks
// for, and the restarted annotated pod's eviction is not ended.
func TestRolloutKeepsAnAnnotatedEviction(t *testing.T) {
	t.Parallel()
	f := newEvictFixture(t)
	f.annotate(1, label.AnnTiKVEvictLeader, label.EvictLeaderNone)
	f.sync()
	f.pd.SetEvictLeaderSchedulers(1, 2) // store 1: left by the rollout
	if err := f.c.PostUpgradePod(context.Background(), f.tc, 1); err != nil {
		t.Fatalf("PostUpgradePod of the annotated pod: %v", err)
	}
	if err := f.c.EndUpgrade(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	if got := f.evicting(); !slices.Equal(got, []uint64{2}) {
		t.Errorf("evicting %v after the rollout, want only the annotated store 2", got)
	}
}
