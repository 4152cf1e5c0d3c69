package tikv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  timezone: UTC
  configUpdateStrategy: RollingUpdate
  enableDynamicConfiguration: true
  helper: {image: alpine:3.20}
  pd:
    baseImage: pingcap/pd
    replicas: 3
    requests: {storage: 10Gi}
    config: {}
  tikv:
    baseImage: pingcap/tikv
    replicas: 3
    maxFailoverCount: 0
    evictLeaderTimeout: 1m
    requests: {storage: 100Gi}
    config:
      storage:
        reserve-space: 0MB
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// examples/basic: the default layout.
		"basic": basicCluster,
		// TLS between components, with the cluster client certificate mounted.
		"tls": `
metadata: {name: secure, namespace: db}
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv:
    replicas: 1
    mountClusterClientSecret: true
    requests: {storage: 10Gi}
    config: {}
`,
		// Storage volumes holding the logs, tailed by sidecars; capacity from
		// limits.storage; pod settings inherited from the cluster.
		"storage-volumes": `
metadata: {name: vols}
spec:
  version: v7.5.1
  nodeSelector: {disk: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: tikv, effect: NoSchedule}]
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv:
    replicas: 3
    storageClassName: fast
    requests: {storage: 100Gi, cpu: "2"}
    limits: {storage: 1536Mi, memory: 8Gi}
    separateRocksDBLog: true
    separateRaftLog: true
    raftLogVolumeName: raft
    logTailer: {requests: {cpu: 10m}}
    storageVolumes:
    - {name: raft, storageSize: 20Gi, mountPath: /var/lib/raft}
    - {name: wal, storageSize: 5Gi, storageClassName: slow}
    config: {}
`,
		// v1.6 fields: securityContext replaces the privileged flag's, the
		// log tailers get theirs, no service account token, and volume
		// attributes classes on the PVC templates.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv:
    replicas: 1
    privileged: true
    automountServiceAccountToken: false
    securityContext: {runAsUser: 1000, runAsNonRoot: true, readOnlyRootFilesystem: true}
    separateRocksDBLog: true
    logTailer: {securityContext: {runAsNonRoot: true}}
    requests: {storage: 10Gi}
    volumeAttributesClassName: fast
    storageVolumes:
    - {name: raft, storageSize: 2Gi}
    - {name: wal, storageSize: 1Gi, volumeAttributesClassName: slow}
    config: {}
`,
		// An old TiKV with every per-pod option: privileged, named status
		// port, readiness probe, IPv6, a cluster domain, a data sub-directory,
		// numeric-string durations and a TOML string config.
		"custom": `
metadata: {name: custom}
spec:
  version: v4.0.9
  clusterDomain: cluster.local
  preferIPv6: true
  hostNetwork: true
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv:
    replicas: 1
    privileged: true
    enableNamedStatusPort: true
    separateRocksDBLog: true
    dataSubDir: data
    readinessProbe: {initialDelaySeconds: 5, periodSeconds: 3}
    limits: {storage: 2Gi}
    requests: {storage: 10Gi}
    env: [{name: STORE_LABELS, value: "zone=a"}]
    config: |
      [pessimistic-txn]
      wait-for-lock-timeout = "3000"
      wake-up-delay-duration = "20ms"
      [raftstore]
      sync-log = true
`,
		// No spec.tikv.config: no ConfigMap, nothing mounted from one.
		"no-config": `
metadata: {name: legacy}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
`,
		// A heterogeneous cluster joining another cluster's PD across namespaces.
		"heterogeneous": `
metadata: {name: hetero, namespace: b}
spec:
  version: v8.5.0
  cluster: {name: basic, namespace: a}
  tlsCluster: {enabled: true}
  tikv: {replicas: 1, requests: {storage: 10Gi}, config: {}}
`,
		// Spanning Kubernetes clusters: discovery verifies the PD address.
		"across-k8s": `
metadata: {name: span}
spec:
  version: v8.5.0
  acrossK8s: true
  clusterDomain: east.local
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {replicas: 1, requests: {storage: 10Gi}, config: {}}
`,
	}
	for name, manifest := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden.Assert(t, name, golden.Objects(t, golden.Cluster(t, manifest), New(&component.Env{}))...)
		})
	}
}

// The config strategy decides the ConfigMap's name, never what the builders
// produce: switching it must not change the pod template by itself.
func TestBuildersIgnoreConfigUpdateStrategy(t *testing.T) {
	t.Parallel()
	inPlace := golden.Cluster(t, basicCluster)
	inPlace.Spec.ConfigUpdateStrategy = v1alpha1.ConfigUpdateStrategyInPlace
	rolling := golden.Cluster(t, basicCluster)
	builders := func(tc *v1alpha1.TidbCluster) []any {
		c := New(&component.Env{})
		data, err := c.ConfigData(tc)
		if err != nil {
			t.Fatal(err)
		}
		sts, err := c.StatefulSet(tc, "cm")
		if err != nil {
			t.Fatal(err)
		}
		return []any{c.Services(tc), data, sts}
	}
	if diff := cmp.Diff(builders(inPlace), builders(rolling)); diff != "" {
		t.Errorf("InPlace and RollingUpdate build differently (-InPlace +RollingUpdate):\n%s", diff)
	}
}

func TestConfigAsTOMLStringOrMap(t *testing.T) {
	t.Parallel()
	asMap := golden.Cluster(t, basicCluster)
	asString := golden.Cluster(t, strings.Replace(basicCluster, `    config:
      storage:
        reserve-space: 0MB
`, `    config: |
      [storage]
      reserve-space = "0MB"
`, 1))
	a, errA := newConfigData(asMap)
	b, errB := newConfigData(asString)
	if errA != nil || errB != nil {
		t.Fatalf("config data: %v, %v", errA, errB)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("map and TOML string configs render differently (-map +string):\n%s", diff)
	}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	cases := map[string]string{"": "0", "100Gi": "100GB", "1536Mi": "1536MB", "1G": "953MB", "1.5Gi": "1536MB"}
	for limit, want := range cases {
		limits := corev1.ResourceList{}
		if limit != "" {
			limits[corev1.ResourceStorage] = resource.MustParse(limit)
		}
		if got := Capacity(limits); got != want {
			t.Errorf("Capacity(%q) = %q, want %q", limit, got, want)
		}
	}
}

func TestPDAddress(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, manifest, want string }{
		{"own PD", `{metadata: {name: a}, spec: {pd: {replicas: 1}}}`, "http://${CLUSTER_NAME}-pd:2379"},
		{"own PD with TLS", `{metadata: {name: a}, spec: {tlsCluster: {enabled: true}, pd: {replicas: 1}}}`, "https://${CLUSTER_NAME}-pd:2379"},
		{"referenced cluster, same namespace", `{metadata: {name: a}, spec: {cluster: {name: b}}}`, "http://b-pd:2379"},
		{"referenced cluster, other namespace", `{metadata: {name: a}, spec: {cluster: {name: b, namespace: x}}}`, "http://b-pd.x:2379"},
		{"referenced cluster, other domain", `{metadata: {name: a}, spec: {cluster: {name: b, clusterDomain: c.local}}}`, "http://b-pd.ns.svc.c.local:2379"},
		{"external PD", `{metadata: {name: a}, spec: {pdAddresses: ["http://x:2379", "http://y:2379"]}}`, "http://x:2379,http://y:2379"},
	}
	for _, c := range cases {
		if got := PDAddress(golden.Cluster(t, c.manifest)); got != c.want {
			t.Errorf("%s: PDAddress = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStartScriptQuotesAddresses(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, "{metadata: {name: a}, spec: {pdAddresses: ['http://x:2379/$(reboot)\"'], tikv: {replicas: 1, config: {}}}}")
	script, err := newStartScript(tc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `PD="http://x:2379/\$(reboot)\""`; !strings.Contains(script, want) {
		t.Errorf("script does not contain %s:\n%s", want, script)
	}
}

func TestLogTailerUnknownVolume(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, `{metadata: {name: a}, spec: {tikv: {replicas: 1, separateRaftLog: true, raftLogVolumeName: nope}}}`)
	if _, err := newStatefulSet(tc, ""); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("newStatefulSet error = %v, want one naming the missing volume", err)
	}
}
