package tidb

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  timezone: UTC
  configUpdateStrategy: RollingUpdate
  helper: {image: alpine:3.20}
  pd: {baseImage: pingcap/pd, replicas: 3, requests: {storage: 10Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 3, requests: {storage: 100Gi}, config: {}}
  tidb:
    baseImage: pingcap/tidb
    replicas: 2
    maxFailoverCount: 0
    service: {type: ClusterIP}
    config: {}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// examples/basic: the default layout.
		"basic": basicCluster,
		// TLS between components and for MySQL clients, probed by command.
		"tls": `
metadata: {name: secure, namespace: db}
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {replicas: 1, requests: {storage: 10Gi}, config: {}}
  tidb:
    replicas: 1
    tlsClient: {enabled: true}
    readinessProbe: {type: command, periodSeconds: 5}
    config:
      log: {level: warn}
`,
		// v1.6 fields: the main container's and the slow-log tailer's
		// securityContext, no service account token, volume attributes
		// classes on the storage volumes.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    automountServiceAccountToken: false
    securityContext: {runAsNonRoot: true}
    slowLogTailer: {securityContext: {readOnlyRootFilesystem: true}}
    storageClassName: local
    volumeAttributesClassName: fast
    storageVolumes:
    - {name: log, storageSize: 2Gi}
    - {name: tmp, storageSize: 1Gi, volumeAttributesClassName: slow}
`,
		// A NodePort Service with fixed node ports, a custom MySQL port and
		// additional ports.
		"nodeport": `
metadata: {name: np}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 2
    service:
      type: NodePort
      port: 3306
      mysqlNodePort: 30306
      statusNodePort: 30080
      externalTrafficPolicy: Local
      annotations: {team: db}
      additionalPorts:
      - {name: proxy-protocol, port: 4001, targetPort: 4001, protocol: TCP}
`,
		// A LoadBalancer without the status port, the client TLS secret
		// without client authentication, a TOML string config.
		"loadbalancer": `
metadata: {name: lb}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    separateSlowLog: false
    tlsClient: {enabled: true, disableClientAuthn: true}
    service:
      type: LoadBalancer
      exposeStatus: false
      portName: mysql
      loadBalancerIP: 10.0.0.9
      loadBalancerSourceRanges: [10.0.0.0/8]
      externalTrafficPolicy: Cluster
    config: |
      [performance]
      max-procs = 4
`,
		// Storage volumes (one holding the slow log), binlog, plugins,
		// arguments, a lifecycle hook, IPv6 and a cluster domain.
		"storage-volumes": `
metadata: {name: vols}
spec:
  version: v8.5.0
  clusterDomain: cluster.local
  preferIPv6: true
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    binlogEnabled: true
    plugins: [audit-1, whitelist-1]
    arguments: ["--log-general=/var/log/tidb/general.log", "--token-limit=1000"]
    storageClassName: fast
    slowLogVolumeName: log
    slowLogTailer: {image: busybox:1.36, requests: {cpu: 10m}}
    storageVolumes:
    - {name: log, storageSize: 2Gi, mountPath: /var/log/tidb}
    - {name: tmp, storageSize: 5Gi}
    lifecycle:
      preStop:
        exec: {command: [sleep, "10"]}
    requests: {cpu: "1"}
    limits: {memory: 4Gi}
    config: {}
`,
		// Bootstrap SQL and a random root password (examples/initialize and
		// basic-random-password): no config in the spec, yet a config file
		// naming the mounted SQL as initialize-sql-file.
		"bootstrap-sql": `
metadata: {name: init}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    service: {type: ClusterIP}
    initializer: {createPassword: true}
    bootstrapSQLConfigMapName: init-bootstrap-sql
`,
		// Token-based authentication: the JWKS Secret mounted, its file
		// named by security.auth-token-jwks.
		"token-auth": `
metadata: {name: jwt}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    tokenBasedAuthEnabled: true
    config: {}
`,
		// A customized startup probe next to the sysctl init container: the
		// sysctls first, then the copy of the probe binary into the
		// emptyDir the startup probe runs it from, then the user's.
		"startup-probe": `
metadata: {name: probe}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    annotations: {tidb.pingcap.com/sysctl-init: "true"}
    podSecurityContext:
      sysctls: [{name: net.core.somaxconn, value: "32768"}]
    initContainers: [{name: user-init, image: busybox, command: ["true"]}]
    customizedStartupProbe:
      image: example.com/tidb-probe:v1
      binaryName: /bin/tidb-probe
      args: ["--port=4000", "--user=probe"]
      periodSeconds: 5
      failureThreshold: 60
`,
		// The slow-log tailer as a native sidecar: the last init container,
		// restartPolicy Always; tidb the only regular container.
		"native-sidecar": `
metadata: {name: sidecar}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 10Gi}}
  tidb:
    replicas: 1
    initContainers: [{name: user-init, image: busybox, command: ["true"]}]
    slowLogTailer: {useSidecar: true, requests: {cpu: 10m}}
`,
		// No service, no config, heterogeneous: only the peer Service.
		"heterogeneous": `
metadata: {name: hetero}
spec:
  version: v8.5.0
  cluster: {name: basic}
  tidb: {replicas: 1}
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
	asMap := reparse(t, golden.Cluster(t, basicCluster), "{log: {level: warn, file: {max-days: 7}}, performance: {max-procs: 4}}")
	asString := reparse(t, golden.Cluster(t, basicCluster),
		`"[log]\nlevel = \"warn\"\n[log.file]\nmax-days = 7\n[performance]\nmax-procs = 4\n"`)
	a, errA := newConfigData(asMap)
	b, errB := newConfigData(asString)
	if errA != nil || errB != nil {
		t.Fatalf("config data: %v, %v", errA, errB)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("map and TOML string configs render differently (-map +string):\n%s", diff)
	}
	if !strings.Contains(a[component.ConfigFileKey], "max-backups = 3") {
		t.Errorf("the defaulted log.file.max-backups is missing:\n%s", a[component.ConfigFileKey])
	}
}

// reparse sets spec.tidb.config from YAML and applies the defaults again.
func reparse(t *testing.T, tc *v1alpha1.TidbCluster, config string) *v1alpha1.TidbCluster {
	t.Helper()
	cfg := &v1alpha1.Config{}
	if err := yaml.Unmarshal([]byte(config), cfg); err != nil {
		t.Fatalf("parse config: %v", err)
	}
	tc.Spec.TiDB.Config = cfg
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

func TestNoClientServiceWithoutSpec(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, basicCluster)
	tc.Spec.TiDB.Service = nil
	svcs := newServices(tc)
	if len(svcs) != 1 || svcs[0].Name != "basic-tidb-peer" {
		t.Errorf("Services without spec.tidb.service = %v, want only basic-tidb-peer", svcs)
	}
}

func TestStartScriptQuotesArguments(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, `{metadata: {name: a}, spec: {tidb: {replicas: 1, arguments: ["--x=it's $(id)"], config: {}}}}`)
	script, err := newStartScript(tc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `exec /tidb-server ${ARGS} '--x=it'\''s $(id)'`; !strings.Contains(script, want) {
		t.Errorf("script does not contain %s:\n%s", want, script)
	}
}

func TestSlowLogUnknownVolume(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, `{metadata: {name: a}, spec: {tidb: {replicas: 1, slowLogVolumeName: nope}}}`)
	if _, err := newStatefulSet(tc, ""); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("newStatefulSet error = %v, want one naming the missing volume", err)
	}
}

func TestSlowLogReusesAVolumeMountedAtTheLogDir(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, basicCluster)
	tc.Spec.TiDB.StorageVolumes = []v1alpha1.StorageVolume{{Name: "log", StorageSize: "1Gi", MountPath: "/var/log/tidb"}}
	sts, err := New(&component.Env{}).StatefulSet(tc, "cm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		seen := map[string]bool{}
		for _, m := range c.VolumeMounts {
			if seen[m.MountPath] {
				t.Errorf("container %s mounts %s twice", c.Name, m.MountPath)
			}
			seen[m.MountPath] = true
		}
	}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == "slowlog" {
			t.Error("no emptyDir is needed when a storage volume holds the log directory")
		}
	}
}
