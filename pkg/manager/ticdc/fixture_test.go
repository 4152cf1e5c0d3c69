package ticdc

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

var t0 = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

// fixture is a TidbCluster "ns/basic" with TiCDC pods basic-ticdc-0..n-1, Ready, each running a capture
// "capture-<i>" of v8.5.0 in a fake TiCDC; pods live in a fake API server and a pod cache the test
// refreshes after writes (refresh), as the informer would.
type fixture struct {
	t       *testing.T
	kube    *kubefake.Clientset
	indexer cache.Indexer
	cdc     *ticdcapi.FakeClient
	clock   *clocktesting.FakeClock
	rec     *record.FakeRecorder
	tc      *v1alpha1.TidbCluster
	comp    *Component
}

// newFixture starts a fixture of len(tables) captures, tables[i] on capture i, the owner being ordinal
// owner (-1: none).
func newFixture(t *testing.T, tables []int, owner int) *fixture {
	t.Helper()
	f := &fixture{t: t, kube: kubefake.NewClientset(), cdc: ticdcapi.NewFakeClient(),
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		clock:   clocktesting.NewFakeClock(t0), rec: record.NewFakeRecorder(100)}
	f.tc = &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	f.tc.Spec.Version = "v8.5.0"
	f.tc.Spec.TiCDC = &v1alpha1.TiCDCSpec{Replicas: int32(len(tables)), BaseImage: "pingcap/ticdc", //nolint:gosec // small
		GracefulShutdownTimeout: &metav1.Duration{Duration: 10 * time.Minute}}
	for i, n := range tables {
		pod := names.Pod("basic", names.TiCDC, int32(i)) //nolint:gosec // small
		f.addPod(pod)
		f.cdc.SetCapture("ns", "basic", pod, ticdcapi.FakeCapture{ID: "capture-" + strconv.Itoa(i), Version: "v8.5.0", Owner: i == owner, Tables: n})
	}
	f.comp = f.newComponent()
	return f
}

// newComponent returns a TiCDC component over the fixture, as a (re)started operator builds it.
func (f *fixture) newComponent() *Component {
	return NewWithClient(&component.Env{Pods: corelisters.NewPodLister(f.indexer), Recorder: f.rec, Clock: f.clock,
		Writer: apply.NewApplier(f.kube, f.rec, apply.Caches{})}, f.cdc)
}

func (f *fixture) addPod(name string) {
	f.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: component.Labels(f.tc, names.TiCDC)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	created, err := f.kube.CoreV1().Pods("ns").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.indexer.Add(created); err != nil {
		f.t.Fatal(err)
	}
}

// annotate sets the begin-time annotation of a pod directly (an earlier operator's wait).
func (f *fixture) annotate(pod string, begin time.Time) {
	f.t.Helper()
	p, err := f.kube.CoreV1().Pods("ns").Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	p.Annotations = map[string]string{label.AnnTiCDCGracefulShutdownBeginTime: begin.Format(time.RFC3339)}
	if _, err := f.kube.CoreV1().Pods("ns").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.refresh()
}

// refresh copies the pods from the API server into the cache.
func (f *fixture) refresh() {
	f.t.Helper()
	list, err := f.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if err := f.indexer.Update(&list.Items[i]); err != nil {
			f.t.Fatal(err)
		}
	}
}

// begin returns the pod's begin-time annotation in the API server ("" when absent).
func (f *fixture) begin(pod string) string {
	f.t.Helper()
	p, err := f.kube.CoreV1().Pods("ns").Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Annotations[label.AnnTiCDCGracefulShutdownBeginTime]
}

// patches counts the pod patches sent to the API server.
func (f *fixture) patches() int {
	n := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

// events drains the recorded events.
func (f *fixture) events() []string {
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
