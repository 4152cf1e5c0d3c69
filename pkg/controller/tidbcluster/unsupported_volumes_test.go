package tidbcluster

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

// TestUnappliedVolumeAttributesClassesAreNamed: a volumeAttributesClassName
// set after TiKV's StatefulSet was created reaches no PVC (claim templates
// are immutable), so the Unsupported condition and a Warning name it; the
// class the StatefulSet was created with is acted on and not named, and
// neither is discovery's service account token unless it is turned off.
func TestUnappliedVolumeAttributesClassesAreNamed(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	var comps []Component
	for _, m := range members.New(controller.NewEnv(deps.Dependencies)) {
		if m.Name() == "tikv" {
			comps = append(comps, m)
		}
	}
	if len(comps) != 1 {
		t.Fatalf("no tikv member among the registered ones")
	}
	c := NewDefaultControl(comps, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil).(*defaultControl)

	fast := "fast"
	created := newTC()
	created.Spec.TiKV.StorageVolumes = []v1alpha1.StorageVolume{{Name: "raft", StorageSize: "1Gi", VolumeAttributesClassName: &fast}}
	defaulting.SetTidbClusterDefaults(created)
	live, err := members.Components(comps)[0].StatefulSet(created, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Add(live); err != nil {
		t.Fatal(err)
	}

	unsupported := func(tc *v1alpha1.TidbCluster) *metav1.Condition {
		c.setUnsupported(tc, &v1alpha1.TidbClusterStatus{}, unsupportedFields(tc, c.built))
		return meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported)
	}
	if cond := unsupported(created.DeepCopy()); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("the classes the StatefulSet was created with are acted on: %+v", cond)
	}
	// The storage volume inherits the component's class: still "fast", not named.
	inherited := created.DeepCopy()
	inherited.Spec.TiKV.VolumeAttributesClassName = &fast
	inherited.Spec.TiKV.StorageVolumes[0].VolumeAttributesClassName = nil
	if cond := unsupported(inherited); cond == nil || !strings.HasSuffix(cond.Message, ": spec.tikv.volumeAttributesClassName") {
		t.Errorf("only the data volume's class changed: %+v", cond)
	}
	select {
	case <-deps.FakeRecorder.Events:
	default:
		t.Error("no Unsupported event for the changed data volume class")
	}

	changed := created.DeepCopy()
	changed.Spec.TiKV.VolumeAttributesClassName = &fast
	slow := "slow"
	changed.Spec.TiKV.StorageVolumes[0].VolumeAttributesClassName = &slow
	changed.Spec.PD.Mode = "ms"
	want := "spec.pd.mode (PD runs as one service without spec.pdms, as in the TiDB Operator), spec.tikv.storageVolumes[raft].volumeAttributesClassName, spec.tikv.volumeAttributesClassName"
	if cond := unsupported(changed); cond == nil || cond.Status != metav1.ConditionTrue || !strings.HasSuffix(cond.Message, want) {
		t.Fatalf("Unsupported = %+v, want True naming %s", cond, want)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		if !strings.HasPrefix(ev, "Warning Unsupported") || !strings.Contains(ev, want) {
			t.Errorf("event %q", ev)
		}
	default:
		t.Error("no Unsupported event")
	}
}

// TestAttributesClassesWithoutStatefulSet: before the StatefulSet exists the
// classes go into its claim templates, so nothing is named.
func TestAttributesClassesWithoutStatefulSet(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	var m *component.Manager[*v1alpha1.TidbCluster]
	for _, comp := range registered() {
		if comp.Name() == "pd" {
			m = component.NewManager(comp, controller.NewEnv(deps.Dependencies))
		}
	}
	tc := newTC()
	fast := "fast"
	tc.Spec.PD.VolumeAttributesClassName = &fast
	if got := m.UnappliedVolumeAttributesClasses(tc); got != nil {
		t.Errorf("got %v, want nothing before the StatefulSet exists", got)
	}
}
