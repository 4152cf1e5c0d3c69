//go:build bench

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	evWatchStarted = `{"auditID":"w1","stage":"ResponseStarted","requestURI":"/api/v1/pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dtidb-operator&watch=true","verb":"watch","user":{"username":"kubetidb-operator"},"objectRef":{"resource":"pods"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:00.100000Z"}`
	evWatchDone    = `{"auditID":"w1","stage":"ResponseComplete","requestURI":"/api/v1/pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dtidb-operator&watch=true","verb":"watch","user":{"username":"kubetidb-operator"},"objectRef":{"resource":"pods"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:00.100000Z"}`
	evCreate       = `{"auditID":"c1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench0001/services","verb":"create","user":{"username":"kubetidb-operator"},"objectRef":{"resource":"services","namespace":"bench0001","name":"db-pd"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-01-01T00:00:01Z"}`
	evConflict     = `{"auditID":"u1","stage":"ResponseComplete","requestURI":"/apis/pingcap.com/v1alpha1/namespaces/bench0001/tidbclusters/db/status","verb":"update","user":{"username":"kubetidb-operator"},"objectRef":{"resource":"tidbclusters","namespace":"bench0001","name":"db","subresource":"status"},"responseStatus":{"code":409},"requestReceivedTimestamp":"2026-01-01T00:00:01.500000Z"}`
	evLease        = `{"auditID":"l1","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/kubetidb-system/leases/x","verb":"update","user":{"username":"kubetidb-operator"},"objectRef":{"resource":"leases","namespace":"kubetidb-system","name":"x"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:02Z"}`
	evOtherUser    = `{"auditID":"o1","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","user":{"username":"kubetidb-admin"},"objectRef":{"resource":"pods"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:01Z"}`
)

func TestAuditLogFollowsAppendsAndDeduplicates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	a := NewAuditLog(path)
	if n, err := a.Poll(); err != nil || n != 0 {
		t.Fatalf("missing file: %d, %v", n, err)
	}
	// The second write ends mid-line: the partial event waits for its newline.
	writeAll(t, path, evWatchStarted+"\n"+evCreate+"\n"+evConflict[:40])
	if n, err := a.Poll(); err != nil || n != 2 {
		t.Fatalf("first poll: %d, %v", n, err)
	}
	appendTo(t, path, evConflict[40:]+"\n"+evWatchDone+"\n"+evLease+"\n"+evOtherUser+"\n")
	if n, err := a.Poll(); err != nil || n != 4 {
		t.Fatalf("second poll: %d requests, %v (want watch, create, update, lease)", n, err)
	}
	all := a.Between(time.Time{}, time.Now())
	want := map[string]int{"watch pods": 1, "create services": 1, "update tidbclusters/status": 1, "update leases": 1}
	if diff := cmp.Diff(want, countBy(all)); diff != "" {
		t.Errorf("countBy (-want +got):\n%s", diff)
	}
	if got := conflicts(all); got != 1 {
		t.Errorf("conflicts = %d, want 1", got)
	}
	if got := len(clusterWrites(all, "bench")); got != 2 {
		t.Errorf("cluster writes = %d, want the create and the status update", got)
	}
	from := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	if got := len(a.Between(from, from.Add(time.Second))); got != 2 {
		t.Errorf("Between [1s, 2s) = %d requests, want 2", got)
	}
	lw := listWatches(all)
	if len(lw) != 1 || lw[0].LabelSelector != "app.kubernetes.io/managed-by=tidb-operator" || lw[0].Watches != 1 || lw[0].Namespace != "*" {
		t.Errorf("listWatches = %+v", lw)
	}
	if got := peakRate(all); got != 2 {
		t.Errorf("peakRate = %d, want 2 (create and update in second 1)", got)
	}
}

func writeAll(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestSummarizeNearestRank(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	got := summarize(ds)
	want := Durations{Count: 100, P50: 50, P99: 99, Max: 100}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	if got := summarize(nil); got != (Durations{}) {
		t.Errorf("empty sample: %+v", got)
	}
	if got := summarize([]time.Duration{1500 * time.Millisecond}); got.P50 != 1.5 || got.P99 != 1.5 {
		t.Errorf("one sample: %+v", got)
	}
}

func TestParseMetrics(t *testing.T) {
	t.Parallel()
	body := `# HELP workqueue_depth Current depth.
# TYPE workqueue_depth gauge
workqueue_depth{name="tidbcluster"} 7
workqueue_depth{name="backup"} 1
controller_runtime_reconcile_total{controller="tidbcluster",result="success"} 12
controller_runtime_reconcile_total{controller="tidbcluster",result="requeue"} 30
go_memstats_heap_inuse_bytes 1.048576e+06
`
	m := parseMetrics(body)
	if got := sumMetric(m, "workqueue_depth", `name="tidbcluster"`); got != 7 {
		t.Errorf("depth = %v", got)
	}
	if got := sumMetric(m, "controller_runtime_reconcile_total", `controller="tidbcluster"`); got != 42 {
		t.Errorf("reconciles = %v", got)
	}
	if got := sumMetric(m, "go_memstats_heap_inuse_bytes"); got != 1<<20 {
		t.Errorf("heap = %v", got)
	}
	if got := sumMetric(m, "workqueue"); got != 0 {
		t.Errorf("a prefix of a name must not match: %v", got)
	}
}
