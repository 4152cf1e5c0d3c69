// Package operator holds helpers shared by the integration tests that run
// the operator against the local control plane: installing the CRDs and
// running the controller-manager in-process.
package operator

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

var crdOnce sync.Once

// InstallCRDs applies manifests/crd.yaml with plain client-side
// `kubectl apply` (as users do) once per test binary and waits until every
// CRD is Established (each of manifests/crd/pingcap.com_<plural>.yaml, so a
// new kind is waited for without a change here). It fails the test on any error.
func InstallCRDs(t testing.TB) {
	t.Helper()
	crdOnce.Do(func() {
		framework.Kubectl(t, "apply", "-f", filepath.Join(framework.RepoRoot(), "manifests", "crd.yaml"))
		for _, crd := range CRDPlurals(t) {
			name := "crd/" + crd + ".pingcap.com"
			framework.WaitFor(t, context.Background(), time.Minute, name+" is Established", func(context.Context) (bool, error) {
				out, _, err := framework.KubectlErr("get", name, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
				return err == nil && out == "True", nil
			})
		}
	})
}

// CRDPlurals returns the plural of every CRD in manifests/crd, such as
// tidbclusters; it fails the test when there is none.
func CRDPlurals(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "manifests", "crd", "pingcap.com_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in manifests/crd: %v", err)
	}
	plurals := make([]string, 0, len(files))
	for _, f := range files {
		plurals = append(plurals, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "pingcap.com_"), ".yaml"))
	}
	return plurals
}

// handedOut are the ports FreeAddr returned in this process: a port is
// never handed out twice, so tests running in parallel (each starting
// controller-managers with their own metrics and health servers) cannot be
// given the same port between the check and the bind.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreeAddr returns a 127.0.0.1 address with a port free at the time of the
// call and not returned before in this process.
func FreeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return "127.0.0.1:" + strconv.Itoa(port)
		}
	}
	t.Fatal("find a free port: every port offered was handed out before")
	return ""
}

// DeadProxy is an HTTP proxy address on loopback where nothing listens.
// Test binaries that run the operator without the simulator set HTTP_PROXY
// to it, so that the operator's PD and TiDB requests fail at once on
// loopback instead of resolving cluster names through the machine's DNS.
const DeadProxy = "http://127.0.0.1:9"

// Context returns a context cancelled at test cleanup or after timeout.
func Context(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}
