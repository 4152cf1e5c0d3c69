package validation

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// The update rules of the TiDB Operator's admission webhook (spec §3.1).
// Those the CRDs can express are CEL rules on oldSelf (the markers in
// package v1alpha1 carry the same messages): spec.version and the PD, TiKV
// and TiDB baseImage may not be emptied, spec.tidb.bootstrapSQLConfigMapName
// may not change. The others read what CRD rules cannot see — labels, and
// the schemaless config maps — and are checked here against the live
// objects, which stand in for the old object the operator never has:
// ValidateLive. They also catch a change the API server stored before its
// CRD had the rules (Helm does not upgrade CRDs). The CRD-only rules have
// no twin here: once stored, an emptied version or image cannot be told
// from a chosen one (the default image, an untagged one).

// Messages of the update rules checked here; the CRD's CEL rule on
// spec.tidb.bootstrapSQLConfigMapName carries the same message.
const (
	// MsgBootstrapSQLChanged is refused when spec.tidb.bootstrapSQLConfigMapName changes once set.
	MsgBootstrapSQLChanged = "spec.tidb.bootstrapSQLConfigMapName may not be changed once set " +
		"(TiDB runs the bootstrap SQL only when it first bootstraps the cluster); it may be removed"
	// MsgPDConfigImmutable is appended to the PD config section that may not change.
	MsgPDConfigImmutable = "may not change through the TidbCluster once PD's StatefulSet exists: PD keeps it in its own storage after its first start; change it with pd-ctl"
)

// instanceLabel is the label every object of a cluster carries with the
// cluster's instance (label.InstanceLabelKey; this package imports nothing of ours).
const instanceLabel = "app.kubernetes.io/instance"

// pdImmutableSections are the sections of PD's config that PD persists at
// its first start and then reads from its own storage, not from the file.
var pdImmutableSections = []string{"schedule", "replication"}

// Live is what the operator reads back from one component's live
// StatefulSet and the ConfigMap its pods mount: the values the cluster's
// objects were built from. The zero value of each field is "unknown" and
// checks nothing, so a component not created yet passes every rule.
type Live struct {
	// Component is the component's spec field: pd, tikv, tidb, …
	Component string
	// Instance is the StatefulSet's app.kubernetes.io/instance label.
	Instance string
	// ConfigMap is the ConfigMap the pods mount as their config, when the
	// operator (or the TiDB Operator) rendered it from the spec.
	ConfigMap string
	// RendersConfig is whether the spec still renders a ConfigMap for the
	// component; false with ConfigMap set means spec.<component>.config
	// was removed.
	RendersConfig bool
	// BootstrapSQL is the ConfigMap TiDB's pods mount as bootstrap SQL.
	BootstrapSQL string
	// MountedConfig and DesiredConfig are the config file as the pods
	// mount it and as the spec renders it now, parsed, for the components
	// ComparesMountedConfig names; nil when unknown or known to be equal.
	MountedConfig, DesiredConfig map[string]any
}

// ComparesMountedConfig reports whether ValidateLive compares component's
// mounted config file with the desired one (Live.MountedConfig): those whose
// descriptor says so (PD, whose schedule and replication sections may not
// change).
func ComparesMountedConfig(component string) bool {
	d := components.Lookup(component)
	return d != nil && d.ComparesMountedConfig
}

// configKept reports whether component's config may not be removed once it
// rendered their ConfigMap (its descriptor's ConfigKept: without it PD, TiKV
// and TiDB would mount the one Helm used to make; TiCDC without config just
// runs without a file).
func configKept(component string) bool {
	d := components.Lookup(component)
	return d != nil && d.ConfigKept
}

// ValidateLive returns the update rules tc breaks against what live says
// its objects were built from: the instance label changed, a config that
// rendered the mounted ConfigMap removed, the bootstrap SQL ConfigMap
// changed, or one of PD's persisted config sections (schedule,
// replication) changed. An empty list means the sync may write.
func ValidateLive(tc *v1alpha1.TidbCluster, live Live) field.ErrorList {
	var errs field.ErrorList
	if live.Instance != "" && live.Instance != instanceOf(tc) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(instanceLabel), instanceOf(tc),
			fmt.Sprintf("the instance may not change: the cluster's %s objects were built with instance %q", live.Component, live.Instance)))
	}
	componentPath := field.NewPath("spec", live.Component)
	if live.ConfigMap != "" && !live.RendersConfig && configKept(live.Component) {
		errs = append(errs, field.Required(componentPath.Child("config"), fmt.Sprintf(
			"spec.%s.config may not be removed once set: the pods run with ConfigMap %s rendered from it; set config: {} for an empty one",
			live.Component, live.ConfigMap)))
	}
	if name := bootstrapSQLOf(tc); live.BootstrapSQL != "" && name != "" && name != live.BootstrapSQL {
		errs = append(errs, field.Invalid(componentPath.Child("bootstrapSQLConfigMapName"), name, MsgBootstrapSQLChanged))
	}
	if ComparesMountedConfig(live.Component) && live.MountedConfig != nil && live.DesiredConfig != nil {
		for _, section := range pdImmutableSections {
			if !reflect.DeepEqual(live.MountedConfig[section], live.DesiredConfig[section]) {
				errs = append(errs, field.Forbidden(componentPath.Child("config", section),
					fmt.Sprintf("PD's %s config %s", section, MsgPDConfigImmutable)))
			}
		}
	}
	return errs
}

// instanceOf is the instance of tc's objects: its app.kubernetes.io/instance
// label when set (Helm compatibility), else its name.
func instanceOf(tc *v1alpha1.TidbCluster) string {
	if v := tc.Labels[instanceLabel]; v != "" {
		return v
	}
	return tc.Name
}

// bootstrapSQLOf is spec.tidb.bootstrapSQLConfigMapName, "" when unset.
func bootstrapSQLOf(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.TiDB == nil || tc.Spec.TiDB.BootstrapSQLConfigMapName == nil {
		return ""
	}
	return *tc.Spec.TiDB.BootstrapSQLConfigMapName
}
