//go:build integration

package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// operatorProcess is a real tidb-controller-manager process (`make build`) started by the test.
type operatorProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// startOperatorProcess runs _output/bin/tidb-controller-manager for the scenario's namespace with
// leader election, reaching PD through the suite's proxy. It is SIGKILLed (by its PID) at cleanup
// if still running, and dies with the test binary (Pdeathsig).
func (s *sc) startOperatorProcess(name string) *operatorProcess {
	s.t.Helper()
	bin, err := operatorBinary()
	if err != nil {
		s.t.Fatal(err)
	}
	// The process authenticates as the chart's ServiceAccount, with the chart's permission flags.
	chart := operator.ChartCredentials(s.t, s.kubeconfig(), s.env.Namespace, operator.ClusterScopedRBAC(), operator.Chart{})
	logf, err := os.Create(filepath.Join(s.t.TempDir(), name+".log"))
	if err != nil {
		s.t.Fatal(err)
	}
	args := []string{"--kubeconfig=" + chart.Kubeconfig, "--namespace=" + s.env.Namespace, "--cluster-scoped=false",
		"--resync-duration=5s", "--status-refresh-interval=10s", "--status-progress-interval=2s", "--workers=2",
		"--metrics-addr=" + operator.FreeAddr(s.t), "--health-addr=" + operator.FreeAddr(s.t),
		"--leader-lease-duration=15s", "--leader-renew-deadline=10s", "--leader-retry-period=2s", "--shutdown-grace-period=2s"}
	for _, a := range chart.Args {
		if strings.HasPrefix(a, "-cluster-permission-") {
			args = append(args, a)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"HTTP_PROXY=" + pdProxyOf(s.t).URL(), "NO_PROXY=127.0.0.1,localhost"}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", bin, err)
	}
	p := &operatorProcess{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); _ = logf.Close() }()
	s.t.Cleanup(func() { p.kill(s.t) })
	s.t.Logf("started %s as PID %d (log %s)", name, cmd.Process.Pid, logf.Name())
	return p
}

var binaryCheck struct {
	once sync.Once
	path string
	err  error
}

// operatorBinary is _output/bin/tidb-controller-manager once it is known to exist, to run, and to
// be built from the commit checked out (a binary left from an older commit would test old code and
// pass or fail for the wrong reason). `make faults` builds it; `go test` alone does not.
func operatorBinary() (string, error) {
	binaryCheck.once.Do(func() {
		bin := filepath.Join(framework.RepoRoot(), "_output", "bin", "tidb-controller-manager")
		binaryCheck.path = bin
		if _, err := os.Stat(bin); err != nil {
			binaryCheck.err = fmt.Errorf("the sigkill scenarios run the real binary %s, which is missing: run 'make build' "+
				"first, or run the suite with 'make faults', which builds it (%w)", bin, err)
			return
		}
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil {
			binaryCheck.err = fmt.Errorf("%s --version: %w: %s", bin, err, out)
			return
		}
		head, err := exec.Command("git", "-C", framework.RepoRoot(), "rev-parse", "HEAD").Output()
		if err != nil {
			return // not a git checkout: nothing to compare with
		}
		if want := strings.TrimSpace(string(head)); !strings.Contains(string(out), "commit "+want) {
			binaryCheck.err = fmt.Errorf("%s was built from another commit (%s), the tree is at %s: run 'make build' "+
				"(make faults does)", bin, strings.TrimSpace(string(out)), want)
		}
	})
	return binaryCheck.path, binaryCheck.err
}

// kill sends SIGKILL to this process by its PID and waits for it to end.
func (p *operatorProcess) kill(t *testing.T) {
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Errorf("SIGKILL PID %d: %v", p.cmd.Process.Pid, err)
	}
	p.done <- <-p.done
}

// leaseHolder is the holder of the operator's Lease in the namespace.
func (s *sc) leaseHolder(ctx context.Context) (string, error) {
	l, err := s.env.Kube.CoordinationV1().Leases(s.env.Namespace).Get(ctx, "tidb-controller-manager", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

// waitLeaseMoved waits until the Lease is held by someone other than from.
func (s *sc) waitLeaseMoved(from string) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "another operator holds the Lease", func(ctx context.Context) (bool, error) {
		h, err := s.leaseHolder(ctx)
		framework.Observef(ctx, "holder %q (was %q), %v", h, from, err)
		return err == nil && h != "" && h != from, nil
	})
}

// processScenarios: a real operator process SIGKILLed mid-change, and two operators handing the
// Lease over mid-upgrade.
func processScenarios() []scenario {
	var out []scenario
	for _, name := range []string{"tikv-upgrade", "tikv-scale-in"} {
		c := lifecycleCases()[name]
		out = append(out, scenario{
			name:    "sigkill/" + name,
			asserts: "real tidb-controller-manager process SIGKILLed (by PID) at: " + c.step + "; a second process takes the Lease once it expires and converges",
			run: func(t *testing.T) {
				var first *operatorProcess
				o := c.opts
				o.startOperator = func(s *sc) { first = s.startOperatorProcess("operator-1") }
				s := start(t, o)
				c.change(s)
				c.reached(s)
				holder, err := s.leaseHolder(s.env.Ctx)
				if err != nil || holder == "" {
					t.Fatalf("Lease holder before the kill: %q, %v", holder, err)
				}
				first.kill(t)
				s.startOperatorProcess("operator-2")
				s.waitLeaseMoved(holder)
				finish(s, c)
			},
		})
	}
	return append(out, scenario{
		name:    "lease/handover-mid-upgrade",
		asserts: "two operators share the Lease; the leader is stopped while a store evicts leaders in a cluster-wide upgrade; the standby takes the Lease and finishes PD, TiKV and TiDB",
		run: func(t *testing.T) {
			s := start(t, scOptions{})
			s.startManager() // the standby: blocks on the Lease
			s.patch(map[string]any{"version": "v8.5.1"})
			s.waitSim("a store evicting leaders", anyEvicting)
			holder, err := s.leaseHolder(s.env.Ctx)
			if err != nil || holder == "" {
				t.Fatalf("Lease holder: %q, %v", holder, err)
			}
			if err := s.mgr.Stop(); err != nil {
				t.Fatalf("stop the leader: %v", err)
			}
			s.waitLeaseMoved(holder)
			s.waitConverged("the standby finishes the upgrade")
			for _, c := range []string{"pd", "tikv", "tidb"} {
				s.expectImages(c, "v8.5.1")
			}
		},
	})
}
