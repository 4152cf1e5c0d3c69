package tikv

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// userGC is basicCluster with the user's own gc.ratio-threshold.
var userGC = strings.Replace(basicCluster, "        reserve-space: 0MB\n",
	"        reserve-space: 0MB\n      gc:\n        ratio-threshold: 1.5\n", 1)

// renderedTiKVConfig builds tc's config and returns it parsed (nil: no ConfigMap).
func renderedTiKVConfig(t *testing.T, tc *v1alpha1.TidbCluster) map[string]any {
	t.Helper()
	data, err := newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	if data == nil {
		return nil
	}
	var out map[string]any
	if err := toml.Unmarshal([]byte(data[component.ConfigFileKey]), &out); err != nil {
		t.Fatalf("rendered config: %v\n%s", err, data[component.ConfigFileKey])
	}
	return out
}

func holdByPiTR(tc *v1alpha1.TidbCluster) *v1alpha1.TidbCluster {
	if tc.Annotations == nil {
		tc.Annotations = map[string]string{}
	}
	tc.Annotations[label.AnnPiTRRestore] = "ns/pitr"
	return tc
}

func gcRatio(cfg map[string]any) any {
	gc, _ := cfg["gc"].(map[string]any)
	return gc["ratio-threshold"]
}

// TestPiTROverlayOverridesTheUsersGCRatio: while a PiTR restore holds the
// cluster the config says gc.ratio-threshold = -1 over the user's 1.5 and
// keeps the user's other keys; without it the user's value is back.
func TestPiTROverlayOverridesTheUsersGCRatio(t *testing.T) {
	t.Parallel()
	plain := renderedTiKVConfig(t, golden.Cluster(t, userGC))
	held := renderedTiKVConfig(t, holdByPiTR(golden.Cluster(t, userGC)))
	if got := gcRatio(plain); got != 1.5 {
		t.Errorf("without a restore gc.ratio-threshold = %v, want the user's 1.5", got)
	}
	if got := gcRatio(held); got != -1.0 {
		t.Errorf("during a PiTR restore gc.ratio-threshold = %v, want -1", got)
	}
	storage, _ := held["storage"].(map[string]any)
	if storage["reserve-space"] != "0MB" {
		t.Errorf("the overlay lost the user's storage.reserve-space: %v", held)
	}
}

// TestPiTROverlayWithoutUserConfig: a cluster without spec.tikv.config has
// no ConfigMap, but gets one holding only the overlay while a PiTR restore
// holds it.
func TestPiTROverlayWithoutUserConfig(t *testing.T) {
	t.Parallel()
	const bare = `{metadata: {name: a}, spec: {version: v8.5.0, tikv: {replicas: 1}}}`
	if cfg := renderedTiKVConfig(t, golden.Cluster(t, bare)); cfg != nil {
		t.Fatalf("no config and no restore: config %v, want none", cfg)
	}
	cfg := renderedTiKVConfig(t, holdByPiTR(golden.Cluster(t, bare)))
	if len(cfg) != 1 || gcRatio(cfg) != -1.0 {
		t.Fatalf("no user config during a PiTR restore: config %v, want only gc.ratio-threshold = -1", cfg)
	}
}

// TestPiTROverlayMarksThePodTemplate: the overlay is on TiKV's pod template
// only while it is in the config, so its coming and going restarts TiKV
// also under configUpdateStrategy InPlace (same ConfigMap name).
func TestPiTROverlayMarksThePodTemplate(t *testing.T) {
	t.Parallel()
	inPlace := strings.Replace(userGC, "configUpdateStrategy: RollingUpdate", "configUpdateStrategy: InPlace", 1)
	for _, manifest := range []string{userGC, inPlace} {
		plain, err := newStatefulSet(golden.Cluster(t, manifest), "basic-tikv")
		if err != nil {
			t.Fatal(err)
		}
		held, err := newStatefulSet(holdByPiTR(golden.Cluster(t, manifest)), "basic-tikv")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := plain.Spec.Template.Annotations[label.AnnTiKVConfigOverlay]; ok {
			t.Errorf("template annotated without a restore: %v", plain.Spec.Template.Annotations)
		}
		if got := held.Spec.Template.Annotations[label.AnnTiKVConfigOverlay]; got != label.TiKVGCOverlay {
			t.Errorf("template annotation %q during a PiTR restore, want %q", got, label.TiKVGCOverlay)
		}
		if held.Spec.Template.Annotations[label.AnnPrometheusScrape] != "true" {
			t.Errorf("the overlay mark replaced the template's annotations: %v", held.Spec.Template.Annotations)
		}
	}
}
