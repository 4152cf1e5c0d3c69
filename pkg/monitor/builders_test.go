package monitor

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func parseMonitor(t *testing.T, manifest string) *v1alpha1.TidbMonitor {
	t.Helper()
	tm := &v1alpha1.TidbMonitor{}
	if err := yaml.UnmarshalStrict([]byte(manifest), tm); err != nil {
		t.Fatalf("parse monitor: %v", err)
	}
	if tm.Namespace == "" {
		tm.Namespace = "ns"
	}
	return tm
}

func parseCluster(t *testing.T, manifest string) *v1alpha1.TidbCluster {
	t.Helper()
	tc := &v1alpha1.TidbCluster{}
	if err := yaml.UnmarshalStrict([]byte(manifest), tc); err != nil {
		t.Fatalf("parse cluster: %v", err)
	}
	return tc
}

const basicMonitor = `
metadata: {name: basic}
spec:
  clusters: [{name: basic}]
  prometheus: {baseImage: prom/prometheus, version: v2.27.1}
  grafana: {baseImage: grafana/grafana, version: 7.5.11}
  initializer: {baseImage: pingcap/tidb-monitor-initializer, version: v8.5.7}
  reloader: {baseImage: pingcap/tidb-monitor-reloader, version: v1.0.1}
  imagePullPolicy: IfNotPresent
`

const basicCluster = `
metadata: {name: basic, namespace: ns}
spec:
  pd: {replicas: 1}
  tikv: {replicas: 1}
  tidb: {replicas: 1}
`

const tlsCluster = `
metadata: {name: secure, namespace: other}
spec:
  tlsCluster: {enabled: true}
  pd: {replicas: 3}
  tikv: {replicas: 3}
  tidb: {replicas: 2}
  tiflash: {replicas: 1}
  ticdc: {replicas: 1}
  pump: {replicas: 1}
  tiproxy: {replicas: 1}
`

const fullMonitor = `
metadata: {name: tm}
spec:
  clusters: [{name: basic}, {name: secure, namespace: other}]
  dm: {clusters: [{name: dm}]}
  shards: 2
  replicas: 2
  persistent: true
  storage: 5Gi
  storageClassName: standard
  pvReclaimPolicy: Delete
  kubePrometheusURL: http://kube-prometheus:9090
  externalLabels: {region: us-east-1}
  replicaExternalLabelName: replica
  alertmanagerURL: alertmanager:9093
  nodeSelector: {disk: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: monitor, effect: NoSchedule}]
  podSecurityContext: {runAsUser: 1000, fsGroup: 2000}
  prometheus:
    baseImage: prom/prometheus
    version: v2.27.1
    retentionTime: 30d
    reserveDays: 12
    logLevel: debug
    service: {type: NodePort}
    config:
      ruleConfigRef: {name: extra-rules}
      commandOptions: ["--query.timeout=1m"]
    remoteWrite:
      - url: http://remote:8080/api/v1/write
        remoteTimeout: 30s
        writeRelabelConfigs: [{sourceLabels: [__name__], regex: "go_.*", action: drop}]
        queueConfig: {capacity: 1000, batchSendDeadline: 5000000000, maxRetries: 3}
        basicAuth: {username: {name: rw, key: user}, password: {name: rw, key: password}}
  grafana:
    baseImage: grafana/grafana
    version: 7.5.11
    usernameSecret: {name: grafana-admin, key: username}
    passwordSecret: {name: grafana-admin, key: password}
    envs: {GF_AUTH_ANONYMOUS_ENABLED: "true"}
  thanos: {baseImage: thanosio/thanos, version: v0.17.2, objectStorageConfig: {name: thanos-objstore, key: objstore.yml}}
  initializer: {baseImage: pingcap/tidb-monitor-initializer, version: v8.5.7}
  reloader: {baseImage: pingcap/tidb-monitor-reloader, version: v1.0.1}
`

func objects(t *testing.T, tm *v1alpha1.TidbMonitor, targets []Target) []any {
	t.Helper()
	cm, err := NewConfigMap(tm, targets)
	if err != nil {
		t.Fatal(err)
	}
	out := []any{NewServiceAccount(tm), NewRole(tm), NewRoleBinding(tm), cm, NewGrafanaConfigMap(tm)}
	for _, s := range NewServices(tm) {
		out = append(out, s)
	}
	sts, err := NewStatefulSets(tm, targets)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		out = append(out, s)
	}
	return out
}

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	t.Run("basic", func(t *testing.T) {
		t.Parallel()
		tm := parseMonitor(t, basicMonitor)
		targets := []Target{TargetOf(tm.Spec.Clusters[0], tm.Namespace, parseCluster(t, basicCluster))}
		golden.Assert(t, "basic", objects(t, tm, targets)...)
	})
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		tm := parseMonitor(t, fullMonitor)
		targets := []Target{
			TargetOf(tm.Spec.Clusters[0], tm.Namespace, parseCluster(t, basicCluster)),
			TargetOf(tm.Spec.Clusters[1], tm.Namespace, parseCluster(t, tlsCluster)),
			DMTarget(tm.Spec.DM.Clusters[0], tm.Namespace),
		}
		golden.Assert(t, "full", objects(t, tm, targets)...)
	})
}

func TestObjectNamesAndPorts(t *testing.T) {
	t.Parallel()
	tm := parseMonitor(t, fullMonitor)
	sts, err := NewStatefulSets(tm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 || sts[0].Name != "tm-monitor-shard-0" || sts[1].Name != "tm-monitor-shard-1" {
		t.Fatalf("shard StatefulSets: %v", stsNames(sts))
	}
	ports := map[string]int32{}
	for _, c := range sts[0].Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			ports[c.Name+"/"+p.Name] = p.ContainerPort
		}
	}
	want := map[string]int32{"prometheus/prometheus": 9090, "grafana/grafana": 3000, "reloader/reloader": 9089,
		"prometheus-config-reloader/config-reloader": 9088, "thanos-sidecar/thanos-grpc": 10901, "thanos-sidecar/thanos-http": 10902}
	for k, v := range want {
		if ports[k] != v {
			t.Errorf("port %s = %d, want %d (all: %v)", k, ports[k], v, ports)
		}
	}
	if got := sts[0].Spec.Template.Spec.InitContainers[0].Image; got != "pingcap/tidb-monitor-initializer:v8.5.7" {
		t.Errorf("initializer image %s", got)
	}
	svcs := NewServices(tm)
	if len(svcs) != 3 || svcs[0].Name != "tm-prometheus" || svcs[1].Name != "tm-grafana" || svcs[2].Name != "tm-monitor-reloader" {
		t.Errorf("services: %v %v %v", svcs[0].Name, svcs[1].Name, svcs[2].Name)
	}
	if Retention(tm) != "30d" {
		t.Errorf("retentionTime must win over reserveDays: %s", Retention(tm))
	}
	tm.Spec.Prometheus.RetentionTime = nil
	if Retention(tm) != "12d" {
		t.Errorf("reserveDays: %s", Retention(tm))
	}
}

func stsNames[T interface{ GetName() string }](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestShardsSplitTargetsByHash(t *testing.T) {
	t.Parallel()
	tm := parseMonitor(t, fullMonitor)
	targets := []Target{{Namespace: "ns", Name: "basic", Components: []string{"pd"}}}
	for i := int32(0); i < 2; i++ {
		cfg := NewPromConfig(tm, targets, i, 2)
		rs := cfg.ScrapeConfigs[0].RelabelConfigs
		last, hash := rs[len(rs)-1], rs[len(rs)-2]
		if hash.Action != "hashmod" || hash.Modulus != 2 || last.Action != "keep" || last.Regex != string(rune('0'+i)) {
			t.Errorf("shard %d: relabel tail %+v %+v", i, hash, last)
		}
	}
	if rs := NewPromConfig(tm, targets, 0, 1).ScrapeConfigs[0].RelabelConfigs; rs[len(rs)-1].Action == "keep" && rs[len(rs)-1].SourceLabels[0] == "__tmp_hash" {
		t.Error("one shard must keep every target")
	}
}

func TestUnsupportedNamesWhatIsNotActedOn(t *testing.T) {
	t.Parallel()
	got := strings.Join(Unsupported(parseMonitor(t, fullMonitor)), "\n")
	for _, want := range []string{"spec.kubePrometheusURL", "remoteWrite.basicAuth", "queueConfig.maxRetries", "spec.clusters[1].namespace other"} {
		if !strings.Contains(got, want) {
			t.Errorf("Unsupported does not name %s:\n%s", want, got)
		}
	}
	if u := Unsupported(parseMonitor(t, basicMonitor)); len(u) != 0 {
		t.Errorf("basic monitor: unexpected %v", u)
	}
}

// TestAlertRulesWithAlertmanagerOrEnableAlertRules: the bundled rules are
// loaded only with an Alertmanager or enableAlertRules, as v1.6 does.
func TestAlertRulesWithAlertmanagerOrEnableAlertRules(t *testing.T) {
	t.Parallel()
	url := "alertmanager:9093"
	for _, c := range []struct {
		name  string
		set   func(*v1alpha1.TidbMonitor)
		rules bool
	}{
		{"neither", func(*v1alpha1.TidbMonitor) {}, false},
		{"enableAlertRules", func(tm *v1alpha1.TidbMonitor) { tm.Spec.EnableAlertRules = true }, true},
		{"alertmanagerURL", func(tm *v1alpha1.TidbMonitor) { tm.Spec.AlertmanagerURL = &url }, true},
	} {
		tm := parseMonitor(t, basicMonitor)
		c.set(tm)
		got := NewPromConfig(tm, nil, 0, 1).RuleFiles
		if has := slices.Contains(got, RulesDir+"/*.rules.yml"); has != c.rules {
			t.Errorf("%s: rule files %v, want the bundled rules %v", c.name, got, c.rules)
		}
	}
}

// TestThanosRoutePrefix: the sidecar reaches Prometheus under
// spec.thanos.routePrefix.
func TestThanosRoutePrefix(t *testing.T) {
	t.Parallel()
	for prefix, want := range map[string]string{"": "http://127.0.0.1:9090", "/prom/": "http://127.0.0.1:9090/prom",
		"a/b": "http://127.0.0.1:9090/a/b", "/": "http://127.0.0.1:9090"} {
		tm := parseMonitor(t, basicMonitor)
		tm.Spec.Thanos = &v1alpha1.ThanosSpec{RoutePrefix: prefix}
		if got := thanosContainer(tm).Args[1]; got != "--prometheus.url="+want {
			t.Errorf("routePrefix %q: %s, want --prometheus.url=%s", prefix, got, want)
		}
	}
}

// TestMicroServicesAreScraped: a cluster with PD micro-services gets the
// jobs <ns>/<tc>/tso and <ns>/<tc>/scheduling (named as its other jobs), as the TiDB Operator's
// monitor has, before PD's.
func TestMicroServicesAreScraped(t *testing.T) {
	t.Parallel()
	tc := parseCluster(t, `
metadata: {name: ms, namespace: db}
spec:
  pd: {mode: ms, replicas: 1}
  pdms: [{name: tso, replicas: 2}, {name: scheduling, replicas: 1}]
  tikv: {replicas: 1}
  tidb: {replicas: 1}
`)
	got := TargetOf(v1alpha1.TidbClusterRef{Name: "ms", Namespace: "db"}, "db", tc).Components
	want := []string{"tso", "scheduling", "pd", "tikv", "tidb"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("components %v, want %v", got, want)
	}
	tm := &v1alpha1.TidbMonitor{}
	tm.Name, tm.Namespace = "mon", "db"
	cfg := NewPromConfig(tm, []Target{TargetOf(v1alpha1.TidbClusterRef{Name: "ms", Namespace: "db"}, "db", tc)}, 0, 1)
	var jobs []string
	for _, j := range cfg.ScrapeConfigs {
		jobs = append(jobs, j.JobName)
	}
	for _, want := range []string{"db/ms/tso", "db/ms/scheduling"} {
		if !strings.Contains(strings.Join(jobs, " "), want) {
			t.Errorf("jobs %v lack %s", jobs, want)
		}
	}
}
