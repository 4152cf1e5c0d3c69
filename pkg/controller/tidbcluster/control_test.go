package tidbcluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

func newTC() *v1alpha1.TidbCluster {
	storage := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "uid-1", Generation: 3},
		Spec: v1alpha1.TidbClusterSpec{
			Version: "v8.5.0",
			PD:      &v1alpha1.PDSpec{Replicas: 3, ResourceRequirements: storage},
			TiKV:    &v1alpha1.TiKVSpec{Replicas: 3, ResourceRequirements: storage},
			TiDB:    &v1alpha1.TiDBSpec{Replicas: 2},
		},
	}
}

type stubComponent struct {
	name string
	err  error
	runs int
}

func (s *stubComponent) Name() string { return s.name }
func (s *stubComponent) Sync(context.Context, *v1alpha1.TidbCluster) error {
	s.runs++
	return s.err
}

// statefulStub is a stubComponent the control counts as the registered
// StatefulSet component of its name (conditions, metrics), as it counts a
// component.Manager[*v1alpha1.TidbCluster]; its Sync only records the run.
type statefulStub struct {
	stubComponent
	comp component.Component[*v1alpha1.TidbCluster]
}

func (s *statefulStub) Component() component.Component[*v1alpha1.TidbCluster] { return s.comp }

// newStatefulStub returns the stub of the registered component name.
func newStatefulStub(t *testing.T, name string) *statefulStub {
	t.Helper()
	for _, c := range registered() {
		if c.Name() == name {
			return &statefulStub{stubComponent: stubComponent{name: name}, comp: c}
		}
	}
	t.Fatalf("no registered component %q", name)
	return nil
}

// syncOnce runs the control on a copy of the stored object, as the shell
// does, and returns the stored object afterwards.
func syncOnce(t *testing.T, deps *controller.FakeDependencies, control ControlInterface, name string) (*v1alpha1.TidbCluster, error) {
	t.Helper()
	ctx := context.Background()
	clusters := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns")
	tc, err := clusters.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	syncErr := control.UpdateTidbCluster(ctx, tc.DeepCopy())
	after, err := clusters.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after sync: %v", err)
	}
	return after, syncErr
}

func writes(deps *controller.FakeDependencies) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range append(deps.FakePingcap.Actions(), deps.FakeKube.Actions()...) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	return out
}

func TestValidClusterWritesStatusOnceThenNothing(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	comp := newStatefulStub(t, "pd")
	control := NewDefaultControl([]Component{comp}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	deps.FakePingcap.ClearActions()

	tc, err := syncOnce(t, deps, control, "basic")
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	w := writes(deps)
	if len(w) != 1 || w[0].GetSubresource() != "status" {
		t.Fatalf("want one status write, got %v", w)
	}
	if tc.Status.ObservedGeneration != 3 {
		t.Errorf("observedGeneration = %d, want 3", tc.Status.ObservedGeneration)
	}
	ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != ReasonStatefulSetNotUpToDate {
		t.Errorf("Ready = %+v, want False/%s", ready, ReasonStatefulSetNotUpToDate)
	}
	if !meta.IsStatusConditionFalse(tc.Status.Conditions, v1alpha1.TidbClusterDegraded) {
		t.Errorf("Degraded should be False: %+v", tc.Status.Conditions)
	}
	if comp.runs != 1 {
		t.Errorf("component ran %d times, want 1", comp.runs)
	}
	if tc.Spec.PD.BaseImage != "" {
		t.Errorf("defaults leaked into the stored spec: baseImage %q", tc.Spec.PD.BaseImage)
	}

	deps.FakePingcap.ClearActions()
	if _, err := syncOnce(t, deps, control, "basic"); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if w := writes(deps); len(w) != 0 {
		t.Fatalf("a converged sync must not write, got %v", w)
	}
}

func TestInvalidSpecRecordsEventConditionAndIsNotRetried(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	tc := newTC()
	tc.Spec.PD.Requests = nil // PD needs a data volume size
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), tc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	comp := &stubComponent{name: "pd"}
	control := NewDefaultControl([]Component{comp}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)

	got, err := syncOnce(t, deps, control, "basic")
	if !flow.IsIgnore(err) {
		t.Fatalf("want an IgnoreError, got %v", err)
	}
	if comp.runs != 0 {
		t.Fatal("components must not run for an invalid spec")
	}
	degraded := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != ReasonInvalidSpec ||
		!strings.Contains(degraded.Message, "spec.pd.requests.storage") {
		t.Fatalf("Degraded = %+v", degraded)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		if !strings.HasPrefix(ev, "Warning FailedValidation") {
			t.Fatalf("event %q", ev)
		}
	default:
		t.Fatal("no FailedValidation event")
	}

	deps.FakePingcap.ClearActions()
	if _, err := syncOnce(t, deps, control, "basic"); !flow.IsIgnore(err) {
		t.Fatalf("second sync: %v", err)
	}
	if w := writes(deps); len(w) != 0 {
		t.Fatalf("an unchanged invalid spec must not write again, got %v", w)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		t.Fatalf("repeated event %q", ev)
	default:
	}
}

func TestComponentOutcomesShowInConditions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		err        error
		wantReason string
		degraded   metav1.ConditionStatus
	}{
		{"waiting", flow.Requeue("waiting for PD quorum"), ReasonReconciling, metav1.ConditionFalse},
		{"failing", errors.New("boom"), ReasonSyncError, metav1.ConditionTrue},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			deps := controller.NewFakeDependencies()
			if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			first, second := &stubComponent{name: "pd", err: tt.err}, &stubComponent{name: "tikv"}
			control := NewDefaultControl([]Component{first, second}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
			got, err := syncOnce(t, deps, control, "basic")
			if !errors.Is(err, tt.err) {
				t.Fatalf("want the component's error, got %v", err)
			}
			if second.runs != 0 {
				t.Fatal("components after a stopped one must not run")
			}
			progressing := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterProgressing)
			if progressing == nil || progressing.Reason != tt.wantReason || !strings.Contains(progressing.Message, tt.err.Error()) {
				t.Fatalf("Progressing = %+v", progressing)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded); c == nil || c.Status != tt.degraded {
				t.Fatalf("Degraded = %+v, want %s", c, tt.degraded)
			}
		})
	}
}

func TestReadyConditionOrder(t *testing.T) {
	t.Parallel()
	upToDate := func() *appsStatus { return &appsStatus{CurrentRevision: "r1", UpdateRevision: "r1"} }
	full := func() *v1alpha1.TidbCluster {
		tc := newTC()
		tc.Status.PD.StatefulSet, tc.Status.TiKV.StatefulSet, tc.Status.TiDB.StatefulSet = upToDate(), upToDate(), upToDate()
		tc.Status.PD.Members = map[string]v1alpha1.PDMember{"a": {Health: true}, "b": {Health: true}, "c": {Health: true}}
		tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{"1": {State: "Up"}, "2": {State: "Up"}, "3": {State: "Up"}}
		tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{"x": {Health: true}, "y": {Health: true}}
		return tc
	}
	cases := []struct {
		name   string
		mutate func(*v1alpha1.TidbCluster)
		want   string
	}{
		{"all up", func(*v1alpha1.TidbCluster) {}, ReasonReady},
		{"rolling", func(tc *v1alpha1.TidbCluster) { tc.Status.TiKV.StatefulSet.UpdateRevision = "r2" }, ReasonStatefulSetNotUpToDate},
		{"pd member down", func(tc *v1alpha1.TidbCluster) { tc.Status.PD.Members["a"] = v1alpha1.PDMember{} }, ReasonPDUnhealthy},
		{"store down", func(tc *v1alpha1.TidbCluster) { tc.Status.TiKV.Stores["1"] = v1alpha1.TiKVStore{State: "Down"} }, ReasonTiKVStoreNotUp},
		{"tidb down", func(tc *v1alpha1.TidbCluster) { delete(tc.Status.TiDB.Members, "x") }, ReasonTiDBUnhealthy},
		{"tikv data PVC deleting", func(tc *v1alpha1.TidbCluster) {
			tc.Status.TiKV.Conditions = []metav1.Condition{{Type: v1alpha1.ComponentDataVolumeDeleting, Status: metav1.ConditionTrue}}
		}, ReasonDataVolumeDeleting},
		{"tikv rollout due", func(tc *v1alpha1.TidbCluster) { tc.Status.TiKV.Phase = v1alpha1.UpgradePhase }, ReasonStatefulSetNotUpToDate},
		{"tikv scaling in", func(tc *v1alpha1.TidbCluster) { tc.Status.TiKV.Phase = v1alpha1.ScalePhase }, ReasonStatefulSetNotUpToDate},
		{"tiflash not up", func(tc *v1alpha1.TidbCluster) { tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1} }, ReasonStatefulSetNotUpToDate},
		{"pd checked before tikv", func(tc *v1alpha1.TidbCluster) {
			delete(tc.Status.PD.Members, "a")
			delete(tc.Status.TiKV.Stores, "1")
		}, ReasonPDUnhealthy},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc := full()
			tt.mutate(tc)
			if got := readyCondition(tc, registered()); got.Reason != tt.want {
				t.Fatalf("reason = %s (%s), want %s", got.Reason, got.Message, tt.want)
			}
		})
	}
}

type appsStatus = appsv1.StatefulSetStatus

// registered returns the StatefulSet components the registry builds, in
// sync order, as NewDefaultControl receives them.
func registered() []component.Component[*v1alpha1.TidbCluster] {
	return members.Components(members.New(&component.Env{}))
}

func TestStatusOnlyUpdatesAreNotResynced(t *testing.T) {
	t.Parallel()
	old := newTC()
	old.ResourceVersion = "1"
	statusOnlyTC := old.DeepCopy()
	statusOnlyTC.ResourceVersion = "2"
	statusOnlyTC.Status.ClusterID = "42"
	if !statusOnly(old, statusOnlyTC) {
		t.Error("a status-only change must be recognised")
	}
	specTC := old.DeepCopy()
	specTC.Generation++
	annTC := old.DeepCopy()
	annTC.Annotations = map[string]string{"tidb.pingcap.com/force-upgrade": "true"}
	for name, tc := range map[string]*v1alpha1.TidbCluster{"spec": specTC, "annotation": annTC} {
		if statusOnly(old, tc) {
			t.Errorf("a %s change must be synced", name)
		}
	}
}

// revisitingStub asks for a revisit and does not wait.
type revisitingStub struct{ stubComponent }

func (s *revisitingStub) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	flow.RevisitAfter(ctx, 10*time.Second, "pd: waiting for PVC pd-basic-pd-0 to expand")
	return s.stubComponent.Sync(ctx, tc)
}

// TestRevisitRunsLaterMembersAndKeepsProgressing: a member that asks for a
// revisit does not stop the members after it, and the sync ends as a wait
// naming it, so the cluster stays Progressing and comes back.
func TestRevisitRunsLaterMembersAndKeepsProgressing(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := &revisitingStub{stubComponent{name: "pd"}}, &stubComponent{name: "tikv"}
	control := NewDefaultControl([]Component{first, second}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, err := syncOnce(t, deps, control, "basic")
	re, waiting := flow.AsRequeue(err)
	if !waiting || re.After != 10*time.Second || !strings.Contains(re.Reason, "pd-basic-pd-0") {
		t.Fatalf("sync returned %v, want a wait of 10s naming the PVC", err)
	}
	if second.runs != 1 {
		t.Fatalf("the member after the revisiting one ran %d times, want 1", second.runs)
	}
	progressing := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterProgressing)
	if progressing == nil || progressing.Status != metav1.ConditionTrue || !strings.Contains(progressing.Message, "pd-basic-pd-0") {
		t.Fatalf("Progressing = %+v, want True naming the PVC", progressing)
	}
}
