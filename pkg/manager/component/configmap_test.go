package component

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
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
	Component
	reloads bool
}

func (r reloader) ReloadsConfig() bool { return r.reloads }

// TestConfigReloaderIsAlwaysInPlace: a component that reloads its config
// gets its ConfigMap updated in place even under RollingUpdate.
func TestConfigReloaderIsAlwaysInPlace(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Spec.ConfigUpdateStrategy = v1alpha1.ConfigUpdateStrategyRollingUpdate
	tc.Spec.TiProxy = &v1alpha1.TiProxySpec{}
	base := named("tiproxy")
	if got := configStrategy(tc, reloader{Component: base, reloads: true}); got != v1alpha1.ConfigUpdateStrategyInPlace {
		t.Errorf("reloading component: strategy %s, want InPlace", got)
	}
	if got := configStrategy(tc, reloader{Component: base}); got != v1alpha1.ConfigUpdateStrategyRollingUpdate {
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
