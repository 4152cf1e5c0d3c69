package component

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// Owner is what the skeleton needs of the object that owns a component's
// Services, ConfigMaps and StatefulSets (a TidbCluster; a DMCluster next):
// its metadata (name, namespace, UID, generation, resource version, labels
// and annotations) and its runtime.Object, for owner references and events.
// Everything the skeleton reads from the owner's spec goes through the
// OwnerSettings given to the Manager instead.
type Owner interface {
	apply.Owner
}

// OwnerSettings reads, for the skeleton, the cluster-level fields of an
// owner of kind O: paused, schedulerName, enablePVCReplace, a component's
// suspendAction and configUpdateStrategy (its spec, else the cluster's),
// whether its spec names a VolumeAttributesClass, the update rules of a
// live component, the labels of its objects, and what its annotations ask
// of a rollout (min-ready-seconds, force-upgrade). It is a value given to the Manager rather than methods
// of the API type because these answers come from the defaulting accessors,
// the component descriptors and validation, which all import the API
// package: as methods of *v1alpha1.TidbCluster they would be an import
// cycle, and would put operator logic into the API types. The component
// name arguments are a Component's Name. No method errors.
type OwnerSettings[O Owner] interface {
	// Paused reports spec.paused: the skeleton only observes.
	Paused(o O) bool
	// SchedulerName is spec.schedulerName, named when a pod is unscheduled.
	SchedulerName(o O) string
	// PVCReplace reports spec.enablePVCReplace (volumereplacepvc.go).
	PVCReplace(o O) bool
	// Suspended reports whether o asks to suspend the component.
	Suspended(o O, component string) bool
	// ConfigUpdateStrategy is the component's configUpdateStrategy.
	ConfigUpdateStrategy(o O, component string) v1alpha1.ConfigUpdateStrategy
	// SetsAttributesClass reports whether the component's spec names a
	// VolumeAttributesClass anywhere.
	SetsAttributesClass(o O, component string) bool
	// ValidateLive returns the update rules o breaks against what the
	// component's live objects were built from.
	ValidateLive(o O, live validation.Live) field.ErrorList
	// Labels are the labels of the component's objects (its pods'
	// selector).
	Labels(o O, component string) map[string]string
	// MinReadySeconds is how long a restarted pod of the component must
	// be Ready before a rollout counts it available.
	MinReadySeconds(o O, component string) time.Duration
	// ForceIfOldDown reports whether o asks a rollout to give up its pace
	// when an old pod is down (for components without a ForceUpgrader).
	ForceIfOldDown(o O) bool
}

// TidbClusterSettings are the OwnerSettings of a TidbCluster. The zero
// value is ready.
type TidbClusterSettings struct{}

var _ OwnerSettings[*v1alpha1.TidbCluster] = TidbClusterSettings{}

// Paused reports tc.spec.paused.
func (TidbClusterSettings) Paused(tc *v1alpha1.TidbCluster) bool { return tc.Spec.Paused }

// SchedulerName is tc.spec.schedulerName.
func (TidbClusterSettings) SchedulerName(tc *v1alpha1.TidbCluster) string {
	return tc.Spec.SchedulerName
}

// PVCReplace reports tc.spec.enablePVCReplace.
func (TidbClusterSettings) PVCReplace(tc *v1alpha1.TidbCluster) bool { return PVCReplaceEnabled(tc) }

// Suspended reports spec.<component>.suspendAction, else spec.suspendAction.
func (TidbClusterSettings) Suspended(tc *v1alpha1.TidbCluster, component string) bool {
	return Suspended(tc, component)
}

// ConfigUpdateStrategy is the component's defaulted configUpdateStrategy.
func (TidbClusterSettings) ConfigUpdateStrategy(tc *v1alpha1.TidbCluster, component string) v1alpha1.ConfigUpdateStrategy {
	return componentConfigStrategy(tc, component)
}

// SetsAttributesClass reads the component's descriptor's fields.
func (TidbClusterSettings) SetsAttributesClass(tc *v1alpha1.TidbCluster, component string) bool {
	return setsAttributesClass(tc, component)
}

// ValidateLive is validation.ValidateLive.
func (TidbClusterSettings) ValidateLive(tc *v1alpha1.TidbCluster, live validation.Live) field.ErrorList {
	return validation.ValidateLive(tc, live)
}

// Labels are the component's labels (Labels).
func (TidbClusterSettings) Labels(tc *v1alpha1.TidbCluster, component string) map[string]string {
	return Labels(tc, component)
}

// MinReadySeconds is the component's min-ready-seconds annotation (MinReadySeconds).
func (TidbClusterSettings) MinReadySeconds(tc *v1alpha1.TidbCluster, component string) time.Duration {
	return MinReadySeconds(tc, component)
}

// ForceIfOldDown reports force-upgrade without an upgrade gate asked.
func (TidbClusterSettings) ForceIfOldDown(tc *v1alpha1.TidbCluster) bool {
	return forceIfOldDownAsked(tc)
}
