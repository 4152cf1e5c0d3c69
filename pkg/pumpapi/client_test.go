package pumpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// newPumps serves per-pod handlers behind a proxy as the pods of the headless Service basic-pump; a pod
// without a handler refuses the connection (the proxy answers 502).
func newPumps(t *testing.T, pods map[string]http.HandlerFunc) pumpapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-pump.ns:8250", Handlers: pods}.Serve(t)
}

// Pump's answers, as tidb-binlog encodes them (json.Encoder, so with a trailing newline).
const (
	statusJSON = `{"status":{"basic-pump-1:8250":{"nodeId":"basic-pump-1:8250","host":"basic-pump-1.basic-pump:8250",` +
		`"state":"online","isAlive":true,"score":0,"label":null,"maxCommitTS":451063735414898689,"updateTS":451063737223299073},` +
		`"basic-pump-0:8250":{"nodeId":"basic-pump-0:8250","host":"basic-pump-0.basic-pump:8250","state":"offline",` +
		`"isAlive":false,"score":0,"label":null,"maxCommitTS":451063713102381057,"updateTS":0}},` +
		`"CommitTS":451063737498550273,"Checkpoint":{"suffix":0,"offset":0},"ErrMsg":""}` + "\n"
	noRegistryJSON = `{"status":null,"CommitTS":0,"Checkpoint":{"suffix":0,"offset":0},"ErrMsg":"context canceled"}` + "\n"
	acceptedJSON   = "{\n  \"message\": \"apply action close success!\",\n  \"code\": 200,\n  \"data\": null\n}"
	refusedJSON    = "{\n  \"message\": \"this pump's state is closing, apply close failed!\",\n  \"code\": 3,\n  \"data\": null\n}"
)

// route answers by method and path, 405 for another method and 404 for another path.
func route(routes map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	if got := pumpapi.BaseURL("ns", "basic", "basic-pump-1", pumpapi.Options{}); got != "http://basic-pump-1.basic-pump.ns:8250" {
		t.Errorf("BaseURL = %q", got)
	}
	got := pumpapi.BaseURL("ns", "basic", "basic-pump-1", pumpapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != "https://basic-pump-1.basic-pump.ns.svc.cluster.local:8250" {
		t.Errorf("BaseURL with TLS and domain = %q", got)
	}
	if got := pumpapi.OfflinePath("basic-pump-1:8250"); got != "/state/basic-pump-1:8250/close" {
		t.Errorf("OfflinePath = %q", got)
	}
	if got := pumpapi.OfflinePath("a/b"); got != "/state/a%2Fb/close" {
		t.Errorf("OfflinePath of an odd node ID = %q", got)
	}
}

func TestGetStatus(t *testing.T) {
	t.Parallel()
	clients := newPumps(t, map[string]http.HandlerFunc{
		"basic-pump-0": route(map[string]http.HandlerFunc{"GET /status": podhttptest.Answer(200, statusJSON)}),
	})
	c := pumpapi.NewClient(clients, 100*time.Millisecond)
	status, err := c.GetStatus(context.Background(), "ns", "basic", "basic-pump-0", pumpapi.Options{})
	if err != nil {
		t.Fatalf("GetStatus: %v", err)
	}
	want := []pumpapi.NodeStatus{
		{NodeID: "basic-pump-0:8250", Host: "basic-pump-0.basic-pump:8250", State: pumpapi.StateOffline, MaxCommitTS: 451063713102381057},
		{NodeID: "basic-pump-1:8250", Host: "basic-pump-1.basic-pump:8250", State: pumpapi.StateOnline, IsAlive: true,
			MaxCommitTS: 451063735414898689, UpdateTS: 451063737223299073},
	}
	if diff := cmp.Diff(want, status.Sorted()); diff != "" {
		t.Errorf("registry (-want +got):\n%s", diff)
	}
	if status.CommitTS != 451063737498550273 {
		t.Errorf("CommitTS = %d", status.CommitTS)
	}
}

func TestOffline(t *testing.T) {
	t.Parallel()
	var paths []string
	clients := newPumps(t, map[string]http.HandlerFunc{
		"basic-pump-1": route(map[string]http.HandlerFunc{
			"PUT /state/basic-pump-1:8250/close": func(w http.ResponseWriter, r *http.Request) {
				paths = append(paths, r.URL.Path)
				podhttptest.Answer(200, acceptedJSON)(w, r)
			},
			"PUT /state/closing:8250/close": podhttptest.Answer(200, refusedJSON),
			"PUT /state/other:8250/close": podhttptest.Answer(200,
				`{"message":"invalide nodeID other:8250, this pump's nodeID is basic-pump-1:8250","code":3,"data":null}`),
		}),
	})
	c := pumpapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	if err := c.Offline(ctx, "ns", "basic", "basic-pump-1", "basic-pump-1:8250", pumpapi.Options{}); err != nil {
		t.Fatalf("accepted Offline: %v", err)
	}
	if len(paths) != 1 {
		t.Errorf("offline requests = %q, want one", paths)
	}
	var refused *pumpapi.RefusedError
	err := c.Offline(ctx, "ns", "basic", "basic-pump-1", "closing:8250", pumpapi.Options{})
	if !errors.As(err, &refused) || refused.Code != 3 || refused.PumpState() != pumpapi.StateClosing {
		t.Errorf("refused Offline: %v, want a RefusedError naming state closing", err)
	}
	err = c.Offline(ctx, "ns", "basic", "basic-pump-1", "other:8250", pumpapi.Options{})
	if !errors.As(err, &refused) || refused.PumpState() != "" || !strings.Contains(err.Error(), "invalide nodeID") {
		t.Errorf("Offline of another node: %v, want a RefusedError quoting Pump", err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	clients := newPumps(t, map[string]http.HandlerFunc{
		"basic-pump-0": route(map[string]http.HandlerFunc{"GET /status": podhttptest.Answer(200, noRegistryJSON)}),
		"basic-pump-1": http.NotFound,
		"basic-pump-2": podhttptest.Answer(200, "<html>"),
		"basic-pump-3": podhttptest.BlockUntilCanceled,
		"basic-pump-4": podhttptest.Answer(http.StatusInternalServerError, "boom"),
	})
	c := pumpapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	opts := pumpapi.Options{}
	calls := map[string]func(pod string) error{
		"GetStatus": func(pod string) error { _, err := c.GetStatus(ctx, "ns", "basic", pod, opts); return err },
		"Offline":   func(pod string) error { return c.Offline(ctx, "ns", "basic", pod, pod+":8250", opts) },
	}
	if err := calls["GetStatus"]("basic-pump-0"); !errors.Is(err, pumpapi.ErrRegistryUnavailable) || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("GetStatus without the registry: %v, want ErrRegistryUnavailable quoting Pump", err)
	}
	for name, call := range calls {
		if err := call("basic-pump-1"); err == nil || !strings.Contains(err.Error(), "404 Not Found") {
			t.Errorf("%s on 404: %v", name, err)
		}
		if err := call("basic-pump-2"); err == nil || !strings.Contains(err.Error(), "decode") {
			t.Errorf("%s on HTML: %v, want a decode error", name, err)
		}
		var unreachable *podhttp.UnreachableError
		if err := call("basic-pump-3"); !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &unreachable) {
			t.Errorf("%s on a timeout: %v, want an UnreachableError of DeadlineExceeded", name, err)
		}
		if err := call("basic-pump-4"); err == nil || !strings.Contains(err.Error(), "500 Internal Server Error: boom") {
			t.Errorf("%s on 500: %v", name, err)
		}
		if err := call("basic-pump-9"); err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
			t.Errorf("%s on a refused pod: %v", name, err)
		}
		if verbose := fmt.Sprintf("%+v", call("basic-pump-1")); !strings.Contains(verbose, "pumpapi.(*client)."+name) {
			t.Errorf("%s error has no stack:\n%s", name, verbose)
		}
	}
	shared := pumpapi.NewClient(pdapi.NewHTTPClientCache(nil), 0)
	if err := shared.Offline(ctx, "ns", "basic", "basic-pump-0", "x", pumpapi.Options{TLSEnabled: true}); err == nil ||
		!strings.Contains(err.Error(), "no TLS config source") {
		t.Errorf("Offline through the shared cache without TLS source: %v", err)
	}
}

func TestGetRegistry(t *testing.T) {
	t.Parallel()
	clients := newPumps(t, map[string]http.HandlerFunc{
		"basic-pump-0": podhttptest.Answer(200, noRegistryJSON),
		"basic-pump-2": podhttptest.Answer(200, statusJSON),
	})
	c := pumpapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	status, pod, err := pumpapi.GetRegistry(ctx, c, "ns", "basic", []string{"basic-pump-0", "basic-pump-1", "basic-pump-2"}, pumpapi.Options{})
	if err != nil || pod != "basic-pump-2" || len(status.Nodes) != 2 {
		t.Errorf("GetRegistry = %v from %q, %v; want the registry of basic-pump-2", status, pod, err)
	}
	_, _, err = pumpapi.GetRegistry(ctx, c, "ns", "basic", []string{"basic-pump-0", "basic-pump-1"}, pumpapi.Options{})
	var unreachable *podhttp.UnreachableError
	if !errors.Is(err, pumpapi.ErrRegistryUnavailable) || !strings.Contains(err.Error(), "502 Bad Gateway") || errors.As(err, &unreachable) {
		t.Errorf("GetRegistry without an answer: %v, want every pod's error", err)
	}
	if _, _, err := pumpapi.GetRegistry(ctx, c, "ns", "basic", nil, pumpapi.Options{}); !errors.Is(err, pumpapi.ErrNoPump) {
		t.Errorf("GetRegistry of no pod: %v, want ErrNoPump", err)
	}
}

func TestNodePod(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"basic-pump-0.basic-pump:8250":                      "basic-pump-0",
		"basic-pump-12.basic-pump.ns.svc:8250":              "basic-pump-12",
		"basic-pump-1.basic-pump.ns.svc.cluster.local:8250": "basic-pump-1",
		"basic-pump-1.basic-pump.ns:8250":                   "basic-pump-1",
		"basic-pump-1.basic-pump":                           "basic-pump-1",
		"basic-pump-1.basic-pump.other.svc:8250":            "", // the same cluster name in another namespace
		"other-pump-1.other-pump:8250":                      "", // another cluster
		"basic-pump-x.basic-pump:8250":                      "",
		"basic-pump-.basic-pump:8250":                       "",
		"basic-pump-99999999999.basic-pump:8250":            "",
		"basic-pump-1.basic-pumpx:8250":                     "",
		"10.0.0.7:8250":                                     "",
		"":                                                  "",
	} {
		got, ok := pumpapi.NodePod(host, "ns", "basic")
		if got != want || ok != (want != "") {
			t.Errorf("NodePod(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
}
