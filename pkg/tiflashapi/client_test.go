package tiflashapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tiflashapi"
)

// newTiFlashPods serves per-pod handlers of /tiflash/store-status behind a proxy; a pod without a
// handler refuses the connection (the proxy answers 502), and another path is not found, as TiFlash's
// proxy answers.
func newTiFlashPods(t *testing.T, pods map[string]http.HandlerFunc) tiflashapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-tiflash-peer.ns:20292", Paths: []string{"/tiflash/store-status"}, Handlers: pods}.Serve(t)
}

func TestStoreStatusURL(t *testing.T) {
	t.Parallel()
	if got := tiflashapi.StoreStatusURL("ns", "basic", "basic-tiflash-1", tiflashapi.Options{}); got != "http://basic-tiflash-1.basic-tiflash-peer.ns:20292/tiflash/store-status" {
		t.Errorf("StoreStatusURL = %q", got)
	}
	got := tiflashapi.StoreStatusURL("ns", "basic", "basic-tiflash-1", tiflashapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != "https://basic-tiflash-1.basic-tiflash-peer.ns.svc.cluster.local:20292/tiflash/store-status" {
		t.Errorf("StoreStatusURL with TLS and domain = %q", got)
	}
}

func TestGetStoreStatus(t *testing.T) {
	t.Parallel()
	clients := newTiFlashPods(t, map[string]http.HandlerFunc{
		"basic-tiflash-0": podhttptest.Answer(200, "Running"),
		"basic-tiflash-1": podhttptest.Answer(200, "Idle\n"),
		"basic-tiflash-2": podhttptest.Answer(200, "Stopping"),
		"basic-tiflash-3": podhttptest.Answer(200, "Warming"),
	})
	c := tiflashapi.NewClient(clients, 100*time.Millisecond)
	for pod, want := range map[string]tiflashapi.StoreStatus{
		"basic-tiflash-0": tiflashapi.StoreStatusRunning,
		"basic-tiflash-1": tiflashapi.StoreStatusIdle,
		"basic-tiflash-2": tiflashapi.StoreStatusStopping,
		"basic-tiflash-3": "Warming", // an unknown word is passed on, not hidden
	} {
		got, err := c.GetStoreStatus(context.Background(), "ns", "basic", pod, tiflashapi.Options{})
		if err != nil || got != want {
			t.Errorf("GetStoreStatus(%s) = %q, %v; want %q", pod, got, err, want)
		}
	}
}

func TestGetStoreStatusErrors(t *testing.T) {
	t.Parallel()
	clients := newTiFlashPods(t, map[string]http.HandlerFunc{
		"basic-tiflash-0": http.NotFound,
		"basic-tiflash-1": podhttptest.Answer(500, "internal error"),
		"basic-tiflash-2": podhttptest.Answer(200, ""),
		"basic-tiflash-3": podhttptest.BlockUntilCanceled,
	})
	c := tiflashapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()

	_, err := c.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-0", tiflashapi.Options{})
	if !errors.Is(err, tiflashapi.ErrStoreStatusNotServed) {
		t.Errorf("404: err = %v, want ErrStoreStatusNotServed", err)
	}
	if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "tiflashapi.(*client).GetStoreStatus") {
		t.Errorf("404 error has no stack:\n%s", verbose)
	}
	for pod, want := range map[string]string{
		"basic-tiflash-1": "tiflash GetStoreStatus basic-tiflash-1: GET http://basic-tiflash-1.basic-tiflash-peer.ns:20292/tiflash/store-status: 500 Internal Server Error: internal error",
		"basic-tiflash-2": "empty store status",
		"basic-tiflash-3": "context deadline exceeded",
		"basic-tiflash-9": "502 Bad Gateway",
	} {
		if _, err := c.GetStoreStatus(ctx, "ns", "basic", pod, tiflashapi.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GetStoreStatus(%s): err = %v, want it to mention %q", pod, err, want)
		}
	}
	_, err = c.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-3", tiflashapi.Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v, want context.DeadlineExceeded through the wrap", err)
	}
	if _, err := c.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-0", tiflashapi.Options{TLSEnabled: true}); err == nil {
		t.Error("GetStoreStatus without TLS material must fail")
	}
	shared := tiflashapi.NewClient(pdapi.NewHTTPClientCache(nil), 0)
	_, err = shared.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-0", tiflashapi.Options{TLSEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "no TLS config source") {
		t.Errorf("through the shared cache without TLS source: err = %v", err)
	}
}

func TestFakeClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := tiflashapi.NewFakeClient()
	fake.SetStoreStatus("ns", "basic-tiflash-0", tiflashapi.StoreStatusIdle)
	errDown := errors.New("down")
	fake.SetError("ns", "basic-tiflash-1", errDown)
	if s, err := fake.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-0", tiflashapi.Options{}); s != tiflashapi.StoreStatusIdle || err != nil {
		t.Errorf("GetStoreStatus = %q, %v", s, err)
	}
	if _, err := fake.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-1", tiflashapi.Options{}); !errors.Is(err, errDown) {
		t.Errorf("injected error: %v", err)
	}
	fake.SetError("ns", "basic-tiflash-1", nil)
	if s, err := fake.GetStoreStatus(ctx, "ns", "basic", "basic-tiflash-1", tiflashapi.Options{TLSEnabled: true}); s != tiflashapi.StoreStatusRunning || err != nil {
		t.Errorf("default = %q, %v; want Running", s, err)
	}
	want := tiflashapi.Call{Namespace: "ns", TCName: "basic", PodName: "basic-tiflash-1", Options: tiflashapi.Options{TLSEnabled: true}}
	if calls := fake.Calls(); len(calls) != 3 || calls[2] != want {
		t.Errorf("calls = %+v", calls)
	}
}
