package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

func TestClientErrorsAndPaths(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		gotPaths []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotPaths = append(gotPaths, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/timings"):
			_, _ = w.Write([]byte(`{"maxStoreDownTime": "10s"`)) // truncated JSON
		case strings.Contains(r.URL.Path, "/faults"):
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("plain text failure\n"))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error": "no simulated cluster a/b"}`))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := New(srv.URL+"/", nil)

	_, err := c.Cluster(ctx, "a", "b/c")
	var se *StatusError
	if !errors.As(err, &se) || !IsNotFound(err) || se.Message != "no simulated cluster a/b" {
		t.Errorf("Cluster = %v, want a 404 StatusError with the simulator's message", err)
	}
	if _, err := c.Faults(ctx, "a", "b"); !errors.As(err, &se) || se.StatusCode != 502 || se.Message != "plain text failure" || IsNotFound(err) {
		t.Errorf("Faults = %v, want a 502 StatusError with the text body", err)
	}
	if _, err := c.Timings(ctx); err == nil || !strings.Contains(err.Error(), "decode GET /timings") {
		t.Errorf("Timings with a truncated body = %v, want a decode error", err)
	}
	if err := c.SetStoreDown(ctx, "ns", "tc", 7, false); !IsNotFound(err) {
		t.Errorf("SetStoreDown = %v", err)
	}
	want := []string{
		"GET /sim/v1/clusters/a/b%2Fc", "GET /sim/v1/clusters/a/b/faults", "GET /sim/v1/timings",
		"DELETE /sim/v1/clusters/ns/tc/stores/7/down",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(gotPaths, "|") != strings.Join(want, "|") {
		t.Errorf("requests = %v, want %v", gotPaths, want)
	}
	srv.Close()
	if _, err := c.AddFault(ctx, "a", "b", api.Fault{Kind: api.FaultDrop}); err == nil || errors.As(err, &se) {
		t.Errorf("AddFault to a closed server = %v, want a transport error", err)
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	var d api.Duration
	if err := d.UnmarshalJSON([]byte(`"1m30s"`)); err != nil || time.Duration(d) != 90*time.Second {
		t.Errorf("Duration = %v, %v", d, err)
	}
	for _, bad := range []string{`90`, `"soon"`, `{}`} {
		if err := d.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("Duration accepted %s", bad)
		}
	}
	if out, _ := api.Duration(1500 * time.Millisecond).MarshalJSON(); string(out) != `"1.5s"` {
		t.Errorf("marshal = %s", out)
	}
}
