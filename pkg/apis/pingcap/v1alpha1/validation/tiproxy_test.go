package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidateTiProxy(t *testing.T) {
	t.Parallel()
	tiproxy := func(mutate func(p *v1alpha1.TiProxySpec)) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { mutate(tc.Spec.TiProxy) }
	}
	config := func(items map[string]any) func(*v1alpha1.TidbCluster) {
		return tiproxy(func(p *v1alpha1.TiProxySpec) { p.Config = v1alpha1.NewConfig(items) })
	}
	const base = "spec.tiproxy"
	runClusterCases(t, []clusterCase{
		{name: "legacy layout", mutate: tiproxy(func(p *v1alpha1.TiProxySpec) { p.CertLayout = "" })},
		{name: "v1 layout with TLS to TiDB", mutate: tiproxy(func(p *v1alpha1.TiProxySpec) {
			p.CertLayout, p.SSLEnableTiDB, p.TLSClientSecretName = "v1", true, ptr("proxy-client")
		})},
		{name: "unknown layout", mutate: tiproxy(func(p *v1alpha1.TiProxySpec) { p.CertLayout = "V1" }),
			want: []fieldErr{{field.ErrorTypeNotSupported, base + ".certLayout"}}},
		{name: "client Secret name not a name", mutate: tiproxy(func(p *v1alpha1.TiProxySpec) { p.TLSClientSecretName = ptr("Proxy_Client") }),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".tlsClientSecretName"}}},
		{name: "empty client Secret name", mutate: tiproxy(func(p *v1alpha1.TiProxySpec) { p.TLSClientSecretName = ptr("") }),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".tlsClientSecretName"}}},
		{name: "across Kubernetes clusters", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.AcrossK8s = true },
			want: []fieldErr{{field.ErrorTypeForbidden, base}}},
		{name: "config tables", mutate: config(map[string]any{
			"proxy":    map[string]any{"max-connections": int64(10)},
			"security": map[string]any{"sql-tls": map[string]any{"skip-ca": true}},
			"workdir":  "/tmp",
		})},
		{name: "operator tables as scalars", mutate: config(map[string]any{
			"api":      "on",
			"security": map[string]any{"server-tls": "yes", "server-http-tls": map[string]any{}},
			"labels":   int64(1),
		}), want: []fieldErr{
			{field.ErrorTypeInvalid, base + ".config.api"},
			{field.ErrorTypeInvalid, base + ".config.security.server-tls"},
			{field.ErrorTypeInvalid, base + ".config.labels"},
		}},
		{name: "security a scalar", mutate: config(map[string]any{"security": "tls"}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.security"}}},
	})
}
