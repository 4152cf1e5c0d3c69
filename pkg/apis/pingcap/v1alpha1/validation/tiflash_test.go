package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidateTiFlashConfig(t *testing.T) {
	t.Parallel()
	config := func(items map[string]any) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { tc.Spec.TiFlash.Config = v1alpha1.NewConfig(items) }
	}
	logger := func(file any) map[string]any {
		return map[string]any{"config": map[string]any{"logger": map[string]any{"log": file}}}
	}
	const base = "spec.tiflash.config"
	runClusterCases(t, []clusterCase{
		{name: "no sections", mutate: config(map[string]any{})},
		{name: "TOML strings", mutate: config(map[string]any{
			"config": "[flash]\nservice_addr = \"0.0.0.0:3930\"\n[logger]\nerrorlog = \"/data0/logs/e.log\"",
			"proxy":  "log-level = \"warn\"\n[server]\nstatus-addr = \"0.0.0.0:20292\"",
		})},
		{name: "tables", mutate: config(map[string]any{
			"config": map[string]any{"flash": map[string]any{"proxy": map[string]any{"addr": "0.0.0.0:20170"}}},
			"proxy":  map[string]any{"security": map[string]any{"cert-allowed-cn": []any{"a"}}},
		})},
		{name: "unknown section is not an error (Unsupported names it)", mutate: config(map[string]any{"flash": map[string]any{}})},
		{name: "broken TOML", mutate: config(map[string]any{"config": "[flash"}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config"}}},
		{name: "section a number", mutate: config(map[string]any{"proxy": int64(1)}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".proxy"}}},
		{name: "operator tables as scalars", mutate: config(map[string]any{
			"config": "flash = 1\n[storage]\nmain = \"x\"",
			"proxy":  map[string]any{"security": "on"},
		}), want: []fieldErr{
			{field.ErrorTypeInvalid, base + ".config.flash"},
			{field.ErrorTypeInvalid, base + ".config.storage.main"},
			{field.ErrorTypeInvalid, base + ".proxy.security"},
		}},
		{name: "log file not a string", mutate: config(logger(int64(3))),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.logger.log"}}},
		{name: "log file relative", mutate: config(logger("logs/server.log")),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.logger.log"}}},
		{name: "log file not clean", mutate: config(logger("/data0/../etc/server.log")),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.logger.log"}}},
		{name: "log file on a disk TiFlash does not have", mutate: config(logger("/data1/server.log")),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.logger.log"}}},
		{name: "log file on the second disk", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiFlash.StorageClaims = append(tc.Spec.TiFlash.StorageClaims, v1alpha1.StorageClaim{Resources: storage("1Gi")})
			config(logger("/data1/server.log"))(tc)
		}},
		{name: "log file on an additional volume", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiFlash.AdditionalVolumes = []corev1.Volume{{Name: "logs"}}
			tc.Spec.TiFlash.AdditionalVolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/var/log/tiflash/"}}
			config(map[string]any{"config": "[flash.flash_cluster]\nlog = \"/var/log/tiflash/cluster.log\""})(tc)
		}},
		{name: "log file outside every volume", mutate: config(map[string]any{"config": "[flash.flash_cluster]\nlog = \"/var/log/cluster.log\""}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.flash.flash_cluster.log"}}},
	})
}
