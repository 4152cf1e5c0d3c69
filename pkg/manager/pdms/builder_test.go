package pdms

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// msCluster is the v1.6 micro-service example's shape (spec pd-microservices §12).
const msCluster = `
metadata: {name: basic, namespace: ns}
spec:
  version: v8.5.7
  timezone: UTC
  pd: {baseImage: pingcap/pd, mode: ms, replicas: 1, requests: {storage: 1Gi}, config: {}}
  pdms:
  - {name: tso, baseImage: hub.pingcap.net/devbuild/pd, version: v8.3.0-5427, replicas: 2}
  - {name: scheduling, baseImage: hub.pingcap.net/devbuild/pd, version: v8.3.0-5427, replicas: 2}
  tikv: {baseImage: pingcap/tikv, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 1, config: {}}
`

// tlsCluster has TLS between components, a cluster domain, the client
// certificate mounted, a config, a storage volume, a service override and a
// tso older than v8.3.0.
const tlsCluster = `
metadata: {name: secure, namespace: db}
spec:
  version: v8.1.0
  clusterDomain: cluster.local
  tlsCluster: {enabled: true}
  pd: {mode: ms, replicas: 3, requests: {storage: 1Gi}, config: {}, startTimeout: 45}
  pdms:
  - name: tso
    replicas: 1
    mountClusterClientSecret: true
    config: {log: {level: warn}}
    storageVolumes: [{name: log, storageSize: 1Gi}]
    service: {type: NodePort, portName: tso-client}
  tikv: {replicas: 1, requests: {storage: 1Gi}, config: {}}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	for name, manifest := range map[string]string{"basic": msCluster, "tls": tlsCluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := golden.Cluster(t, manifest)
			golden.Assert(t, name+"-tso", golden.Objects(t, tc, NewTSO(&component.Env{}))...)
			if name == "basic" {
				golden.Assert(t, name+"-scheduling", golden.Objects(t, tc, NewScheduling(&component.Env{}))...)
			}
		})
	}
}

// TestStartScriptNamesTheMemberFromV830: --name is passed from v8.3.0 on
// (pre-releases and versions that are not numbers count as new), as the
// pod's name, or its FQDN with a cluster domain; the backend is PD's
// client Service with the cluster's scheme.
func TestStartScriptNamesTheMemberFromV830(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version, domain string
		tls             bool
		name            string // "" for no --name
	}{
		{"v8.3.0", "", false, "--name=${PDMS_POD_NAME}"},
		{"v8.3.0-5427", "", false, "--name=${PDMS_POD_NAME}"},
		{"nightly", "", false, "--name=${PDMS_POD_NAME}"},
		{"v9.0.0", "c.local", true, "--name=${PD_DOMAIN}"},
		{"v8.2.9", "", false, ""},
		{"v7.5.0", "", true, ""},
	} {
		tc := golden.Cluster(t, msCluster)
		tc.Spec.PDMS[0].Version = &c.version
		tc.Spec.ClusterDomain = c.domain
		if c.tls {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
		}
		script, err := newStartScript(tc, "tso")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(script, "--name="); got != (c.name != "") || c.name != "" && !strings.Contains(script, c.name) {
			t.Errorf("%s (domain %q): script names the member %v, want %q:\n%s", c.version, c.domain, got, c.name, script)
		}
		scheme := "http"
		if c.tls {
			scheme = "https"
		}
		if want := "--backend-endpoints=" + scheme + "://basic-pd:2379"; !strings.Contains(script, want) {
			t.Errorf("%s: script lacks %q", c.version, want)
		}
		if !strings.Contains(script, `ARGS="services tso`) || !strings.Contains(script, "exec /pd-server ${ARGS}") {
			t.Errorf("%s: not a pd-server services tso start:\n%s", c.version, script)
		}
	}
}
