package tikv

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// gcRatioThresholdKey is the TiKV config key a PiTR restore overrides, and
// gcRatioThresholdOff its value while the restore runs: a negative ratio
// turns off TiKV's GC in compaction, so that the versions the restore
// writes are not collected while it runs.
const (
	gcRatioThresholdKey = "gc.ratio-threshold"
	gcRatioThresholdOff = -1.0
)

// pitrOverlay reports whether a PiTR restore holds tc (label.AnnPiTRRestore
// is set): TiKV's config then carries gc.ratio-threshold = -1 over the
// user's value, and its pod template label.AnnTiKVConfigOverlay.
func pitrOverlay(tc *v1alpha1.TidbCluster) bool {
	return tc.Annotations[label.AnnPiTRRestore] != ""
}

// overlayKeys returns the config keys forced over the user's config while a
// PiTR restore holds tc, none otherwise.
func overlayKeys(tc *v1alpha1.TidbCluster) map[string]any {
	if !pitrOverlay(tc) {
		return nil
	}
	return map[string]any{gcRatioThresholdKey: gcRatioThresholdOff}
}

// markOverlay records the overlay on sts's pod template while a PiTR
// restore holds tc: the template then changes when the overlay comes and
// goes, which restarts TiKV also when the ConfigMap is updated in place
// (configUpdateStrategy InPlace), and tells the Restore controller which
// rollout carries it.
func markOverlay(tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) {
	if !pitrOverlay(tc) {
		return
	}
	if sts.Spec.Template.Annotations == nil {
		sts.Spec.Template.Annotations = map[string]string{}
	}
	sts.Spec.Template.Annotations[label.AnnTiKVConfigOverlay] = label.TiKVGCOverlay
}
