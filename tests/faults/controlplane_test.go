//go:build integration

package faults

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// controlPlane is a private local control plane (hack/local-cluster.sh in its own state dir and
// ports) for the scenarios that restart kube-apiserver or etcd, so the shared one is never touched.
// Its scenarios take turns (mu); it is stopped when TestFaults ends.
type controlPlane struct {
	dir, kubeconfig string
	env             []string
	mu              sync.Mutex
}

var privateCP struct {
	sync.Mutex
	cp *controlPlane
}

// sharedPrivateControlPlane starts the private control plane on first use and locks it for t.
func sharedPrivateControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	privateCP.Lock()
	if privateCP.cp == nil {
		cp, err := startControlPlane(t)
		if err != nil {
			privateCP.Unlock()
			t.Fatalf("private control plane: %v", err)
		}
		privateCP.cp = cp
	}
	cp := privateCP.cp
	privateCP.Unlock()
	cp.mu.Lock()
	t.Cleanup(cp.mu.Unlock)
	return cp
}

// stopPrivateControlPlane stops the private control plane if one was started.
func stopPrivateControlPlane(t *testing.T) {
	privateCP.Lock()
	defer privateCP.Unlock()
	if privateCP.cp == nil {
		return
	}
	if err := privateCP.cp.script("down"); err != nil {
		t.Errorf("stop the private control plane: %v", err)
	}
	privateCP.cp = nil
}

// startControlPlane starts the private control plane and installs the CRDs; a plane that does not
// come up fully is stopped again before the error is returned.
func startControlPlane(t *testing.T) (*controlPlane, error) {
	dir, err := os.MkdirTemp("", "kubetidb-faults-cp-")
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig"),
		env: []string{"KUBETIDB_LOCAL_DIR=" + dir, "KUBETIDB_OWNER_PID=" + strconv.Itoa(os.Getpid())}}
	names := []string{"KUBETIDB_APISERVER_PORT", "KUBETIDB_ETCD_PORT", "KUBETIDB_ETCD_PEER_PORT", "KUBETIDB_KCM_PORT",
		"KUBETIDB_SCHEDULER_PORT", "KUBETIDB_KWOK_PORT"}
	var lns []net.Listener
	for _, n := range names {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		cp.env = append(cp.env, n+"="+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	if err := cp.script("up"); err != nil {
		_ = cp.script("down")
		return nil, err
	}
	if err := cp.installCRDs(); err != nil {
		if derr := cp.script("down"); derr != nil {
			t.Logf("stop the private control plane: %v", derr)
		}
		return nil, err
	}
	return cp, nil
}

// installCRDs applies manifests/crd.yaml and waits until every CRD reports Established=True. It polls
// the condition rather than `kubectl wait --for=condition=Established`: right after the apply a CRD
// has no status.conditions yet, and kubectl wait then fails at once instead of waiting (the race
// that failed restart/etcd-mid-rollout).
func (cp *controlPlane) installCRDs() error {
	kubectl := func(ctx context.Context, args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, framework.BinPath("kubectl"), append([]string{"--kubeconfig", cp.kubeconfig}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := kubectl(context.Background(), "apply", "-f", filepath.Join(framework.RepoRoot(), "manifests", "crd.yaml")); err != nil {
		return fmt.Errorf("install CRDs: %w: %s", err, out)
	}
	for _, crd := range []string{"tidbclusters", "backups", "restores", "backupschedules", "compactbackups"} {
		name := "crd/" + crd + ".pingcap.com"
		err := framework.Poll(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
			out, err := kubectl(ctx, "get", name, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			framework.Observef(ctx, "%q %v", out, err)
			return err == nil && out == "True", nil
		})
		if err != nil {
			return fmt.Errorf("%s Established: %w", name, err)
		}
	}
	return nil
}

func (cp *controlPlane) script(args ...string) error {
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "local-cluster.sh"), args...)
	cmd.Env = append(os.Environ(), cp.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("local-cluster.sh %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// restart SIGKILLs one component of this control plane, by the PID its start recorded (checked
// against the recorded binary), waits until it is gone and starts it again with `up`.
func (cp *controlPlane) restart(t *testing.T, component string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(cp.dir, "pids", component+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || len(lines) < 2 {
		t.Fatalf("pid file of %s: %q", component, raw)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || strings.TrimSuffix(exe, " (deleted)") != lines[1] {
		t.Fatalf("PID %d is not our %s (%q, %v)", pid, component, exe, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL %s (PID %d): %v", component, pid, err)
	}
	framework.WaitFor(t, context.Background(), time.Minute, component+" gone", func(context.Context) (bool, error) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
		return os.IsNotExist(err), nil
	})
	t.Logf("SIGKILLed %s (PID %d); starting it again", component, pid)
	if err := cp.script("up"); err != nil {
		t.Fatal(err)
	}
}

// newEnv is framework.NewEnv on this control plane.
func (cp *controlPlane) newEnv(t *testing.T) *framework.Env {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "faults-", Labels: map[string]string{framework.LabelTest: "true"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	framework.WaitFor(t, ctx, time.Minute, "default ServiceAccount", func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return &framework.Env{Ctx: ctx, Namespace: ns.Name, Config: cfg, Kube: kube, Dynamic: dynamic.NewForConfigOrDie(cfg)}
}

// controlPlaneScenarios: kube-apiserver and etcd restarted mid-rollout and mid-backup, watch
// connections cut, and the namespace deleted mid-sync.
func controlPlaneScenarios() []scenario {
	var out []scenario
	for _, component := range []string{"kube-apiserver", "etcd"} {
		c := lifecycleCases()["tikv-upgrade"]
		out = append(out, scenario{
			name: "restart/" + component + "-mid-rollout",
			asserts: component + " of a private control plane SIGKILLed and restarted at: " + c.step +
				"; an operator that exits (Lease lost) is restarted as its Deployment would; no exit but Lease losses; the operator converges",
			run: func(t *testing.T) {
				var op *supervisedOperator
				o := c.opts
				o.cp = sharedPrivateControlPlane(t)
				o.startOperator = func(s *sc) { op = s.startSupervisedOperator() }
				s := start(t, o)
				c.change(s)
				c.reached(s)
				o.cp.restart(t, component)
				finish(s, c)
				op.expectOnlyLeaseLosses(s)
			},
		})
	}
	for _, component := range []string{"kube-apiserver", "etcd"} {
		out = append(out, restartMidBackupScenario(component))
	}
	return append(out, watchCutScenario(), namespaceDeletedScenario())
}

// restartMidBackupScenario SIGKILLs and restarts component of the private control plane while a
// Backup's Job runs: the Job and the Backup survive it, the operator (restarted if it exits on a lost
// Lease) creates no second Job and shows the Backup Complete.
func restartMidBackupScenario(component string) scenario {
	return scenario{
		name: "restart/" + component + "-mid-backup",
		asserts: component + " of a private control plane SIGKILLed and restarted while a Backup's Job runs; " +
			"one Job (`job-once`), the Backup Complete, no exit but Lease losses, the cluster converged",
		run: func(t *testing.T) {
			var op *supervisedOperator
			o := scOptions{cp: sharedPrivateControlPlane(t)}
			o.startOperator = func(s *sc) { op = s.startSupervisedOperator() }
			s := start(t, o)
			s.startBackup("mid")
			s.waitJob("backup-mid", nil)
			o.cp.restart(t, component)
			s.waitJob("backup-mid", jobComplete)
			s.completeBackup("mid")
			s.waitConverged("the cluster stays converged")
			s.expectJobs("backup-mid")
			op.expectOnlyLeaseLosses(s)
		},
	}
}

func watchCutScenario() scenario {
	return scenario{
		name:           "watch-cut/mid-upgrade",
		representative: true,
		asserts:        "every operator connection to kube-apiserver (watches included) cut by a TCP proxy when PD restarts a member, a store evicts leaders and TiDB restarts a pod; informers relist and the upgrade converges",
		run: func(t *testing.T) {
			var tcp *tcpProxy
			kc, err := proxiedKubeconfig(framework.KubeconfigPath(), t.TempDir(), func(target string) (string, error) {
				p, err := startTCPProxy(target)
				if err != nil {
					return "", err
				}
				tcp = p
				t.Cleanup(func() { _ = p.Close() })
				return p.ln.Addr().String(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s := start(t, scOptions{manager: func(o *app.Options) { o.Kubeconfig = kc }})
			cut := func(step string) {
				if n := tcp.cut(); n == 0 {
					t.Errorf("no operator connection to cut at %s", step)
				}
				framework.WaitFor(t, s.env.Ctx, stepTimeout, "the operator reconnects after the cut at "+step, func(context.Context) (bool, error) {
					return tcp.open() > 0, nil
				})
			}
			s.patch(map[string]any{"version": "v8.5.1"})
			s.waitSTS("pd", "PD partition moved", partitionMoved)
			cut("a PD restart")
			s.waitSim("a store evicting leaders", anyEvicting)
			cut("a TiKV eviction")
			s.waitSTS("tidb", "TiDB partition moved", partitionMoved)
			cut("a TiDB restart")
			s.waitConverged("converged after three cuts")
			for _, c := range []string{"pd", "tikv", "tidb"} {
				s.expectImages(c, "v8.5.1")
			}
		},
	}
}

func namespaceDeletedScenario() scenario {
	return scenario{
		name: "namespace-deleted/mid-upgrade",
		asserts: "the namespace deleted while a store evicts leaders: it is fully removed (the operator adds nothing that blocks it), " +
			"the operator deletes no PD member meanwhile and stays healthy (/healthz 200, Run not failed)",
		run: func(t *testing.T) {
			// The user removes every pod and PVC: the pod and PVC checks are still counted, not judged.
			// The operator runs without leader election: its Lease would live in the deleted namespace,
			// and losing it ends Run by design, sooner or later depending on how long the deletion
			// takes (the /healthz probe below raced with that: one of two full runs failed on it).
			s := start(t, scOptions{excuse: []invariant{invPDQuorum, invTiKVTombstone, invTiKVOthersUp, invPVCKept, invNoRestartOnTerminatingPVC},
				manager: func(o *app.Options) { o.LeaderElect = false }})
			s.patch(map[string]any{"tikv": map[string]any{"version": "v8.5.1"}})
			s.waitSim("a store evicting leaders", anyEvicting)
			deletesBefore := s.route.memberDeletes.Load()
			if err := s.env.Kube.CoreV1().Namespaces().Delete(s.env.Ctx, s.env.Namespace, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			framework.WaitFor(t, s.env.Ctx, readyTimeout, "the namespace is gone", func(ctx context.Context) (bool, error) {
				_, err := s.env.Kube.CoreV1().Namespaces().Get(ctx, s.env.Namespace, metav1.GetOptions{})
				framework.Observef(ctx, "get: %v", err)
				return apierrors.IsNotFound(err), nil
			})
			code, body, err := s.mgr.Get(s.env.Ctx, s.mgr.Options.HealthAddr, "/healthz")
			if err != nil || code != http.StatusOK {
				t.Errorf("operator /healthz after the namespace went: %d %q %v", code, body, err)
			}
			memberDeletes := s.route.memberDeletes.Load() - deletesBefore
			s.chk.check(invPDQuorum, memberDeletes == 0, "the operator deleted %d PD members while the namespace was being deleted", memberDeletes)
			if memberDeletes != 0 {
				t.Errorf("the operator deleted %d PD members while the namespace was being deleted", memberDeletes)
			}
		},
	}
}
