package tidbcluster

import (
	"slices"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestUnreadTiFlashConfigKeysAreNamed: the TiDB Operator reads only the
// config and proxy sections of spec.tiflash.config and ignores any other;
// such a key is accepted and named by the Unsupported condition.
func TestUnreadTiFlashConfigKeysAreNamed(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1}
	tc.Spec.TiFlash.Config = v1alpha1.NewConfig(map[string]any{
		"config": map[string]any{"logger": map[string]any{"level": "info"}},
		"proxy":  map[string]any{"log-level": "info"},
	})
	if got := unsupportedFields(tc, map[string]bool{"tiflash": true}); len(got) != 0 {
		t.Fatalf("config and proxy named as unsupported: %v", got)
	}
	tc.Spec.TiFlash.Config.Items["flash"] = map[string]any{}
	got := unsupportedFields(tc, map[string]bool{"tiflash": true})
	if !slices.Equal(got, []string{"spec.tiflash.config.flash"}) {
		t.Errorf("unsupported = %v, want spec.tiflash.config.flash", got)
	}
}

// TestParallelScaleInIsNamed: scaleInParallelism above 1 is accepted but
// stores are removed one at a time, so the Unsupported condition names it.
func TestParallelScaleInIsNamed(t *testing.T) {
	t.Parallel()
	one, four := int32(1), int32(4)
	tc := &v1alpha1.TidbCluster{}
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 3}
	tc.Spec.TiKV.ScalePolicy.ScaleInParallelism = &one
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1}
	built := map[string]bool{"tikv": true, "tiflash": true}
	if got := unsupportedFields(tc, built); len(got) != 0 {
		t.Fatalf("scaleInParallelism 1 named: %v", got)
	}
	tc.Spec.TiFlash.ScalePolicy.ScaleInParallelism = &four
	got := unsupportedFields(tc, built)
	if !slices.Equal(got, []string{"spec.tiflash.scalePolicy.scaleInParallelism"}) {
		t.Errorf("unsupported = %v", got)
	}
}
