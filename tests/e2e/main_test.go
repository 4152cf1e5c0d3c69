//go:build integration

// Package e2e runs the operator end to end on the local control plane: a
// real kube-apiserver with KWOK pods, the controller-manager in this
// process, and the PD/TiKV/TiDB simulator answering the cluster APIs as the
// HTTP proxy the operator's clients use.
package e2e

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// defaultParallel is how many tests of this package run at once when go
// test is given no -parallel (and KUBETIDB_E2E_PARALLEL is unset). Each
// test has its own namespace and controller-manager and mostly waits (KWOK
// pods starting, min-ready windows), so on 2 cores 4 at a time cut the
// package's wall time by more than half without starving the control
// plane; tests that change what others share (KWOK nodes) do not call
// t.Parallel and run first, one at a time.
const defaultParallel = 4

// simAddr is where the simulator listens; the operator reaches every PD,
// TiKV and TiDB address through it as HTTP_PROXY. Go's proxy function reads
// the environment once, so it is set before anything makes a request.
var simAddr string

func TestMain(m *testing.M) {
	if err := setDefaultParallel(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: no free port:", err)
		os.Exit(1)
	}
	simAddr = ln.Addr().String()
	_ = ln.Close()
	_ = os.Setenv("HTTP_PROXY", "http://"+simAddr)
	_ = os.Setenv("HTTPS_PROXY", "http://"+simAddr) // https:// (TLS clusters) goes through CONNECT
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	if v := os.Getenv("KUBETIDB_TEST_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	framework.Main(m)
}

// setDefaultParallel sets -test.parallel to KUBETIDB_E2E_PARALLEL, else
// defaultParallel, unless the command line gave it: `go test ./tests/...`
// passes one -parallel to every package, and this package's tests are
// independent waits while other packages' are not.
func setDefaultParallel() error {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return nil
	}
	n := strconv.Itoa(defaultParallel)
	if v := os.Getenv("KUBETIDB_E2E_PARALLEL"); v != "" {
		if p, err := strconv.Atoi(v); err != nil || p < 1 {
			return fmt.Errorf("KUBETIDB_E2E_PARALLEL=%q is not a positive number", v)
		}
		n = v
	}
	return flag.Set("test.parallel", n)
}
