// Package component is the one sync skeleton every StatefulSet-backed
// component (PD, TiFlash, TiKV, TiDB …) runs: an ordered list of small
// named steps — observe status → pause guard → diagnose → dependency gate →
// Services → ConfigMap → build StatefulSet → create (then wait) → failover →
// scale and upgrade → apply. A component supplies the small Component
// interface (pure builders and its status) and whichever optional hooks it
// needs (hooks.go); the skeleton type-asserts them and owns every write.
// The skeleton is generic over the owner kind O (owner.go): it reads an
// owner's metadata and, through OwnerSettings[O], its cluster-level fields.
package component

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Component is what every member manager supplies to the skeleton for an
// owner of kind O (tc below). Builders are pure: they read only tc (already defaulted and validated) and their
// arguments, never a lister, client or clock. Everything else a component
// may do is an optional hook (see hooks.go).
type Component[O Owner] interface {
	// Name is the component's label value and name suffix, e.g. "pd".
	Name() string
	// Enabled reports whether tc has this component (spec.<component> set).
	Enabled(tc O) bool
	// Replicas is the desired number of pods.
	Replicas(tc O) int32
	// Status returns the component's status inside tc.Status, for the
	// skeleton to fill StatefulSet status, image and phase.
	Status(tc O) *v1alpha1.ComponentStatus
	// Services returns the component's Services.
	Services(tc O) []*corev1.Service
	// ConfigData returns the ConfigMap data (config files and start script),
	// or nil when the component has no ConfigMap.
	ConfigData(tc O) (map[string]string, error)
	// StatefulSet builds the desired StatefulSet mounting the ConfigMap
	// named configMap ("" when there is none). Replicas and partition are
	// set by the skeleton.
	StatefulSet(tc O, configMap string) (*appsv1.StatefulSet, error)
	// Traits are the component's fixed facts the skeleton asks for.
	Traits() Traits
}

// Traits are the facts about a component that no sync computes: the
// skeleton reads them where it would otherwise need a hook returning a
// constant. The zero value is the common case.
type Traits struct {
	// UpgradeBlockers name the components whose Upgrade or Scale phase (or
	// a member's volume replacement) holds back this one's rollout: the
	// TiDB Operator's table, spec §6.3 (TiKV waits for PD and TiFlash; TiDB
	// for PD, TiKV, TiFlash and Pump).
	UpgradeBlockers []string
	// FreeScaleIn components' pods may go without preparation (TiDB,
	// TiProxy): nothing outside the pod knows them. Without it and without
	// a ScaleInPreparer the skeleton refuses to scale in.
	FreeScaleIn bool
	// ReloadsConfig components reload their config file by themselves
	// (TiProxy): their ConfigMap is always updated in place, whatever
	// configUpdateStrategy says, and a config change restarts no pod.
	ReloadsConfig bool
	// NoPartition components (Pump) roll their pods with the StatefulSet
	// controller's plain RollingUpdate, as the TiDB Operator does for them:
	// the skeleton keeps the partition at 0, so a new template restarts
	// every pod, highest ordinal first, each once the one before is Ready
	// again. The new template is still applied only when the planner would
	// restart a pod, so UpgradeBlockers hold the rollout back until it
	// starts; once applied, the rollout is the StatefulSet controller's.
	// Without it the skeleton moves the partition and restarts one pod per
	// step.
	NoPartition bool
}
