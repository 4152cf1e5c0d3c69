package component

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

func TestEqualConfigDataComparesEveryTOMLKeyByMeaning(t *testing.T) {
	t.Parallel()
	live := map[string]string{
		"config_templ.toml": "tmp_path = '/data0/tmp'\n[flash]\nservice_addr = '0.0.0.0:3930'\ntcp_port = 9000\n",
		"proxy_templ.toml":  "log-level = 'info'\n",
		"startup-script":    "#!/bin/sh\nexec tiflash\n",
	}
	// Quoting, spacing and key order within a table differ. tmp_path stays
	// above [flash]: below it, it would be flash.tmp_path, another setting.
	reformatted := map[string]string{
		"config_templ.toml": "tmp_path = \"/data0/tmp\"\n\n[flash]\n  tcp_port = 9000\n  service_addr = \"0.0.0.0:3930\"\n",
		"proxy_templ.toml":  "log-level   =   \"info\"",
		"startup-script":    "#!/bin/sh\nexec tiflash\n",
	}
	if !tomlKey("config_templ.toml") || !tomlKey("pump-config") || tomlKey("startup-script") {
		t.Fatal("tomlKey misclassifies keys")
	}
	if !EqualConfigData(live, reformatted) {
		t.Error("reformatted TOML in both TiFlash files compares unequal")
	}
	changed := map[string]string{
		"config_templ.toml": reformatted["config_templ.toml"],
		"proxy_templ.toml":  "log-level = 'debug'\n",
		"startup-script":    live["startup-script"],
	}
	if EqualConfigData(live, changed) {
		t.Error("a changed value in the second TOML file compares equal")
	}
	script := map[string]string{
		"config_templ.toml": live["config_templ.toml"],
		"proxy_templ.toml":  live["proxy_templ.toml"],
		"startup-script":    "#!/bin/sh\n\nexec tiflash --log-level=debug\n",
	}
	if EqualConfigData(live, script) {
		t.Error("a start script passing another flag compares equal")
	}
	script["startup-script"] = "#!/bin/sh\n# the same server, the same flags\n\nexec tiflash\n"
	if !EqualConfigData(live, script) {
		t.Error("a start script differing only in comments and blank lines compares unequal")
	}
}

type reloader struct {
	Component[*v1alpha1.TidbCluster]
	reloads bool
}

func (r reloader) Traits() Traits { return Traits{ReloadsConfig: r.reloads} }

// TestConfigReloaderIsAlwaysInPlace: a component that reloads its config
// gets its ConfigMap updated in place even under RollingUpdate.
func TestConfigReloaderIsAlwaysInPlace(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Spec.ConfigUpdateStrategy = v1alpha1.ConfigUpdateStrategyRollingUpdate
	tc.Spec.TiProxy = &v1alpha1.TiProxySpec{}
	base := named("tiproxy")
	if got := configStrategy(TidbClusterSettings{}, tc, reloader{Component: base, reloads: true}); got != v1alpha1.ConfigUpdateStrategyInPlace {
		t.Errorf("reloading component: strategy %s, want InPlace", got)
	}
	if got := configStrategy(TidbClusterSettings{}, tc, reloader{Component: base}); got != v1alpha1.ConfigUpdateStrategyRollingUpdate {
		t.Errorf("other component: strategy %s, want the cluster's RollingUpdate", got)
	}
}

type named string

func (n named) Name() string                         { return string(n) }
func (n named) Enabled(*v1alpha1.TidbCluster) bool   { return true }
func (n named) Replicas(*v1alpha1.TidbCluster) int32 { return 1 }
func (n named) Status(*v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &v1alpha1.ComponentStatus{}
}
func (n named) Services(*v1alpha1.TidbCluster) []*corev1.Service            { return nil }
func (n named) ConfigData(*v1alpha1.TidbCluster) (map[string]string, error) { return nil, nil }
func (n named) StatefulSet(*v1alpha1.TidbCluster, string) (*appsv1.StatefulSet, error) {
	return nil, nil
}
func (n named) Traits() Traits { return Traits{} }

// TestSameAsInUseReadsDataOnlyWhenTheHashDiffers: the cache holds our
// ConfigMaps without data; a recorded hash equal to desired's means the
// same config with no request, a different one is read from the API and
// compared by meaning (reformatted TOML is the same, a changed value is
// not).
func TestSameAsInUseReadsDataOnlyWhenTheHashDiffers(t *testing.T) {
	t.Parallel()
	desired := func(toml string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-pd", Namespace: "ns", Labels: map[string]string{"a": "b"}},
			Data: map[string]string{"config-file": toml}}
	}
	for name, c := range map[string]struct {
		live, want string
		same       bool
		reads      int
	}{
		"same hash":        {"[log]\nlevel = 'info'\n", "[log]\nlevel = 'info'\n", true, 0},
		"reformatted TOML": {"[log]\nlevel = 'info'\n", "[log]\n  level = \"info\"\n", true, 1},
		"changed value":    {"[log]\nlevel = 'info'\n", "[log]\nlevel = 'warn'\n", false, 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			live := desired(c.live)
			h, err := apply.ConfigMapHash(live)
			if err != nil {
				t.Fatal(err)
			}
			live.Annotations = map[string]string{apply.AnnAppliedHash: h}
			kube := kubefake.NewClientset(live.DeepCopy())
			cached := live.DeepCopy()
			cached.Data = nil // as controller.StripCached keeps it
			idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			if err := idx.Add(cached); err != nil {
				t.Fatal(err)
			}
			m := &Manager[*v1alpha1.TidbCluster]{cms: corelisters.NewConfigMapLister(idx), kube: kube}
			if got := m.sameAsInUse(context.Background(), "db-pd", desired(c.want)); got != c.same {
				t.Errorf("same = %v, want %v", got, c.same)
			}
			if n := len(kube.Actions()); n != c.reads {
				t.Errorf("%d API reads, want %d", n, c.reads)
			}
		})
	}
}
