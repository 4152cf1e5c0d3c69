package tiproxy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
)

// basicCluster is examples' TiProxy: two proxies in front of two TiDBs.
const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  timezone: UTC
  pd: {baseImage: pingcap/pd, replicas: 3, requests: {storage: 10Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 3, requests: {storage: 100Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 2, config: {}}
  tiproxy:
    baseImage: pingcap/tiproxy
    version: v1.3.0
    replicas: 2
`

// tlsLegacyCluster has TLS between components and for MySQL clients, the
// legacy certificate layout, TLS to TiDB although clients skip it, a
// client certificate of the user's and TiDB without client authentication.
const tlsLegacyCluster = `
metadata:
  name: secure
  namespace: db
  annotations: {tidb.tidb.pingcap.com/skip-tls-when-connect-tidb: "true"}
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {replicas: 1, requests: {storage: 10Gi}, config: {}}
  tidb: {replicas: 1, tlsClient: {enabled: true, disableClientAuthn: true}, config: {}}
  tiproxy:
    replicas: 1
    sslEnableTiDB: true
    tlsClientSecretName: proxy-to-tidb
    config:
      security:
        server-tls: {skip-ca: false}
      proxy: {max-connections: 1000, graceful-close-conn-timeout: 30}
`

// tlsV1Cluster uses the v1 certificate layout, TiDB's CA not verified
// (skipInternalClientCA), a user TOML config and a tcp readiness probe.
const tlsV1Cluster = `
metadata: {name: v1tls}
spec:
  version: v8.5.0
  clusterDomain: cluster.local
  tlsCluster: {enabled: true}
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb: {replicas: 1, tlsClient: {enabled: true, skipInternalClientCA: true}}
  tiproxy:
    replicas: 3
    certLayout: v1
    readinessProbe: {type: tcp, initialDelaySeconds: 5, periodSeconds: 3}
    config: |
      [proxy]
      require-backend-tls = true
      addr = "0.0.0.0:7000"
      [log]
      level = "warn"
`

// storageCluster has storage volumes (one the work directory), IPv6, a
// deprecated Service type, pod settings inherited from the cluster, and
// resources.
const storageCluster = `
metadata: {name: vols}
spec:
  version: v8.5.0
  preferIPv6: true
  nodeSelector: {pool: proxy}
  services: [{name: tiproxy, type: LoadBalancer}]
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tidb: {replicas: 1}
  tiproxy:
    replicas: 1
    imagePullPolicy: Always
    annotations: {team: sql}
    env: [{name: GOMAXPROCS, value: "4"}]
    requests: {cpu: "1", storage: 1Gi}
    limits: {memory: 2Gi}
    storageVolumes:
    - {name: work, storageSize: 1Gi}
    - {name: log, storageSize: 2Gi, mountPath: /var/log/tiproxy, storageClassName: fast}
    config:
      log: {log-file: {filename: /var/log/tiproxy/tiproxy.log}}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"basic":           basicCluster,
		"tls-legacy":      tlsLegacyCluster,
		"tls-v1":          tlsV1Cluster,
		"storage-volumes": storageCluster,
		// v1.6 fields: storageClassName and volumeAttributesClassName of the
		// storage volumes, securityContext, no service account token.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tidb: {replicas: 1}
  tiproxy:
    replicas: 1
    automountServiceAccountToken: false
    securityContext: {runAsNonRoot: true}
    storageClassName: standard
    volumeAttributesClassName: fast
    storageVolumes:
    - {name: work, storageSize: 1Gi}
    - {name: log, storageSize: 2Gi, storageClassName: local, volumeAttributesClassName: slow}
`,
		// A cluster using another namespace's PD and TiDB.
		"heterogeneous": `
metadata: {name: hetero, namespace: b}
spec:
  version: v8.5.0
  cluster: {name: basic, namespace: a}
  tiproxy: {replicas: 1}
`,
	}
	for name, manifest := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := golden.Cluster(t, manifest)
			if errs := validation.ValidateTidbCluster(tc); len(errs) > 0 {
				t.Fatalf("the case is not a valid cluster: %v", errs.ToAggregate())
			}
			objs := golden.Objects(t, tc, New(&component.Env{}))
			golden.Assert(t, name, objs...)
			var metaObjs []metav1.Object
			for _, o := range objs {
				metaObjs = append(metaObjs, o.(metav1.Object))
			}
			if errs := precheck.Objects(metaObjs); len(errs) > 0 {
				t.Errorf("precheck: %v", errs.ToAggregate())
			}
		})
	}
}

// renderedConfig builds tc's proxy.toml and reads it back.
func renderedConfig(t *testing.T, tc *v1alpha1.TidbCluster) map[string]any {
	t.Helper()
	data, err := newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := toml.Unmarshal([]byte(data[component.ConfigFileKey]), &out); err != nil {
		t.Fatalf("proxy.toml is not TOML: %v\n%s", err, data[component.ConfigFileKey])
	}
	return out
}

func lookup(tree map[string]any, key string) any {
	var v any = tree
	for _, p := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// TestForcedConfig: the operator's keys win over the user's, the user's
// choices the operator only defaults are kept, and each layout names the
// directories its volumes are mounted at.
func TestForcedConfig(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		manifest string
		want     map[string]any // key → value; nil means absent
	}{
		"basic": {basicCluster, map[string]any{
			"workdir": "/var/lib/tiproxy/work", "proxy.pd-addrs": "basic-pd:2379", "proxy.addr": "0.0.0.0:6000",
			"api.addr": "0.0.0.0:3080", "proxy.require-backend-tls": false, "security": nil,
		}},
		"legacy TLS": {tlsLegacyCluster, map[string]any{
			"security.cluster-tls.ca":          "/var/lib/cluster-client-tls/ca.crt",
			"security.server-tls.cert":         "/var/lib/tiproxy-server-tls/tls.crt",
			"security.server-tls.skip-ca":      false, // the user's
			"security.sql-tls.ca":              "/var/lib/tiproxy-sql-tls/ca.crt",
			"security.sql-tls.cert":            nil, // disableClientAuthn
			"security.server-http-tls.cert":    "/var/lib/tiproxy-http-server-tls/tls.crt",
			"security.server-http-tls.skip-ca": true,
			"proxy.max-connections":            int64(1000),
		}},
		"v1 TLS": {tlsV1Cluster, map[string]any{
			"proxy.addr":                  "0.0.0.0:6000", // the Services' port, not the user's
			"proxy.require-backend-tls":   true,           // the user's
			"log.level":                   "warn",
			"security.cluster-tls.key":    "/var/lib/tiproxy-tls/tls.key",
			"security.server-tls.ca":      nil,
			"security.server-tls.key":     "/var/lib/tiproxy-server-tls/tls.key",
			"security.server-tls.skip-ca": true,
			"security.sql-tls.skip-ca":    true, // skipInternalClientCA
			"security.sql-tls.ca":         nil,
			"security.server-http-tls.ca": "/var/lib/tiproxy-tls/ca.crt",
		}},
		"IPv6": {storageCluster, map[string]any{"proxy.addr": "[::]:6000", "api.addr": "[::]:3080"}},
		"TiDB TLS skipped by clients": {`
metadata: {name: skip, annotations: {tidb.tidb.pingcap.com/skip-tls-when-connect-tidb: ""}}
spec:
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tidb: {replicas: 1, tlsClient: {enabled: true}}
  tiproxy: {replicas: 1}
`, map[string]any{"security.server-tls.cert": "/var/lib/tiproxy-server-tls/tls.crt", "security.sql-tls": nil, "security.server-http-tls": nil}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := renderedConfig(t, golden.Cluster(t, c.manifest))
			for key, want := range c.want {
				if got := lookup(cfg, key); !cmp.Equal(want, got) {
					t.Errorf("%s = %#v, want %#v", key, got, want)
				}
			}
		})
	}
}

func TestPDAddrs(t *testing.T) {
	t.Parallel()
	for want, manifest := range map[string]string{
		"basic-pd:2379":                       basicCluster,
		"other-pd:2379":                       `{metadata: {name: x}, spec: {cluster: {name: other}, tiproxy: {replicas: 1}}}`,
		"other-pd.a:2379":                     `{metadata: {name: x}, spec: {cluster: {name: other, namespace: a}, tiproxy: {replicas: 1}}}`,
		"other-pd.ns.svc.west.local:2379":     `{metadata: {name: x}, spec: {cluster: {name: other, clusterDomain: west.local}, tiproxy: {replicas: 1}}}`,
		"pd-0.example.com:2379,10.0.0.2:2379": `{metadata: {name: x}, spec: {pdAddresses: ["https://pd-0.example.com:2379/", "http://10.0.0.2:2379"], tiproxy: {replicas: 1}}}`,
	} {
		if got := pdAddrs(golden.Cluster(t, manifest)); got != want {
			t.Errorf("pdAddrs = %q, want %q", got, want)
		}
	}
}

// TestTLSVolumes: each layout mounts exactly the Secrets its config names.
func TestTLSVolumes(t *testing.T) {
	t.Parallel()
	for manifest, want := range map[string][]string{
		basicCluster:     nil,
		tlsLegacyCluster: {"secure-cluster-client-secret", "secure-tiproxy-cluster-secret", "secure-tidb-server-secret", "proxy-to-tidb"},
		tlsV1Cluster:     {"v1tls-cluster-client-secret", "v1tls-tiproxy-cluster-secret", "v1tls-tidb-server-secret"},
	} {
		sts, err := newStatefulSet(golden.Cluster(t, manifest), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := secrets(sts); !cmp.Equal(want, got) {
			t.Errorf("Secrets mounted = %v, want %v", got, want)
		}
	}
}

func secrets(sts *appsv1.StatefulSet) []string {
	var out []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
	}
	return out
}

func TestServices(t *testing.T) {
	t.Parallel()
	svcs := newServices(golden.Cluster(t, basicCluster))
	if len(svcs) != 2 || svcs[0].Name != "basic-tiproxy" || svcs[1].Name != "basic-tiproxy-peer" {
		t.Fatalf("services = %v", svcs)
	}
	if svcs[0].Spec.Type != corev1.ServiceTypeNodePort || svcs[0].Spec.PublishNotReadyAddresses {
		t.Errorf("client Service: type %s, publishNotReadyAddresses %v; want NodePort, ready pods only",
			svcs[0].Spec.Type, svcs[0].Spec.PublishNotReadyAddresses)
	}
	if svcs[1].Spec.ClusterIP != corev1.ClusterIPNone || !svcs[1].Spec.PublishNotReadyAddresses {
		t.Errorf("peer Service must be headless and publish not-ready addresses")
	}
	if lb := newServices(golden.Cluster(t, storageCluster))[0]; lb.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("spec.services type: %s, want LoadBalancer", lb.Spec.Type)
	}
}

func TestStartScript(t *testing.T) {
	t.Parallel()
	script, err := newStartScript(golden.Cluster(t, tlsV1Cluster))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ARGS="--config=/etc/proxy/proxy.toml"`,
		`--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc.cluster.local"`,
		"exec /bin/tiproxy ${ARGS}",
		`runmode="debug"`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("start script lacks %q:\n%s", want, script)
		}
	}
}
