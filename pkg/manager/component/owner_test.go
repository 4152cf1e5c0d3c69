package component_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// otherOwner is an owner kind the skeleton has never heard of: a
// ConfigMap stands in for one (it has metadata and is a runtime.Object).
type otherOwner = *corev1.ConfigMap

// otherSettings answers the skeleton's questions about an otherOwner.
type otherSettings struct {
	paused, suspended bool
	strategy          v1alpha1.ConfigUpdateStrategy
}

func (s otherSettings) Paused(otherOwner) bool                      { return s.paused }
func (s otherSettings) SchedulerName(otherOwner) string             { return "" }
func (s otherSettings) PVCReplace(otherOwner) bool                  { return false }
func (s otherSettings) Suspended(otherOwner, string) bool           { return s.suspended }
func (s otherSettings) SetsAttributesClass(otherOwner, string) bool { return false }
func (s otherSettings) ConfigUpdateStrategy(otherOwner, string) v1alpha1.ConfigUpdateStrategy {
	return s.strategy
}
func (s otherSettings) ValidateLive(otherOwner, validation.Live) field.ErrorList { return nil }
func (s otherSettings) MinReadySeconds(otherOwner, string) time.Duration         { return 0 }
func (s otherSettings) ForceIfOldDown(otherOwner) bool                           { return false }
func (s otherSettings) Labels(o otherOwner, component string) map[string]string {
	return map[string]string{label.InstanceLabelKey: o.Name, label.ComponentLabelKey: component}
}

// otherComponent is a one-pod component of an otherOwner that records
// which owner it observed.
type otherComponent struct {
	status   *v1alpha1.ComponentStatus
	observed *[]string
}

var (
	_ component.Component[otherOwner] = otherComponent{}
	_ component.Observer[otherOwner]  = otherComponent{}
)

func (c otherComponent) Name() string                                { return "worker" }
func (c otherComponent) Enabled(otherOwner) bool                     { return true }
func (c otherComponent) Replicas(otherOwner) int32                   { return 2 }
func (c otherComponent) Status(otherOwner) *v1alpha1.ComponentStatus { return c.status }
func (c otherComponent) Traits() component.Traits                    { return component.Traits{} }
func (c otherComponent) ConfigData(otherOwner) (map[string]string, error) {
	return map[string]string{"a": "b"}, nil
}
func (c otherComponent) Services(o otherOwner) []*corev1.Service { return nil }
func (c otherComponent) Observe(_ context.Context, o otherOwner, _ *appsv1.StatefulSet) error {
	*c.observed = append(*c.observed, o.Name)
	return nil
}

func (c otherComponent) StatefulSet(o otherOwner, configMap string) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-worker", Namespace: o.Namespace}}
	sts.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}}
	return sts, nil
}

func newOtherManager(t *testing.T, s otherSettings) (*component.Manager[otherOwner], otherComponent, *controller.FakeDependencies) {
	t.Helper()
	deps := controller.NewFakeDependencies()
	comp := otherComponent{status: &v1alpha1.ComponentStatus{}, observed: new([]string)}
	return component.NewOwnedManager[otherOwner](comp, s, controller.NewEnv(deps.Dependencies)), comp, deps
}

func otherOwnerObject() otherOwner {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dm", Namespace: "ns", UID: "dm-uid"}}
}

// TestSkeletonObservesAPausedOwnerOfAnotherKind: the skeleton runs for an
// owner that is not a TidbCluster: it observes through the component's
// Observer, reads paused through the owner's settings and writes nothing.
func TestSkeletonObservesAPausedOwnerOfAnotherKind(t *testing.T) {
	t.Parallel()
	m, comp, deps := newOtherManager(t, otherSettings{paused: true})
	if err := m.Sync(context.Background(), otherOwnerObject()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := strings.Join(*comp.observed, ","); got != "dm" {
		t.Errorf("observed owners %q, want dm", got)
	}
	if comp.status.Phase != v1alpha1.NormalPhase {
		t.Errorf("phase %q, want Normal", comp.status.Phase)
	}
	if n := len(deps.FakeKube.Actions()); n != 0 {
		t.Errorf("%d API calls for a paused owner, want 0: %v", n, deps.FakeKube.Actions())
	}
}

// TestSkeletonSuspendsAnOwnerOfAnotherKind: the owner's settings, not a
// TidbCluster's spec, decide suspension.
func TestSkeletonSuspendsAnOwnerOfAnotherKind(t *testing.T) {
	t.Parallel()
	m, comp, _ := newOtherManager(t, otherSettings{suspended: true})
	if err := m.Sync(context.Background(), otherOwnerObject()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if comp.status.Phase != v1alpha1.SuspendPhase {
		t.Errorf("phase %q, want Suspend", comp.status.Phase)
	}
}

// TestDesiredForAnOwnerOfAnotherKind: render's objects for another owner
// kind follow its settings' configUpdateStrategy and its metadata.
func TestDesiredForAnOwnerOfAnotherKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		strategy v1alpha1.ConfigUpdateStrategy
		hashed   bool
	}{{v1alpha1.ConfigUpdateStrategyInPlace, false}, {v1alpha1.ConfigUpdateStrategyRollingUpdate, true}} {
		m, _, _ := newOtherManager(t, otherSettings{strategy: c.strategy})
		objs, err := m.Desired(otherOwnerObject())
		if err != nil {
			t.Fatalf("%s: desired: %v", c.strategy, err)
		}
		if len(objs) != 2 {
			t.Fatalf("%s: %d objects, want the ConfigMap and the StatefulSet", c.strategy, len(objs))
		}
		cm, sts := objs[0].(*corev1.ConfigMap), objs[1].(*appsv1.StatefulSet)
		if hashed := cm.Name != "dm-worker"; hashed != c.hashed || !strings.HasPrefix(cm.Name, "dm-worker") {
			t.Errorf("%s: ConfigMap %s, hashed name %v", c.strategy, cm.Name, c.hashed)
		}
		if cm.Labels[label.InstanceLabelKey] != "dm" || cm.Namespace != "ns" {
			t.Errorf("%s: ConfigMap labels %v in %q, want instance dm in ns", c.strategy, cm.Labels, cm.Namespace)
		}
		if sts.Spec.Template.Spec.Volumes[0].ConfigMap.Name != cm.Name {
			t.Errorf("%s: StatefulSet mounts %s, want %s", c.strategy, sts.Spec.Template.Spec.Volumes[0].ConfigMap.Name, cm.Name)
		}
		if r, p := sts.Spec.Replicas, sts.Spec.UpdateStrategy.RollingUpdate; r == nil || *r != 2 || p == nil || *p.Partition != 2 {
			t.Errorf("%s: replicas %v and partition %v, want 2 and 2", c.strategy, r, p)
		}
	}
}
