package ticdc

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  timezone: UTC
  pd: {baseImage: pingcap/pd, replicas: 3, requests: {storage: 10Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 3, requests: {storage: 100Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 2, config: {}}
  ticdc:
    baseImage: pingcap/ticdc
    replicas: 3
`

// configTLSCluster has a config file, TLS between components, sink TLS Secrets, storage volumes, env,
// resources and the RollingUpdate config strategy.
const configTLSCluster = `
metadata: {name: cdc, namespace: db}
spec:
  version: v8.5.0
  clusterDomain: cluster.local
  tlsCluster: {enabled: true}
  configUpdateStrategy: RollingUpdate
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  ticdc:
    replicas: 2
    gracefulShutdownTimeout: 5m
    tlsClientSecretNames: [kafka-client-tls, downstream-tidb-tls]
    storageClassName: fast
    storageVolumes:
    - {name: sort-dir, storageSize: 10Gi, mountPath: /var/lib/sort}
    - {name: scratch, storageSize: 1Gi}
    env: [{name: GOMEMLIMIT, value: 3GiB}]
    requests: {cpu: "1", memory: 4Gi}
    limits: {memory: 4Gi}
    config:
      gc-ttl: 3600
      log-level: debug
      tz: Asia/Shanghai
      per-table-memory-quota: 10485760
      kv-client: {worker-concurrent: 16}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// examples/ticdc: no config, so no ConfigMap and no --config.
		"basic": basicCluster,
		// A config with more than the flags' items, TLS and sink TLS Secrets.
		"config-tls": configTLSCluster,
		// Only the items the flags carry: still no ConfigMap; the flags and TZ follow the config.
		"legacy-config": `
metadata: {name: legacy}
spec:
  version: v7.5.0
  timezone: Europe/Berlin
  pd: {replicas: 1, requests: {storage: 1Gi}}
  ticdc:
    replicas: 1
    config: {gc-ttl: 7200, log-level: warn, log-file: "/var/log/ticdc/it's.log", tz: UTC}
`,
		// v1.6 fields: securityContext, no service account token, volume
		// attributes classes on the storage volumes.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  ticdc:
    replicas: 1
    automountServiceAccountToken: false
    securityContext: {runAsNonRoot: true}
    volumeAttributesClassName: fast
    storageVolumes:
    - {name: sort-dir, storageSize: 2Gi}
    - {name: log, storageSize: 1Gi, volumeAttributesClassName: slow}
`,
		// A cluster joining another cluster's PD across Kubernetes clusters, on IPv6.
		"across-k8s": `
metadata: {name: span}
spec:
  version: v8.5.0
  acrossK8s: true
  preferIPv6: true
  cluster: {name: basic, namespace: other}
  ticdc: {replicas: 1}
`,
	}
	for name, manifest := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden.Assert(t, name, golden.Objects(t, golden.Cluster(t, manifest), New(&component.Env{}))...)
		})
	}
}

func TestConfigMapOnlyForNonLegacyItems(t *testing.T) {
	t.Parallel()
	for manifest, want := range map[string]bool{
		`{metadata: {name: a}, spec: {pd: {replicas: 1}, ticdc: {replicas: 1}}}`:                                    false,
		`{metadata: {name: a}, spec: {pd: {replicas: 1}, ticdc: {replicas: 1, config: {}}}}`:                        false,
		`{metadata: {name: a}, spec: {pd: {replicas: 1}, ticdc: {replicas: 1, config: {gc-ttl: 1, tz: UTC}}}}`:      false,
		`{metadata: {name: a}, spec: {pd: {replicas: 1}, ticdc: {replicas: 1, config: {log: {file: x}}}}}`:          true,
		`{metadata: {name: a}, spec: {pd: {replicas: 1}, ticdc: {replicas: 1, config: "sorter = {dir = \"/x\"}"}}}`: true,
	} {
		tc := golden.Cluster(t, manifest)
		data, err := newConfigData(tc)
		if err != nil {
			t.Fatal(err)
		}
		script := newStartScript(tc)
		if got := data != nil; got != want || strings.Contains(script, "--config=") != want {
			t.Errorf("%s: ConfigMap %v, --config in %q; want %v", manifest, got, script, want)
		}
	}
}

func TestStartScriptFlags(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, configTLSCluster)
	script := newStartScript(tc)
	for _, want := range []string{
		"exec /cdc server",
		"--addr=0.0.0.0:8301",
		"--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc.cluster.local:8301",
		"--gc-ttl=3600",
		"--log-file='/dev/stderr'",
		"--log-level='debug'",
		"--pd='https://cdc-pd:2379'",
		"--ca=/var/lib/ticdc-tls/ca.crt",
		"--cert=/var/lib/ticdc-tls/tls.crt",
		"--key=/var/lib/ticdc-tls/tls.key",
		"--config=/etc/ticdc/ticdc.toml",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %s:\n%s", want, script)
		}
	}
	sts, err := newStatefulSet(tc, "cdc-ticdc-abc1234")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "TZ" && e.Value != "Asia/Shanghai" {
			t.Errorf("TZ = %q, want the config's tz", e.Value)
		}
	}
}
