package tidbinitializer

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

const testImage = "kubetidb/tidb-operator:v1.0.0"

// fixture is a Control over fake clientsets and seeded indexers.
type fixture struct {
	t       *testing.T
	deps    *controller.FakeDependencies
	control *Control
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	jobs := deps.KubeInformerFactory.Batch().V1().Jobs()
	c := NewControl(deps.TiDBClusterLister, jobs.Lister(), deps.Clientset, deps.KubeClient, deps.Recorder, deps.Clock, testImage)
	return &fixture{t: t, deps: deps, control: c}
}

// newInitializer returns TidbInitializer "init" in ns for cluster "demo",
// with passwordSecret tidb-secret and inline SQL.
func newInitializer() *v1alpha1.TidbInitializer {
	return &v1alpha1.TidbInitializer{
		ObjectMeta: metav1.ObjectMeta{Name: "init", Namespace: "ns", UID: "ti-uid", Generation: 1},
		Spec: v1alpha1.TidbInitializerSpec{
			Cluster:        v1alpha1.TidbClusterRef{Name: "demo"},
			PasswordSecret: ptr.To("tidb-secret"),
			InitSql:        ptr.To("CREATE DATABASE app;"),
		},
	}
}

// newCluster returns TidbCluster "demo" in ns with a client Service on
// port 4000 and healthy (or not) TiDB members.
func newCluster(healthy bool) *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"},
		Spec:       v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Service: &v1alpha1.TiDBServiceSpec{}}},
	}
	tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{"demo-tidb-0": {Name: "demo-tidb-0", Health: healthy}}
	return tc
}

func (f *fixture) seedInitializer(ti *v1alpha1.TidbInitializer) {
	f.t.Helper()
	if err := f.deps.FakePingcap.Tracker().Add(ti.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) seedCluster(tc *v1alpha1.TidbCluster) {
	f.t.Helper()
	if err := f.deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer().GetIndexer().Add(tc); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) seedJob(job *batchv1.Job) {
	f.t.Helper()
	if err := f.deps.KubeInformerFactory.Batch().V1().Jobs().Informer().GetIndexer().Add(job); err != nil {
		f.t.Fatal(err)
	}
	if err := f.deps.FakeKube.Tracker().Add(job.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) seedSecret(name string) {
	f.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string][]byte{"root": []byte("x")}}
	if err := f.deps.FakeKube.Tracker().Add(s); err != nil {
		f.t.Fatal(err)
	}
}

// storedStatus reads ti's status back from the fake clientset.
func (f *fixture) storedStatus(ti *v1alpha1.TidbInitializer) v1alpha1.TidbInitializerStatus {
	f.t.Helper()
	got, err := f.deps.FakePingcap.PingcapV1alpha1().TidbInitializers(ti.Namespace).Get(f.t.Context(), ti.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return got.Status
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.deps.FakeRecorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// writes lists the verbs and resources of the create/update/patch/delete
// actions both fake clientsets recorded.
func (f *fixture) writes() []string {
	var out []string
	for _, a := range append(f.deps.FakeKube.Actions(), f.deps.FakePingcap.Actions()...) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			r := a.GetResource().Resource
			if s := a.GetSubresource(); s != "" {
				r += "/" + s
			}
			out = append(out, a.GetVerb()+" "+r)
		}
	}
	return out
}

func hasEvent(events []string, substr string) bool {
	for _, e := range events {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}
