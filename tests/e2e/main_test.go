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
	"testing"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// simAddr is where the simulator listens; the operator reaches every PD,
// TiKV and TiDB address through it as HTTP_PROXY. Go's proxy function reads
// the environment once, so it is set before anything makes a request.
var simAddr string

func TestMain(m *testing.M) {
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
