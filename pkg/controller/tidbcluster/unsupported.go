package tidbcluster

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Event reason and condition reasons for what the spec sets that this
// operator version accepts but does not act on yet.
const (
	ReasonUnsupported    = "Unsupported"
	ReasonAllSupported   = "AllSupported"
	unsupportedMsgPrefix = "accepted but not acted on by this operator version: "
)

// unsupportedFields lists, by JSON path, what tc's spec sets that nothing
// acts on: components present that are not core (their descriptor's Core)
// and have no Component in built, the registry's
// TidbCluster fields (pkg/apis/pingcap/v1alpha1/unsupported, the list the
// code-reading check hack/fieldcheck holds the code to), and values no
// component renders. The list is sorted so its message is stable.
func unsupportedFields(tc *v1alpha1.TidbCluster, built map[string]bool) []string {
	var out []string
	for _, d := range components.Present(&tc.Spec) {
		if !d.Core && !built[d.Name] {
			out = append(out, "spec."+d.Name)
		}
	}
	s := &tc.Spec
	out = append(out, unsupported.Fields(unsupported.TidbCluster, tc)...)
	if v := scriptV2NotRendered(s); v != "" {
		out = append(out, v)
	}
	out = append(out, unreadTiFlashConfig(s)...)
	out = append(out, deleteSlots(tc)...)
	slices.Sort(out)
	return out
}

// scriptV2NotRendered names the components present whose start script has
// a v2 generation in the TiDB Operator that this operator does not render
// (descriptor ScriptV2NotRendered: TiFlash, TiCDC, Pump keep their one
// script), when spec.startScriptVersion is v2; PD, TiKV and TiDB render
// theirs, TiProxy has one in both.
func scriptV2NotRendered(s *v1alpha1.TidbClusterSpec) string {
	if s.StartScriptVersion != "v2" {
		return ""
	}
	var comps []string
	for _, d := range components.Present(s) {
		if d.ScriptV2NotRendered {
			comps = append(comps, d.Name)
		}
	}
	if len(comps) == 0 {
		return ""
	}
	return "spec.startScriptVersion (v2 for " + strings.Join(comps, ", ") + ")"
}

// deleteSlots names the delete-slots annotations tc carries with slots:
// the TiDB Operator acts on them only through Advanced StatefulSet, which
// this operator does not run; a scale-in removes the highest ordinals.
func deleteSlots(tc *v1alpha1.TidbCluster) []string {
	var out []string
	for _, key := range label.DeleteSlotsAnnotations {
		if v := strings.TrimSpace(tc.Annotations[key]); v != "" && v != "[]" {
			out = append(out, "metadata.annotations."+key+" (needs Advanced StatefulSet; scale-in removes the highest ordinals)")
		}
	}
	return out
}

// unreadTiFlashConfig names the keys of spec.tiflash.config other than the
// config and proxy sections the operator reads.
func unreadTiFlashConfig(s *v1alpha1.TidbClusterSpec) []string {
	if s.TiFlash == nil || s.TiFlash.Config == nil {
		return nil
	}
	var out []string
	for key := range s.TiFlash.Config.Items {
		if !slices.Contains(validation.TiFlashConfigSections, key) {
			out = append(out, "spec.tiflash.config."+key)
		}
	}
	return out
}

// attributesClassReporter is the skeleton's report of volume attributes
// classes its live StatefulSet's claim templates do not carry.
type attributesClassReporter interface {
	UnappliedVolumeAttributesClasses(tc *v1alpha1.TidbCluster) []string
}

// unappliedAttributesClasses names the volumeAttributesClassName values set
// or changed after a component's StatefulSet was created: its claim
// templates cannot change, and existing PVCs are not modified.
func (c *defaultControl) unappliedAttributesClasses(tc *v1alpha1.TidbCluster) []string {
	var out []string
	for _, m := range c.components {
		if r, ok := m.(attributesClassReporter); ok {
			out = append(out, r.UnappliedVolumeAttributesClasses(tc)...)
		}
	}
	return out
}

// setUnsupported sets the Unsupported condition from fields and the volume
// attributes classes no PVC gets (unappliedAttributesClasses), and records
// one Warning event when the set of fields (or the generation) changes since
// the status last written, never on every resync.
func (c *defaultControl) setUnsupported(tc *v1alpha1.TidbCluster, original *v1alpha1.TidbClusterStatus, fields []string) {
	if classes := c.unappliedAttributesClasses(tc); len(classes) > 0 {
		fields = append(slices.Clone(fields), classes...)
		slices.Sort(fields)
	}
	cond := metav1.Condition{Type: v1alpha1.TidbClusterUnsupported, Status: metav1.ConditionFalse,
		Reason: ReasonAllSupported, Message: "the operator acts on every field the spec sets"}
	if len(fields) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonUnsupported
		cond.Message = unsupportedMsgPrefix + strings.Join(fields, ", ")
		prev := meta.FindStatusCondition(original.Conditions, v1alpha1.TidbClusterUnsupported)
		if prev == nil || prev.Message != cond.Message || prev.ObservedGeneration != tc.Generation {
			c.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonUnsupported, "%s", cond.Message)
		}
	}
	setCondition(&tc.Status.Conditions, cond, tc.Generation)
}
