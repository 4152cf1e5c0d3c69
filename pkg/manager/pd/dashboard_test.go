package pd

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// TestDashboardTiDBClientTLS checks when PD's dashboard gets TiDB's client certificate (mount and
// [dashboard] paths), which Secret it mounts, and that skipInternalClientCA leaves out the CA path.
func TestDashboardTiDBClientTLS(t *testing.T) {
	t.Parallel()
	custom := "dashboard-client"
	cases := map[string]struct {
		mutate func(*v1alpha1.TidbCluster)
		secret string // "" = no dashboard TLS
		noCA   bool   // tidb-cacert-path left out
	}{
		"tidb without tlsClient": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{}
		}},
		"no tidb": {mutate: func(*v1alpha1.TidbCluster) {}},
		"tlsClient": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
		}, secret: "basic-tidb-client-secret"},
		"tlsClient, spec.pd.tlsClientSecretName": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
			tc.Spec.PD.TLSClientSecretName = &custom
		}, secret: custom},
		"tlsClient, skipInternalClientCA: no CA path": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true, SkipInternalClientCA: true}}
		}, secret: "basic-tidb-client-secret", noCA: true},
		"skipInternalClientCA without tlsClient": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{SkipInternalClientCA: true}}
		}},
		"tlsClient, clients skip TLS to TiDB": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
			tc.Annotations = map[string]string{label.AnnSkipTLSWhenConnectTiDB: "true"}
		}},
		"tlsClient, PD v3 has no dashboard": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
			tc.Spec.Version = "v3.0.13"
		}},
		"tlsClient, untagged version counts as new": {mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
			tc.Spec.Version = "latest"
		}, secret: "basic-tidb-client-secret"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := basicTC()
			c.mutate(tc)
			defaulting.SetTidbClusterDefaults(tc)
			data, err := newConfigData(tc)
			if err != nil {
				t.Fatal(err)
			}
			sts, err := newStatefulSet(tc, "basic-pd")
			if err != nil {
				t.Fatal(err)
			}
			mounted := ""
			for _, v := range sts.Spec.Template.Spec.Volumes {
				if v.Name == tidbClientTLSVolume {
					mounted = v.Secret.SecretName
				}
			}
			at := ""
			for _, m := range sts.Spec.Template.Spec.Containers[0].VolumeMounts {
				if m.Name == tidbClientTLSVolume {
					at = m.MountPath
				}
			}
			cfg := data["config-file"]
			caPath := strings.Contains(cfg, "tidb-cacert-path")
			if !c.noCA {
				caPath = strings.Contains(cfg, "tidb-cacert-path = '/var/lib/tidb-client-tls/ca.crt'")
			}
			hasPaths := caPath != c.noCA &&
				strings.Contains(cfg, "tidb-cert-path = '/var/lib/tidb-client-tls/tls.crt'") &&
				strings.Contains(cfg, "tidb-key-path = '/var/lib/tidb-client-tls/tls.key'")
			if c.secret == "" {
				if mounted != "" || at != "" || strings.Contains(cfg, "tidb-cert-path") {
					t.Errorf("dashboard TLS set up: volume %q at %q, config:\n%s", mounted, at, cfg)
				}
				return
			}
			if mounted != c.secret || at != tidbClientTLSDir || !hasPaths || !strings.Contains(cfg, "[dashboard]") {
				t.Errorf("volume %q at %q, want %q at %s; config:\n%s", mounted, at, c.secret, tidbClientTLSDir, cfg)
			}
		})
	}
}
