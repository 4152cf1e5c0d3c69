package tiflash

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
)

// basicCluster is examples' TiFlash: two replicas, one 10Gi data disk.
const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  timezone: UTC
  helper: {image: alpine:3.20}
  pd: {baseImage: pingcap/pd, replicas: 3, requests: {storage: 10Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 3, requests: {storage: 100Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 2, config: {}}
  tiflash:
    baseImage: pingcap/tiflash
    replicas: 2
    storageClaims:
    - resources: {requests: {storage: 10Gi}}
`

// multiDiskCluster has two data disks, the user's TiFlash and proxy
// configs (one as TOML, one as a table) and TLS between components.
const multiDiskCluster = `
metadata: {name: multi, namespace: db}
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {replicas: 1, requests: {storage: 10Gi}, config: {}}
  tidb: {replicas: 1, config: {}}
  tiflash:
    replicas: 3
    limits: {storage: 200Gi, memory: 16Gi}
    requests: {cpu: "4"}
    logTailer: {requests: {cpu: 10m}}
    initializer: {requests: {cpu: 50m}}
    storageClaims:
    - resources: {requests: {storage: 100Gi}}
      storageClassName: fast
    - resources: {requests: {storage: 200Gi}}
      storageClassName: slow
    config:
      config: |
        [flash]
        service_addr = "0.0.0.0:3931"
        [logger]
        level = "debug"
        log = "/data1/logs/server.log"
        [security]
        cert_allowed_cn = ["tidb"]
      proxy:
        log-level: warn
        server: {status-addr: "0.0.0.0:20293"}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"basic":      basicCluster,
		"multi-disk": multiDiskCluster,
		// A privileged TiFlash on the host network, inheriting the
		// cluster's pod settings, with its own version and pull policy.
		"privileged": `
metadata: {name: priv}
spec:
  version: v8.5.0
  hostNetwork: true
  nodeSelector: {disk: nvme}
  tolerations: [{key: dedicated, operator: Equal, value: tiflash, effect: NoSchedule}]
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tiflash:
    version: v8.5.1
    imagePullPolicy: Always
    privileged: true
    replicas: 1
    annotations: {team: olap}
    env: [{name: STORE_LABELS, value: "zone=a"}]
    storageClaims: [{resources: {requests: {storage: 50Gi}}}]
`,
		// v1.6 fields: securityContext replaces the privileged flag's, the
		// initializer and the log tailers get theirs, no service account
		// token, a volume attributes class per data disk.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tiflash:
    replicas: 1
    privileged: true
    automountServiceAccountToken: false
    securityContext: {runAsUser: 1000}
    initializer: {securityContext: {runAsNonRoot: true}}
    logTailer: {securityContext: {readOnlyRootFilesystem: true}}
    storageClaims:
    - {resources: {requests: {storage: 50Gi}}, volumeAttributesClassName: fast}
    - {resources: {requests: {storage: 10Gi}}}
`,
		// TiFlash before 5.4: the legacy config layout and both port pairs
		// until TLS picks one.
		"legacy": `
metadata: {name: old}
spec:
  version: v5.3.0
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 10Gi}}}, {resources: {requests: {storage: 10Gi}}}]}
`,
		// A cluster joining another's PD and TiDB across namespaces, over
		// IPv6, in a custom cluster domain.
		"heterogeneous": `
metadata: {name: hetero, namespace: b}
spec:
  version: v8.5.0
  preferIPv6: true
  clusterDomain: east.local
  cluster: {name: basic, namespace: a, clusterDomain: west.local}
  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 10Gi}}}]}
`,
		// Spanning Kubernetes clusters: discovery verifies the PD address.
		"across-k8s": `
metadata: {name: span}
spec:
  version: v8.5.0
  acrossK8s: true
  clusterDomain: east.local
  pd: {replicas: 1, requests: {storage: 1Gi}, config: {}}
  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 10Gi}}}]}
`,
	}
	for name, manifest := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden.Assert(t, name, anys(buildAll(t, golden.Cluster(t, manifest)))...)
		})
	}
}

// buildAll builds what the skeleton would write for TiFlash (buildObjects),
// failing the test on a builder error.
func buildAll(t *testing.T, tc *v1alpha1.TidbCluster) []metav1.Object {
	t.Helper()
	objs, err := buildObjects(tc)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return objs
}

func anys(objs []metav1.Object) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// TestBuiltObjectsPassPrecheck checks every case with the API server's
// rules: an object it would refuse stops the sync.
func TestBuiltObjectsPassPrecheck(t *testing.T) {
	t.Parallel()
	for _, manifest := range []string{basicCluster, multiDiskCluster} {
		if errs := precheck.Objects(buildAll(t, golden.Cluster(t, manifest))); len(errs) > 0 {
			t.Errorf("precheck: %v", errs.ToAggregate())
		}
	}
}

func TestServicePorts(t *testing.T) {
	t.Parallel()
	svcs := newServices(golden.Cluster(t, basicCluster))
	if len(svcs) != 1 {
		t.Fatalf("got %d Services, want the headless one only", len(svcs))
	}
	svc := svcs[0]
	if svc.Name != "basic-tiflash-peer" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %v; want basic-tiflash-peer, None, true",
			svc.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	got := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		got[p.Name] = p.Port
		if p.TargetPort.IntVal != p.Port {
			t.Errorf("port %s targets %v, want %d", p.Name, p.TargetPort, p.Port)
		}
	}
	want := map[string]int32{"tiflash": 3930, "proxy": 20170, "metrics": 8234, "proxy-metrics": 20292}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	wantSelector := map[string]string{label.NameLabelKey: "tidb-cluster", label.ManagedByLabelKey: "tidb-operator",
		label.InstanceLabelKey: "basic", label.ComponentLabelKey: "tiflash"}
	if diff := cmp.Diff(wantSelector, svc.Spec.Selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if svc.Labels[label.UsedByLabelKey] != label.UsedByPeer {
		t.Errorf("labels %v, want used-by=peer", svc.Labels)
	}
}

func TestStatefulSetLayout(t *testing.T) {
	t.Parallel()
	sts := mustStatefulSet(t, golden.Cluster(t, multiDiskCluster))
	if sts.Name != "multi-tiflash" || sts.Spec.ServiceName != "multi-tiflash-peer" || sts.Spec.Replicas != nil {
		t.Errorf("StatefulSet %s, serviceName %s, replicas %v; want multi-tiflash, multi-tiflash-peer, unset",
			sts.Name, sts.Spec.ServiceName, sts.Spec.Replicas)
	}
	main := container(t, sts.Spec.Template.Spec.Containers, "tiflash")
	ports := map[string]int32{}
	for _, p := range main.Ports {
		ports[p.Name] = p.ContainerPort
	}
	wantPorts := map[string]int32{"tiflash": 3930, "proxy": 20170, "tcp": 9000, "http": 8123, "internal": 9009, "metrics": 8234}
	if diff := cmp.Diff(wantPorts, ports); diff != "" {
		t.Errorf("container ports (-want +got):\n%s", diff)
	}
	if want := []string{"/bin/sh", "-c", "/tiflash/tiflash server --config-file /data0/config.toml"}; !slices.Equal(main.Command, want) {
		t.Errorf("command %q, want %q", main.Command, want)
	}
	if main.Image != "pingcap/tiflash:v8.5.0" {
		t.Errorf("image %s, want pingcap/tiflash:v8.5.0", main.Image)
	}
	if env := envValue(main.Env, "CAPACITY"); env != "200GB" {
		t.Errorf("CAPACITY = %q, want 200GB (limits.storage)", env)
	}
	ann := sts.Spec.Template.Annotations
	if ann[label.AnnPrometheusPort] != "8234" || ann[label.AnnTiFlashProxyPrometheusPort] != "20292" || ann[label.AnnPrometheusScrape] != "true" {
		t.Errorf("pod annotations %v, want TiFlash metrics on 8234 and the proxy's on 20292", ann)
	}
}

func TestVolumeClaimTemplates(t *testing.T) {
	t.Parallel()
	sts := mustStatefulSet(t, golden.Cluster(t, multiDiskCluster))
	type vct struct{ name, size, class string }
	var got []vct
	for _, c := range sts.Spec.VolumeClaimTemplates {
		q := c.Spec.Resources.Requests[corev1.ResourceStorage]
		got = append(got, vct{c.Name, q.String(), *c.Spec.StorageClassName})
		if c.Labels[label.ComponentLabelKey] != "tiflash" {
			t.Errorf("claim %s labels %v, want the pod labels", c.Name, c.Labels)
		}
	}
	want := []vct{{"data0", "100Gi", "fast"}, {"data1", "200Gi", "slow"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(vct{})); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	mounts := map[string]string{}
	for _, m := range container(t, sts.Spec.Template.Spec.Containers, "tiflash").VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["data0"] != "/data0" || mounts["data1"] != "/data1" || mounts["tiflash-tls"] != "/var/lib/tiflash-tls" {
		t.Errorf("tiflash mounts %v, want data0 at /data0, data1 at /data1 and the TLS secret", mounts)
	}
}

// TestInitScriptRendersOrdinal runs the init container's script with the
// paths moved into a temporary directory: the ordinal of the pod's name
// replaces every POD_NUM of both templates.
func TestInitScriptRendersOrdinal(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("the init script needs sh to be tested: %v", err)
	}
	tc := golden.Cluster(t, basicCluster)
	data, err := newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"etc", "data0"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	for key, text := range data {
		if err := os.WriteFile(filepath.Join(dir, "etc", key), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	init := container(t, mustStatefulSet(t, tc).Spec.Template.Spec.InitContainers, "init")
	script := strings.NewReplacer("/etc/tiflash/", dir+"/etc/", "/data0/", dir+"/data0/").Replace(init.Command[2])
	run := func(pod string) ([]byte, error) {
		cmd := exec.Command(sh, "-c", script)
		cmd.Env = []string{"POD_NAME=" + pod, "PATH=" + os.Getenv("PATH")}
		return cmd.CombinedOutput()
	}
	if out, err := run("basic-tiflash-12"); err != nil {
		t.Fatalf("init script: %v\n%s", err, out)
	}
	config := readFile(t, filepath.Join(dir, "data0", "config.toml"))
	proxy := readFile(t, filepath.Join(dir, "data0", "proxy.toml"))
	for _, text := range []string{config, proxy} {
		if strings.Contains(text, "POD_NUM") {
			t.Errorf("POD_NUM left in:\n%s", text)
		}
	}
	wantAddr := "basic-tiflash-12.basic-tiflash-peer.ns.svc:20170"
	if got := tomlValue(t, config, "flash", "proxy", "advertise-addr"); got != wantAddr {
		t.Errorf("flash.proxy.advertise-addr = %v, want %s", got, wantAddr)
	}
	if got := tomlValue(t, proxy, "server", "engine-addr"); got != "basic-tiflash-12.basic-tiflash-peer.ns.svc:3930" {
		t.Errorf("server.engine-addr = %v", got)
	}
	if out, err := run("no-ordinal"); err == nil {
		t.Errorf("init script accepted a pod name without ordinal:\n%s", out)
	}
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	data, err := newConfigData(golden.Cluster(t, basicCluster))
	if err != nil {
		t.Fatal(err)
	}
	common := data[ConfigTemplateKey]
	want := map[string]any{
		"tmp_path":                   "/data0/tmp",
		"storage.main.dir":           []any{"/data0/db"},
		"storage.raft.dir":           []any{"/data0/kvstore"},
		"flash.service_addr":         "0.0.0.0:3930",
		"flash.tidb_status_addr":     "basic-tidb.ns.svc:10080",
		"flash.proxy.addr":           "0.0.0.0:20170",
		"flash.proxy.advertise-addr": "basic-tiflash-POD_NUM.basic-tiflash-peer.ns.svc:20170",
		"flash.proxy.data-dir":       "/data0/proxy",
		"flash.proxy.config":         "/data0/proxy.toml",
		"flash.flash_cluster.log":    "/data0/logs/flash_cluster_manager.log",
		"logger.log":                 "/data0/logs/server.log",
		"logger.errorlog":            "/data0/logs/error.log",
		"raft.pd_addr":               "basic-pd.ns.svc:2379",
	}
	for key, v := range want {
		if got := tomlValue(t, common, strings.Split(key, ".")...); !cmp.Equal(got, v) {
			t.Errorf("%s = %v, want %v", key, got, v)
		}
	}
	for _, absent := range []string{"tcp_port", "http_port", "security"} {
		if got := tomlValue(t, common, absent); got != nil {
			t.Errorf("%s = %v, want none (TiFlash 8.5 without TLS)", absent, got)
		}
	}
	if got := tomlValue(t, data[ProxyTemplateKey], "server", "status-addr"); got != "0.0.0.0:20292" {
		t.Errorf("proxy server.status-addr = %v", got)
	}
}

func TestUserConfigOverridesDefaults(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, multiDiskCluster)
	before := tc.DeepCopy()
	data, err := newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tc); diff != "" {
		t.Fatalf("newConfigData changed the cluster:\n%s", diff)
	}
	common, proxy := data[ConfigTemplateKey], data[ProxyTemplateKey]
	checks := []struct {
		text string
		key  []string
		want any
	}{
		{common, []string{"flash", "service_addr"}, "0.0.0.0:3931"},                                        // user over default
		{common, []string{"logger", "level"}, "debug"},                                                     // user only
		{common, []string{"logger", "errorlog"}, "/data0/logs/error.log"},                                  // default beside the user's table
		{common, []string{"storage", "main", "dir"}, []any{"/data0/db", "/data1/db"}},                      // one per claim
		{common, []string{"security", "ca_path"}, "/var/lib/tiflash-tls/ca.crt"},                           // TLS forced
		{common, []string{"security", "cert_allowed_cn"}, []any{"tidb"}},                                   // user's, kept
		{proxy, []string{"log-level"}, "warn"},                                                             // user over default
		{proxy, []string{"server", "status-addr"}, "0.0.0.0:20293"},                                        // user over default
		{proxy, []string{"server", "engine-addr"}, "multi-tiflash-POD_NUM.multi-tiflash-peer.db.svc:3930"}, // default
		{proxy, []string{"security", "key-path"}, "/var/lib/tiflash-tls/tls.key"},                          // TLS forced
		{proxy, []string{"security", "cert-allowed-cn"}, []any{"tidb"}},                                    // inherited
	}
	for _, c := range checks {
		if got := tomlValue(t, c.text, c.key...); !cmp.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", strings.Join(c.key, "."), got, c.want)
		}
	}
	// A user's data path replaces the default data directories.
	tc.Spec.TiFlash.Config = v1alpha1.NewConfig(map[string]any{"config": `path = "/data0/custom"`})
	data, err = newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	if got := tomlValue(t, data[ConfigTemplateKey], "storage", "main"); got != nil {
		t.Errorf("storage.main = %v, want none when the user sets path", got)
	}
}

func TestTLSPorts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		version string
		tls     bool
		want    []string
	}{
		{"v8.5.0", false, nil},
		{"v8.5.0", true, nil},
		{"v6.5.0", false, []string{"http_port", "tcp_port"}},
		{"v6.5.0", true, []string{"https_port", "tcp_port_secure"}},
		{"v5.3.0", false, []string{"http_port", "interserver_http_port", "tcp_port"}},
		{"v5.3.0", true, []string{"https_port", "interserver_http_port", "tcp_port_secure"}},
	}
	for _, c := range cases {
		tc := golden.Cluster(t, basicCluster)
		tc.Spec.Version = c.version
		tc.Spec.TLSCluster.Enabled = c.tls
		data, err := newConfigData(tc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, key := range []string{"http_port", "https_port", "interserver_http_port", "tcp_port", "tcp_port_secure"} {
			if tomlValue(t, data[ConfigTemplateKey], key) != nil {
				got = append(got, key)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s, TLS %v: ports %v, want %v", c.version, c.tls, got, c.want)
		}
	}
}

func TestConfigAsTOMLStringOrMap(t *testing.T) {
	t.Parallel()
	asString := golden.Cluster(t, multiDiskCluster)
	asMap := golden.Cluster(t, multiDiskCluster)
	asMap.Spec.TiFlash.Config = v1alpha1.NewConfig(map[string]any{
		"config": map[string]any{
			"flash":    map[string]any{"service_addr": "0.0.0.0:3931"},
			"logger":   map[string]any{"level": "debug", "log": "/data1/logs/server.log"},
			"security": map[string]any{"cert_allowed_cn": []any{"tidb"}},
		},
		"proxy": `log-level = "warn"
[server]
status-addr = "0.0.0.0:20293"`,
	})
	a, errA := newConfigData(asString)
	b, errB := newConfigData(asMap)
	if errA != nil || errB != nil {
		t.Fatalf("config data: %v, %v", errA, errB)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("TOML string and map configs render differently (-string +map):\n%s", diff)
	}
}

func TestLogTailers(t *testing.T) {
	t.Parallel()
	sts := mustStatefulSet(t, golden.Cluster(t, multiDiskCluster))
	want := map[string][2]string{ // container: file, volume
		"serverlog":  {"/data1/logs/server.log", "data1"},
		"errorlog":   {"/data0/logs/error.log", "data0"},
		"clusterlog": {"/data0/logs/flash_cluster_manager.log", "data0"},
	}
	for name, w := range want {
		c := container(t, sts.Spec.Template.Spec.Containers, name)
		if file := c.Command[len(c.Command)-1]; file != w[0] {
			t.Errorf("%s follows %s, want %s", name, file, w[0])
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != w[1] {
			t.Errorf("%s mounts %v, want %s", name, c.VolumeMounts, w[1])
		}
		if c.Image != "busybox:1.26.2" || c.Resources.Requests.Cpu().String() != "10m" {
			t.Errorf("%s: image %s, resources %v; want the helper image and logTailer's resources", name, c.Image, c.Resources)
		}
	}
}

func TestLogFileOutsideVolumes(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, basicCluster)
	tc.Spec.TiFlash.Config = v1alpha1.NewConfig(map[string]any{"config": map[string]any{
		"logger": map[string]any{"errorlog": "/var/log/tiflash/error.log"}}})
	if _, err := newStatefulSet(tc, "cm"); err == nil || !strings.Contains(err.Error(), "/var/log/tiflash/error.log") {
		t.Errorf("newStatefulSet error = %v, want one naming the log file", err)
	}
	// Under an additional volume mount, the sidecar mounts that volume.
	tc.Spec.TiFlash.AdditionalVolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/var/log/tiflash"}}
	tc.Spec.TiFlash.AdditionalVolumes = []corev1.Volume{{Name: "logs"}}
	sts, err := newStatefulSet(tc, "cm")
	if err != nil {
		t.Fatal(err)
	}
	if m := container(t, sts.Spec.Template.Spec.Containers, "errorlog").VolumeMounts; len(m) != 1 || m[0].Name != "logs" {
		t.Errorf("errorlog mounts %v, want the additional volume logs", m)
	}
}

func TestPrivileged(t *testing.T) {
	t.Parallel()
	for _, privileged := range []bool{false, true} {
		tc := golden.Cluster(t, basicCluster)
		tc.Spec.TiFlash.Privileged = &privileged
		sc := container(t, mustStatefulSet(t, tc).Spec.Template.Spec.Containers, "tiflash").SecurityContext
		if sc == nil || sc.Privileged == nil || *sc.Privileged != privileged {
			t.Errorf("privileged %v: securityContext %v", privileged, sc)
		}
	}
}

func TestAddresses(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, manifest, pd, tidb string }{
		{"own PD and TiDB", `{metadata: {name: a}, spec: {pd: {replicas: 1}, tiflash: {replicas: 1}}}`,
			"a-pd.ns.svc:2379", "a-tidb.ns.svc:10080"},
		{"referenced cluster", `{metadata: {name: a}, spec: {cluster: {name: b}, tiflash: {replicas: 1}}}`,
			"b-pd.ns.svc:2379", "b-tidb.ns.svc:10080"},
		{"referenced cluster elsewhere", `{metadata: {name: a}, spec: {cluster: {name: b, namespace: x, clusterDomain: c.local}, tiflash: {replicas: 1}}}`,
			"b-pd.x.svc.c.local:2379", "b-tidb.x.svc.c.local:10080"},
		{"across Kubernetes clusters", `{metadata: {name: a}, spec: {acrossK8s: true, cluster: {name: b, namespace: x}, tiflash: {replicas: 1}}}`,
			"PD_ADDR", "b-tidb-peer.x.svc:10080"},
		{"external PD", `{metadata: {name: a}, spec: {pdAddresses: ["http://x:2379", "https://y:2379"], tidb: {replicas: 1}, tiflash: {replicas: 1}}}`,
			"x:2379,y:2379", "a-tidb.ns.svc:10080"},
	}
	for _, c := range cases {
		tc := golden.Cluster(t, c.manifest)
		if got := pdAddr(tc); got != c.pd {
			t.Errorf("%s: pd_addr = %q, want %q", c.name, got, c.pd)
		}
		if got := tidbStatusAddr(tc); got != c.tidb {
			t.Errorf("%s: tidb_status_addr = %q, want %q", c.name, got, c.tidb)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{"v5.4.0": true, "v5.3.9": false, "5.4.0": true, "v6.0.0": true, "v4.9.0": false,
		"v5.10.0": true, "v5.4.0-alpha": true, "v5.3-beta": false, "latest": true, "nightly": true, "": true}
	for version, want := range cases {
		if got := versionAtLeast(version, 5, 4); got != want {
			t.Errorf("versionAtLeast(%q, 5, 4) = %v, want %v", version, got, want)
		}
	}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	cases := map[string]string{"": "0", "100Gi": "100GB", "1536Mi": "1536MB", "1G": "953MB"}
	for limit, want := range cases {
		tc := golden.Cluster(t, basicCluster)
		if limit != "" {
			tc.Spec.TiFlash.Limits = corev1.ResourceList{corev1.ResourceStorage: mustQuantity(t, limit)}
		}
		if got := envValue(container(t, mustStatefulSet(t, tc).Spec.Template.Spec.Containers, "tiflash").Env, "CAPACITY"); got != want {
			t.Errorf("limits.storage %q: CAPACITY = %q, want %q", limit, got, want)
		}
	}
}

func TestBadUserConfig(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]any{
		"not TOML":          {"config": "[flash"},
		"not a table":       {"proxy": int64(7)},
		"log not a string":  {"config": map[string]any{"logger": map[string]any{"log": int64(1)}}},
		"security a string": {"config": map[string]any{"security": "on"}},
	}
	for name, items := range cases {
		tc := golden.Cluster(t, multiDiskCluster)
		tc.Spec.TiFlash.Config = v1alpha1.NewConfig(items)
		_, errData := newConfigData(tc)
		_, errSts := newStatefulSet(tc, "cm")
		if errData == nil && errSts == nil {
			t.Errorf("%s: built without error", name)
		}
	}
}

func mustStatefulSet(t *testing.T, tc *v1alpha1.TidbCluster) *appsv1.StatefulSet {
	t.Helper()
	sts, err := newStatefulSet(tc, "cm")
	if err != nil {
		t.Fatalf("newStatefulSet: %v", err)
	}
	return sts
}

func container(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tomlValue parses text and returns the value at the key path, or nil.
func tomlValue(t *testing.T, text string, path ...string) any {
	t.Helper()
	var v any = map[string]any{}
	if err := toml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("rendered config is not TOML: %v\n%s", err, text)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func mustQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
