package pump

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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

var t0 = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

// hookFixture is a TidbCluster "ns/basic" with Pump pods basic-pump-0..n-1, Ready, their pump
// containers running since an hour before t0, each running an online pump in a fake Pump cluster;
// pods live in a fake API server and a pod cache the test refreshes after writes (refresh).
type hookFixture struct {
	t       *testing.T
	kube    *kubefake.Clientset
	indexer cache.Indexer
	pumps   *pumpapi.FakeClient
	clock   *clocktesting.FakeClock
	rec     *record.FakeRecorder
	tc      *v1alpha1.TidbCluster
	comp    *Component
}

func newHookFixture(t *testing.T, n int32) *hookFixture {
	t.Helper()
	f := &hookFixture{t: t, kube: kubefake.NewClientset(), pumps: pumpapi.NewFakeClient(),
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		clock:   clocktesting.NewFakeClock(t0), rec: record.NewFakeRecorder(100)}
	f.tc = &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	f.tc.Spec.Pump = &v1alpha1.PumpSpec{Replicas: n - 1}
	f.tc.Status.Pump.StatefulSet = &appsv1.StatefulSetStatus{Replicas: n, ReadyReplicas: n}
	for o := range n {
		pod := names.Pod("basic", names.Pump, o)
		f.addPod(pod, t0.Add(-time.Hour))
		f.pumps.SetPump("ns", "basic", pod, pumpapi.FakePump{NodeID: pod + ":8250", Host: AdvertiseAddr(f.tc, pod), State: pumpapi.StateOnline})
	}
	f.comp = NewWithClient(&component.Env{Pods: corelisters.NewPodLister(f.indexer), Recorder: f.rec, Clock: f.clock,
		Writer: apply.NewApplier(f.kube, f.rec, apply.Caches{})}, f.pumps)
	return f
}

// addPod adds a Ready pod created, and whose pump container started, at started.
func (f *hookFixture) addPod(name string, started time.Time) {
	f.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(started)},
		Status: corev1.PodStatus{
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: containerPump,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}},
		}}
	created, err := f.kube.CoreV1().Pods("ns").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.indexer.Update(created); err != nil {
		f.t.Fatal(err)
	}
}

// refresh copies a pod from the fake API into the cache, as the informer would.
func (f *hookFixture) refresh(name string) *corev1.Pod {
	f.t.Helper()
	pod, err := f.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.indexer.Update(pod); err != nil {
		f.t.Fatal(err)
	}
	return pod
}

// events drains the recorded events.
func (f *hookFixture) events() []string {
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

func waiting(err error) bool {
	_, ok := flow.AsRequeue(err)
	return ok
}

func waitReason(t *testing.T, err error, want string) {
	t.Helper()
	re, ok := flow.AsRequeue(err)
	if !ok || !strings.Contains(re.Reason, want) {
		t.Fatalf("got %v, want a wait saying %q", err, want)
	}
}

// TestScaleInTakesThePumpOfflineOnce: the pump is asked once (one accepted request, one event, the
// time on the pod) and the pod is held while it closes; it goes once the registry says offline.
func TestScaleInTakesThePumpOfflineOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newHookFixture(t, 3)
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 2), "is going offline")
	offline := f.pumps.CallsOf(pumpapi.MethodOffline)
	if len(offline) != 1 || offline[0].PodName != "basic-pump-2" || offline[0].NodeID != "basic-pump-2:8250" {
		t.Fatalf("offline requests %+v, want one to basic-pump-2", offline)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal PumpOfflineRequested pump offline requested") {
		t.Errorf("events %q, want one PumpOfflineRequested", ev)
	}
	pod := f.refresh("basic-pump-2")
	requested := pod.Annotations[label.AnnPumpOfflineRequestedAt]
	if requested != t0.Format(time.RFC3339) {
		t.Errorf("request recorded as %q, want %s", requested, t0.Format(time.RFC3339))
	}

	// The pump closes; the registry (read from another pump) still says online, and the pump refuses
	// a second request: the scale-in waits without a new request or event.
	f.clock.Step(time.Minute)
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 2), "going offline (closing)")
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events while closing %q, want none", ev)
	}
	if got := f.refresh("basic-pump-2").Annotations[label.AnnPumpOfflineRequestedAt]; got != requested {
		t.Errorf("request time rewritten to %q", got)
	}
	for _, c := range f.pumps.CallsOf(pumpapi.MethodGetStatus) {
		if c.PodName == "basic-pump-2" {
			t.Errorf("the registry was asked of the pump being removed while others serve it: %+v", c)
		}
	}

	f.pumps.FinishOffline("ns", "basic", "basic-pump-2")
	f.tc.Status.Pump.Members = []*v1alpha1.PumpNodeStatus{{NodeID: "basic-pump-2:8250", Host: "basic-pump-2.basic-pump:8250", State: "online"}}
	if err := f.comp.PreScaleIn(ctx, f.tc, 2); err != nil {
		t.Fatalf("offline pump: %v, want the pod released", err)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal PumpOffline pump on basic-pump-2 is offline") {
		t.Errorf("events %q, want one PumpOffline", ev)
	}
	if f.tc.Status.Pump.Members[0].State != pumpapi.StateOffline {
		t.Errorf("member %+v, want recorded offline", f.tc.Status.Pump.Members[0])
	}
	accepted := 0
	for range f.pumps.CallsOf(pumpapi.MethodOffline) {
		accepted++
	}
	if p, _ := f.pumps.Pump("ns", "basic", "basic-pump-2"); !p.Stopped || accepted != 2 {
		t.Errorf("pump %+v after %d requests (one accepted, one refused)", p, accepted)
	}
}

// TestScaleInWaitsForTheStatefulSet: while the StatefulSet runs fewer pods than it asks for, no pump
// is asked anything.
func TestScaleInWaitsForTheStatefulSet(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t, 3)
	f.tc.Status.Pump.StatefulSet.Replicas = 2
	waitReason(t, f.comp.PreScaleIn(context.Background(), f.tc, 2), "run its 3 pods (2 now)")
	f.tc.Status.Pump.StatefulSet = nil
	waitReason(t, f.comp.PreScaleIn(context.Background(), f.tc, 2), "(0 now)")
	if calls := f.pumps.Calls(); len(calls) != 0 {
		t.Errorf("pumps asked %+v, want nothing", calls)
	}
}

// TestScaleInOtherStates: pausing, paused and closing records wait without a request; a refusal for
// another reason waits quoting Pump; a pump that does not answer the request waits.
func TestScaleInOtherStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, state := range []string{pumpapi.StatePausing, pumpapi.StatePaused, pumpapi.StateClosing} {
		f := newHookFixture(t, 2)
		f.pumps.SetState("ns", "basic", "basic-pump-1", state)
		waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 1), "is "+state+"; waiting until the binlog registry says offline")
		if n := len(f.pumps.CallsOf(pumpapi.MethodOffline)); n != 0 {
			t.Errorf("%s: %d offline requests, want none", state, n)
		}
	}
	f := newHookFixture(t, 2)
	f.pumps.SetPump("ns", "basic", "basic-pump-1", pumpapi.FakePump{NodeID: "custom-id", Host: "basic-pump-1.basic-pump:8250", State: pumpapi.StateOnline})
	f.pumps.SetPump("ns", "basic", "basic-pump-0", pumpapi.FakePump{NodeID: "basic-pump-0:8250", Host: "basic-pump-0.basic-pump:8250", State: pumpapi.StateOnline})
	f.pumps.SetError("ns", "basic-pump-1", errors.New("no TLS material"))
	if err := f.comp.PreScaleIn(ctx, f.tc, 1); err == nil || waiting(err) || !strings.Contains(err.Error(), "no TLS material") {
		t.Errorf("operator failure: %v, want an error", err)
	}
	f.pumps.SetError("ns", "basic-pump-1", nil)
	f.pumps.SetStopped("ns", "basic", "basic-pump-1", true)
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 1), "did not answer the offline request")
}

// TestScaleInOfThePumpNotInTheRegistry: a pod whose pump never registered goes once it has not been
// Ready for 5 resync periods, or when it does not exist; a Ready one, or a young one, is waited for.
func TestScaleInOfThePumpNotInTheRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newHookFixture(t, 2)
	f.pumps.SetPump("ns", "basic", "basic-pump-1", pumpapi.FakePump{NodeID: "x:8250", Host: "other-pump-1.other-pump:8250", State: pumpapi.StateOnline})
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 1), "not in the binlog registry yet")
	pod := f.refresh("basic-pump-1")
	pod.CreationTimestamp = metav1.NewTime(t0.Add(-time.Minute))
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if err := f.indexer.Update(pod); err != nil {
		t.Fatal(err)
	}
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 1), "not in the binlog registry yet")
	f.clock.Step(2 * time.Minute)
	if err := f.comp.PreScaleIn(ctx, f.tc, 1); err != nil {
		t.Errorf("pod not Ready for 3m: %v, want it released", err)
	}
	if err := f.indexer.Delete(pod); err != nil {
		t.Fatal(err)
	}
	if err := f.comp.PreScaleIn(ctx, f.tc, 1); err != nil {
		t.Errorf("pod gone: %v, want it released", err)
	}
	if n := len(f.pumps.CallsOf(pumpapi.MethodOffline)); n != 0 {
		t.Errorf("%d offline requests, want none", n)
	}
}

// TestScaleInOfTheLastPump: with no other pump to serve the registry, the pod goes once the pump that
// accepted the request has exited while its container kept running — not while it is closing, not
// when the container restarted since, and not without a recorded request.
func TestScaleInOfTheLastPump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newHookFixture(t, 1)
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 0), "is going offline")
	f.refresh("basic-pump-0")
	f.clock.Step(time.Minute)
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 0), "no pump serves the binlog registry")
	f.pumps.FinishOffline("ns", "basic", "basic-pump-0")
	if err := f.comp.PreScaleIn(ctx, f.tc, 0); err != nil {
		t.Fatalf("exited pump: %v, want the pod released", err)
	}

	pod := f.refresh("basic-pump-0")
	pod.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(t0.Add(30 * time.Second))
	if err := f.indexer.Update(pod); err != nil {
		t.Fatal(err)
	}
	waitReason(t, f.comp.PreScaleIn(ctx, f.tc, 0), "no pump serves the binlog registry")

	unrecorded := newHookFixture(t, 1)
	unrecorded.pumps.FinishOffline("ns", "basic", "basic-pump-0")
	waitReason(t, unrecorded.comp.PreScaleIn(ctx, unrecorded.tc, 0), "no pump serves the binlog registry")
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	if ok, _ := Available(tc); !ok {
		t.Error("a cluster without Pump must not wait for one")
	}
	tc.Spec.Pump = &v1alpha1.PumpSpec{Replicas: 1}
	if ok, reason := Available(tc); ok || !strings.Contains(reason, "0 pump(s) in the binlog registry, none online") {
		t.Errorf("no members: %v %q", ok, reason)
	}
	tc.Status.Pump.Members = []*v1alpha1.PumpNodeStatus{nil, {NodeID: "a", State: pumpapi.StateOffline}, {NodeID: "b", State: pumpapi.StatePaused}}
	if ok, _ := Available(tc); ok {
		t.Error("offline and paused pumps are not available")
	}
	tc.Status.Pump.Members = append(tc.Status.Pump.Members, &v1alpha1.PumpNodeStatus{NodeID: "c", State: pumpapi.StateOnline})
	if ok, reason := Available(tc); !ok {
		t.Errorf("an online pump: %q", reason)
	}
}
