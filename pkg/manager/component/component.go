// Package component is the one sync skeleton every StatefulSet-backed
// component (PD, TiFlash, TiKV, TiDB …) runs: an ordered list of small
// named steps — observe status → pause guard → diagnose → dependency gate →
// Services → ConfigMap → build StatefulSet → create (then wait) → failover →
// scale and upgrade → apply. A component supplies the small Component
// interface (pure builders and its status) and whichever optional hooks it
// needs (hooks.go); the skeleton type-asserts them and owns every write.
package component

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Component is what every member manager supplies to the skeleton. Builders
// are pure: they read only tc (already defaulted and validated) and their
// arguments, never a lister, client or clock. Everything else a component
// may do is an optional hook (see hooks.go).
type Component interface {
	// Name is the component's label value and name suffix, e.g. "pd".
	Name() string
	// Enabled reports whether tc has this component (spec.<component> set).
	Enabled(tc *v1alpha1.TidbCluster) bool
	// Replicas is the desired number of pods.
	Replicas(tc *v1alpha1.TidbCluster) int32
	// Status returns the component's status inside tc.Status, for the
	// skeleton to fill StatefulSet status, image and phase.
	Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus
	// Services returns the component's Services.
	Services(tc *v1alpha1.TidbCluster) []*corev1.Service
	// ConfigData returns the ConfigMap data (config files and start script),
	// or nil when the component has no ConfigMap.
	ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error)
	// StatefulSet builds the desired StatefulSet mounting the ConfigMap
	// named configMap ("" when there is none). Replicas and partition are
	// set by the skeleton.
	StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error)
}
