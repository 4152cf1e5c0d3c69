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
