package pump

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
)

// basicCluster is examples/binlog's Pump: one pump with the examples' config.
const basicCluster = `
metadata: {name: basic}
spec:
  version: v8.5.0
  pd: {baseImage: pingcap/pd, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 1, binlogEnabled: true, config: {}}
  pump:
    baseImage: pingcap/tidb-binlog
    replicas: 1
    requests: {storage: 1Gi}
    config: {addr: "0.0.0.0:8250", gc: 7, heartbeat-interval: 2}
`

// tlsCluster has TLS between components, a cluster domain, a TOML config with its own log level and
// security settings, the cluster's time zone in the pumps and a storage class.
const tlsCluster = `
metadata: {name: secure, namespace: db}
spec:
  version: v8.5.0
  timezone: Asia/Shanghai
  clusterDomain: cluster.local
  tlsCluster: {enabled: true}
  pd: {replicas: 3, requests: {storage: 1Gi}}
  tikv: {replicas: 3, requests: {storage: 10Gi}}
  pump:
    replicas: 3
    setTimeZone: true
    storageClassName: fast
    requests: {cpu: 500m, storage: 20Gi}
    limits: {memory: 1Gi}
    config: |
      log-level = "warn"
      gc = 3
      [security]
      ssl-ca = "/mine/ca.crt"
      cert-allowed-cn = ["tidb"]
      [storage]
      sync-log = true
`

// podSettingsCluster has pod settings from the cluster and the component: host network (HOSTNAME from
// the pod name), a Parallel pod management policy, an OnDelete update strategy, env, annotations and
// a service account.
const podSettingsCluster = `
metadata: {name: pods}
spec:
  version: v8.5.0
  podManagementPolicy: Parallel
  nodeSelector: {pool: binlog}
  pd: {replicas: 1, requests: {storage: 1Gi}}
  pump:
    replicas: 2
    hostNetwork: true
    serviceAccount: binlog
    statefulSetUpdateStrategy: OnDelete
    imagePullPolicy: Always
    annotations: {team: binlog}
    env: [{name: GOMAXPROCS, value: "2"}]
    requests: {storage: 5Gi}
`

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"basic":        basicCluster,
		"tls":          tlsCluster,
		"pod-settings": podSettingsCluster,
		// v1.6 fields: securityContext, no service account token, a volume
		// attributes class on the data volume.
		"v16-fields": `
metadata: {name: v16}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  pump:
    replicas: 1
    requests: {storage: 1Gi}
    automountServiceAccountToken: false
    securityContext: {runAsNonRoot: true}
    volumeAttributesClassName: fast
`,
		// A cluster joining another namespace's PD.
		"heterogeneous": `
metadata: {name: hetero, namespace: b}
spec:
  version: v8.5.0
  cluster: {name: basic, namespace: a}
  pump: {replicas: 1, requests: {storage: 1Gi}}
`,
		// A cluster spanning Kubernetes clusters: PD endpoints verified by discovery, a qualified address.
		"across-k8s": `
metadata: {name: wide, namespace: east}
spec:
  version: v8.5.0
  acrossK8s: true
  pd: {replicas: 1, requests: {storage: 1Gi}}
  pump: {replicas: 1, requests: {storage: 1Gi}}
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

// TestConfig: the user's config is kept, the operator's TLS paths win, and there is a pump.toml even
// without a config.
func TestConfig(t *testing.T) {
	t.Parallel()
	read := func(manifest string) map[string]any {
		data, err := newConfigData(golden.Cluster(t, manifest))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 1 {
			t.Fatalf("ConfigMap keys %v, want pump-config only", data)
		}
		out := map[string]any{}
		if err := toml.Unmarshal([]byte(data[ConfigKey]), &out); err != nil {
			t.Fatalf("pump-config is not TOML: %v\n%s", err, data[ConfigKey])
		}
		return out
	}
	want := map[string]any{
		"log-level": "warn", "gc": int64(3),
		"security": map[string]any{"ssl-ca": "/var/lib/pump-tls/ca.crt", "ssl-cert": "/var/lib/pump-tls/tls.crt",
			"ssl-key": "/var/lib/pump-tls/tls.key", "cert-allowed-cn": []any{"tidb"}},
		"storage": map[string]any{"sync-log": true},
	}
	if diff := cmp.Diff(want, read(tlsCluster)); diff != "" {
		t.Errorf("TLS config (-want +got):\n%s", diff)
	}
	if got := read(`{metadata: {name: x}, spec: {pd: {replicas: 1}, pump: {replicas: 1}}}`); len(got) != 0 {
		t.Errorf("config without spec.pump.config = %v, want empty", got)
	}
}

func TestStartScript(t *testing.T) {
	t.Parallel()
	for manifest, wants := range map[string][]string{
		basicCluster: {
			"-pd-urls='http://basic-pd:2379'", "-L='info'", "-advertise-addr=${HOSTNAME}.basic-pump:8250",
			"-config=/etc/pump/pump.toml", "-data-dir=/data", "-log-file= &", "pump offline, please delete my pod",
			`runmode="debug"`,
		},
		tlsCluster: {"-pd-urls='https://secure-pd:2379'", "-L='warn'", "-advertise-addr=${HOSTNAME}.secure-pump.db.svc.cluster.local:8250"},
		`{metadata: {name: x}, spec: {pdAddresses: ["http://a:2379", "http://b:2379"], pump: {replicas: 1, config: {log-level: "it's"}}}}`: {
			"-pd-urls='http://a:2379,http://b:2379'", `-L='it'\''s'`,
		},
		`{metadata: {name: x, namespace: east}, spec: {acrossK8s: true, pd: {replicas: 1}, pump: {replicas: 1}}}`: {
			`until pd=$(wget -qO- -T 3 "http://x-discovery.east.svc:10261/verify/${encoded}")`, `-pd-urls="${pd}"`,
			"-advertise-addr=${HOSTNAME}.x-pump.east.svc:8250",
		},
	} {
		script := newStartScript(golden.Cluster(t, manifest))
		for _, want := range wants {
			if !strings.Contains(script, want) {
				t.Errorf("start script lacks %q:\n%s", want, script)
			}
		}
	}
}

// TestStartScriptRuns runs the start script with a stand-in pump: a clean exit (pump offline) idles,
// a failure exits with pump's status, and a termination is passed on to pump and ends the script.
func TestStartScriptRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("the start script needs sh to be tested: %v", err)
	}
	script := newStartScript(golden.Cluster(t, basicCluster))
	dir := t.TempDir()
	annotations := filepath.Join(dir, "annotations")
	if err := os.WriteFile(annotations, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, "/etc/podinfo/annotations", annotations)
	script = strings.ReplaceAll(script, "exec tail -f /dev/null", "echo idling; exit 0")
	run := func(pump string) (string, int) {
		t.Helper()
		s := strings.ReplaceAll(script, "/pump \\", pump+" \\")
		cmd := exec.Command("sh", "-c", s)
		cmd.Env = append(os.Environ(), "HOSTNAME=basic-pump-0")
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("true"); code != 0 || !strings.Contains(out, "pump offline, please delete my pod") || !strings.Contains(out, "idling") {
		t.Errorf("clean exit: code %d, output %q; want the script to idle", code, out)
	}
	if out, code := run("sh -c 'exit 3' --"); code != 3 || strings.Contains(out, "idling") {
		t.Errorf("failed pump: code %d, output %q; want exit 3", code, out)
	}
	// A pump that exits on TERM: the script is terminated while pump sleeps.
	// The stub says "started" only once the script's own TERM trap is set
	// (bit 15 of its parent's caught-signal mask), so the signal below can
	// never reach a script without its trap.
	stub := filepath.Join(dir, "pump")
	stubScript := "#!/bin/sh\n" +
		"i=0\n" +
		"until [ $(( (0x$(awk '/^SigCgt/{print $2}' /proc/$PPID/status) >> 14) & 1 )) = 1 ]; do\n" +
		"  i=$((i+1)); [ $i -gt 1000 ] && { echo 'no trap in the script'; exit 9; }; sleep 0.01\n" +
		"done\n" +
		"sleep 30 &\ns=$!\ntrap 'echo paused; kill $s; exit 0' TERM\necho started\nwait\n"
	if err := os.WriteFile(stub, []byte(stubScript), 0o700); err != nil { //nolint:gosec // an executable test stub
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(script, "/pump \\", stub+" \\"))
	cmd.Env = append(os.Environ(), "HOSTNAME=basic-pump-0")
	out := &syncBuffer{started: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-out.started:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the stub pump never started: %q", out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if got := out.String(); strings.Contains(got, "idling") || !strings.Contains(got, "paused") {
		t.Errorf("terminated: output %q; want pump told and the script ended", got)
	}
}

// syncBuffer is a bytes.Buffer safe for a process writing while the test
// reads; started (when not nil) is closed once the output says "started".
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.started != nil && strings.Contains(b.buf.String(), "started") {
		close(b.started)
		b.started = nil
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestPodSettings(t *testing.T) {
	t.Parallel()
	sts, err := newStatefulSet(golden.Cluster(t, basicCluster), "basic-pump")
	if err != nil {
		t.Fatal(err)
	}
	if sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement {
		t.Errorf("pod management %s, want OrderedReady by default", sts.Spec.PodManagementPolicy)
	}
	main := sts.Spec.Template.Spec.Containers[0]
	for _, e := range main.Env {
		if e.Name == "TZ" {
			t.Errorf("TZ set without setTimeZone: %v", e)
		}
	}
	if p := main.ReadinessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port.IntValue() != 8250 {
		t.Errorf("readiness probe %v, want TCP 8250", p)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != DataVolume {
		t.Errorf("volume claims %v, want data", sts.Spec.VolumeClaimTemplates)
	}
	svc := newServices(golden.Cluster(t, basicCluster))[0]
	if svc.Name != "basic-pump" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses ||
		svc.Spec.Ports[0].Name != "pump" || svc.Spec.Ports[0].Port != 8250 {
		t.Errorf("Service %+v, want the headless basic-pump on pump 8250", svc.Spec)
	}
}
