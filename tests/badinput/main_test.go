//go:build integration

// Package badinput creates a corpus of malformed objects of the nine
// served kinds (TidbCluster, Backup, Restore, BackupSchedule, TidbMonitor,
// TidbDashboard, TidbNGMonitoring, TidbInitializer, DMCluster; package
// corpus)
// through the dynamic client
// against a real kube-apiserver with the operator and the PD/TiKV/TiDB
// simulator running, and checks that each is either rejected by the API
// server naming the broken field, or accepted and reported invalid by the
// operator with nothing written for it — while a healthy cluster in the
// same namespace keeps converging.
package badinput

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
// TiKV and TiDB address through it as HTTP_PROXY, which Go reads once, so
// it is set before anything makes a request.
var simAddr string

func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "badinput: no free port:", err)
		os.Exit(1)
	}
	simAddr = ln.Addr().String()
	_ = ln.Close()
	_ = os.Setenv("HTTP_PROXY", "http://"+simAddr)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	if v := os.Getenv("KUBETIDB_TEST_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	framework.Main(m)
}
