//go:build integration

// Package sqle2e runs the operator's SQL features end to end: a real
// kube-apiserver with KWOK pods, the controller-manager in this process,
// the simulator answering PD/TiKV/TiDB HTTP as HTTP_PROXY, and a real
// MariaDB standing in for TiDB's MySQL port behind the simulator's SOCKS5
// proxy (ALL_PROXY), which the operator's SQL client dials through.
package sqle2e

import (
	"flag"
	"fmt"
	"net"
	"os"
	"testing"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// simAddr is the simulator's HTTP proxy and socksAddr its SOCKS5 proxy. Go's
// HTTP proxy function and golang.org/x/net/proxy read the environment once,
// so both are set before anything dials.
var simAddr, socksAddr string

func TestMain(m *testing.M) {
	var err error
	if simAddr, err = freeAddr(); err == nil {
		socksAddr, err = freeAddr()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sql: no free port:", err)
		os.Exit(1)
	}
	_ = os.Setenv("HTTP_PROXY", "http://"+simAddr)
	_ = os.Setenv("ALL_PROXY", "socks5://"+socksAddr)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	if v := os.Getenv("KUBETIDB_TEST_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	framework.Main(m)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}
