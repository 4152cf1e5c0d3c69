package ticdcapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// newTiCDCPods serves per-pod handlers of TiCDC's paths behind a proxy; a pod without a handler refuses
// the connection (the proxy answers 502), and another path is not found.
func newTiCDCPods(t *testing.T, pods map[string]http.HandlerFunc) ticdcapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{
		PeerHost: "basic-ticdc-peer.ns:8301",
		Paths:    []string{ticdcapi.PathStatus, ticdcapi.PathCaptures, ticdcapi.PathDrain, ticdcapi.PathResign, ticdcapi.PathHealth},
		Handlers: pods,
	}.Serve(t)
}

// TiCDC's answers, as its open API documentation shows them.
const (
	statusJSON = `{"version":"v8.5.0","git_hash":"f191cd00c53fdf7a2b1c9308a355092f9bf8824e",` +
		`"id":"c6a43c16-0717-45af-afd6-8b3e01e44f5d","pid":25432,"is_owner":true}`
	capturesJSON = `[{"id":"561c3784-77f0-4863-ad52-65a3436db6af","is_owner":true,` +
		`"address":"basic-ticdc-0.basic-ticdc-peer.ns.svc:8301"},` +
		`{"id":"6a8e2d49-5bc3-4e0a-9a3b-2f0d9e1c7b11","is_owner":false,"address":"basic-ticdc-1.basic-ticdc-peer.ns.svc:8301"}]`
	errorJSON = `{"error_msg":"scheduler request failed: only one capture alive","error_code":"CDC:ErrSchedulerRequestFailed"}`
)

// route answers by method and path, 405 for another method.
func route(routes map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	}
}

// blockUntilCanceled never answers. It reads the body first: the server notices a closed connection
// (and cancels the request) only once the body is read.
func blockUntilCanceled(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	podhttptest.BlockUntilCanceled(w, r)
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	if got := ticdcapi.BaseURL("ns", "basic", "basic-ticdc-1", ticdcapi.Options{}); got != "http://basic-ticdc-1.basic-ticdc-peer.ns:8301" {
		t.Errorf("BaseURL = %q", got)
	}
	got := ticdcapi.BaseURL("ns", "basic", "basic-ticdc-1", ticdcapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != "https://basic-ticdc-1.basic-ticdc-peer.ns.svc.cluster.local:8301" {
		t.Errorf("BaseURL with TLS and domain = %q", got)
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	clients := newTiCDCPods(t, map[string]http.HandlerFunc{
		"basic-ticdc-0": route(map[string]http.HandlerFunc{
			"GET /status":          podhttptest.Answer(200, statusJSON),
			"GET /api/v1/captures": podhttptest.Answer(200, capturesJSON),
			"GET /api/v1/health":   podhttptest.Answer(200, ""),
		}),
		"basic-ticdc-1": route(map[string]http.HandlerFunc{
			"GET /api/v1/health": podhttptest.Answer(500, `{"error_msg":"cluster unhealthy","error_code":"CDC:ErrClusterIsUnhealthy"}`),
		}),
	})
	c := ticdcapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()

	status, err := c.GetStatus(ctx, "ns", "basic", "basic-ticdc-0", ticdcapi.Options{})
	want := ticdcapi.Status{ID: "c6a43c16-0717-45af-afd6-8b3e01e44f5d", Version: "v8.5.0",
		GitHash: "f191cd00c53fdf7a2b1c9308a355092f9bf8824e", Pid: 25432, IsOwner: true}
	if err != nil || *status != want {
		t.Errorf("GetStatus = %+v, %v; want %+v", status, err, want)
	}
	captures, err := c.GetCaptures(ctx, "ns", "basic", "basic-ticdc-0", ticdcapi.Options{})
	if err != nil || len(captures) != 2 || !captures[0].IsOwner || captures[1].Address != "basic-ticdc-1.basic-ticdc-peer.ns.svc:8301" {
		t.Errorf("GetCaptures = %+v, %v", captures, err)
	}
	if healthy, err := c.IsHealthy(ctx, "ns", "basic", "basic-ticdc-0", ticdcapi.Options{}); !healthy || err != nil {
		t.Errorf("IsHealthy on 200 = %v, %v", healthy, err)
	}
	if healthy, err := c.IsHealthy(ctx, "ns", "basic", "basic-ticdc-1", ticdcapi.Options{}); healthy || err != nil {
		t.Errorf("IsHealthy on 500 = %v, %v; want false, nil", healthy, err)
	}
}

func TestDrainAndResign(t *testing.T) {
	t.Parallel()
	var drained []string
	clients := newTiCDCPods(t, map[string]http.HandlerFunc{
		"basic-ticdc-0": route(map[string]http.HandlerFunc{
			"PUT /api/v1/captures/drain": func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.Header.Get("Content-Type") != "application/json" {
					http.Error(w, "want JSON", http.StatusBadRequest)
					return
				}
				drained = append(drained, string(body))
				w.WriteHeader(http.StatusAccepted)
				_, _ = w.Write([]byte(`{"current_table_count":3}`))
			},
			"POST /api/v1/owner/resign": podhttptest.Answer(http.StatusAccepted, ""),
		}),
	})
	c := ticdcapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	n, err := c.DrainCapture(ctx, "ns", "basic", "basic-ticdc-0", "6a8e2d49", ticdcapi.Options{})
	if err != nil || n != 3 {
		t.Errorf("DrainCapture = %d, %v; want 3", n, err)
	}
	if len(drained) != 1 || drained[0] != `{"capture_id":"6a8e2d49"}` {
		t.Errorf("drain bodies = %q", drained)
	}
	if err := c.ResignOwner(ctx, "ns", "basic", "basic-ticdc-0", ticdcapi.Options{}); err != nil {
		t.Errorf("ResignOwner: %v", err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	clients := newTiCDCPods(t, map[string]http.HandlerFunc{
		"basic-ticdc-0": http.NotFound,
		"basic-ticdc-1": podhttptest.Answer(http.StatusServiceUnavailable, `{"error_msg":"owner not found"}`),
		"basic-ticdc-2": podhttptest.Answer(http.StatusBadRequest, errorJSON),
		"basic-ticdc-3": blockUntilCanceled,
		"basic-ticdc-4": podhttptest.Answer(200, "<html>"),
	})
	c := ticdcapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	opts := ticdcapi.Options{}
	// calls runs every method against a pod.
	calls := map[string]func(pod string) error{
		"GetStatus":   func(pod string) error { _, err := c.GetStatus(ctx, "ns", "basic", pod, opts); return err },
		"GetCaptures": func(pod string) error { _, err := c.GetCaptures(ctx, "ns", "basic", pod, opts); return err },
		"DrainCapture": func(pod string) error {
			_, err := c.DrainCapture(ctx, "ns", "basic", pod, "x", opts)
			return err
		},
		"ResignOwner": func(pod string) error { return c.ResignOwner(ctx, "ns", "basic", pod, opts) },
		"IsHealthy":   func(pod string) error { _, err := c.IsHealthy(ctx, "ns", "basic", pod, opts); return err },
	}
	for name, call := range calls {
		if err := call("basic-ticdc-0"); !errors.Is(err, ticdcapi.ErrNotServed) {
			t.Errorf("%s on 404: %v, want ErrNotServed", name, err)
		}
		if err := call("basic-ticdc-1"); !errors.Is(err, ticdcapi.ErrUnavailable) || !strings.Contains(err.Error(), "owner not found") {
			t.Errorf("%s on 503: %v, want ErrUnavailable quoting TiCDC", name, err)
		}
		err := call("basic-ticdc-2")
		if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "only one capture alive") {
			t.Errorf("%s on 400: %v, want TiCDC's error quoted", name, err)
		}
		var unreachable *podhttp.UnreachableError
		if err := call("basic-ticdc-3"); !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &unreachable) {
			t.Errorf("%s on a timeout: %v, want an UnreachableError of DeadlineExceeded", name, err)
		}
		if err := call("basic-ticdc-9"); err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
			t.Errorf("%s on a refused pod: %v", name, err)
		}
		if verbose := fmt.Sprintf("%+v", call("basic-ticdc-0")); !strings.Contains(verbose, "ticdcapi.(*client)."+name) {
			t.Errorf("%s error has no stack:\n%s", name, verbose)
		}
	}
	for name, call := range map[string]func(pod string) error{"GetStatus": calls["GetStatus"], "GetCaptures": calls["GetCaptures"]} {
		if err := call("basic-ticdc-4"); err == nil || !strings.Contains(err.Error(), "decode") {
			t.Errorf("%s on HTML: %v, want a decode error", name, err)
		}
	}
	if _, err := c.DrainCapture(ctx, "ns", "basic", "basic-ticdc-4", "x", opts); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("DrainCapture on HTML: %v, want a decode error", err)
	}
	shared := ticdcapi.NewClient(pdapi.NewHTTPClientCache(nil), 0)
	if _, err := shared.DrainCapture(ctx, "ns", "basic", "basic-ticdc-0", "x", ticdcapi.Options{TLSEnabled: true}); err == nil ||
		!strings.Contains(err.Error(), "no TLS config source") {
		t.Errorf("DrainCapture through the shared cache without TLS source: %v", err)
	}
}

func TestCapturePod(t *testing.T) {
	t.Parallel()
	for address, want := range map[string]string{
		"basic-ticdc-0.basic-ticdc-peer.ns.svc:8301":                "basic-ticdc-0",
		"basic-ticdc-12.basic-ticdc-peer.ns.svc.cluster.local:8301": "basic-ticdc-12",
		"basic-ticdc-1.basic-ticdc-peer.ns:8301":                    "basic-ticdc-1",
		"basic-ticdc-1.basic-ticdc-peer.ns":                         "basic-ticdc-1",
		"basic-ticdc-1.basic-ticdc-peer.other.svc:8301":             "", // another namespace
		"other-ticdc-1.other-ticdc-peer.ns.svc:8301":                "", // another cluster
		"basic-ticdc-x.basic-ticdc-peer.ns.svc:8301":                "",
		"basic-ticdc-+1.basic-ticdc-peer.ns.svc:8301":               "",
		"basic-ticdc-0.basic-ticdc-peer.ns.example.com:8301":        "",
		"10.0.0.7:8301": "",
		"":              "",
	} {
		got, ok := ticdcapi.CapturePod(address, "ns", "basic")
		if got != want || ok != (want != "") {
			t.Errorf("CapturePod(%q) = %q, %v; want %q", address, got, ok, want)
		}
	}
	for _, domain := range []string{"", "cluster.local"} {
		addr := ticdcapi.AdvertiseAddress("ns", "basic", "basic-ticdc-3", domain)
		if pod, ok := ticdcapi.CapturePod(addr, "ns", "basic"); !ok || pod != "basic-ticdc-3" {
			t.Errorf("CapturePod(AdvertiseAddress(%q) = %q) = %q, %v", domain, addr, pod, ok)
		}
	}
}
