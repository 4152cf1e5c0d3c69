package podhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
)

// The operator hands its shared cache to every per-pod client.
var _ podhttp.HTTPClients = (*pdapi.HTTPClientCache)(nil)

func TestPortURL(t *testing.T) {
	t.Parallel()
	port := podhttp.Port{Component: "tikv", Number: 20180}
	cases := []struct {
		opts podhttp.Options
		want string
	}{
		{podhttp.Options{}, "http://basic-tikv-2.basic-tikv-peer.ns:20180"},
		{podhttp.Options{TLSEnabled: true}, "https://basic-tikv-2.basic-tikv-peer.ns:20180"},
		{podhttp.Options{ClusterDomain: "cluster.local"}, "http://basic-tikv-2.basic-tikv-peer.ns.svc.cluster.local:20180"},
	}
	for _, tc := range cases {
		if got := port.URL("ns", "basic", "basic-tikv-2", tc.opts); got != tc.want {
			t.Errorf("URL(%+v) = %q, want %q", tc.opts, got, tc.want)
		}
	}
}

// newPods serves per-pod handlers of /x behind a proxy.
func newPods(t *testing.T, pods map[string]http.HandlerFunc) podhttp.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-c-peer.ns:1", Paths: []string{"/x"}, Handlers: pods}.Serve(t)
}

func request(pod string, opts podhttp.Options) podhttp.Request {
	url := podhttp.Port{Component: "c", Number: 1}.URL("ns", "basic", pod, opts) + "/x"
	return podhttp.NewRequest(http.MethodGet, url, "ns", "basic", opts)
}

func TestReadAll(t *testing.T) {
	t.Parallel()
	clients := newPods(t, map[string]http.HandlerFunc{
		"basic-c-0": podhttptest.Answer(200, "0123456789"),
		"basic-c-1": podhttptest.Answer(503, "starting"),
		"basic-c-2": podhttptest.BlockUntilCanceled,
	})
	c := podhttp.NewClient(clients, 0, 100*time.Millisecond, 4)
	ctx := context.Background()

	status, body, err := c.ReadAll(ctx, request("basic-c-0", podhttp.Options{}))
	if status != 200 || string(body) != "0123" || err != nil {
		t.Errorf("ReadAll = %d, %q, %v; want 200 and the first 4 bytes", status, body, err)
	}
	if status, body, err := c.ReadAll(ctx, request("basic-c-1", podhttp.Options{})); status != 503 || string(body) != "star" || err != nil {
		t.Errorf("ReadAll of a 503 = %d, %q, %v; want the status and body, no error", status, body, err)
	}
	var unreachable *podhttp.UnreachableError
	var urlErr *url.Error
	_, _, err = c.ReadAll(ctx, request("basic-c-2", podhttp.Options{}))
	if !errors.As(err, &unreachable) || !errors.As(err, &urlErr) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v, want an UnreachableError over a *url.Error over context.DeadlineExceeded", err)
	}
	_, _, err = c.ReadAll(ctx, request("basic-c-0", podhttp.Options{TLSEnabled: true}))
	if err == nil || errors.As(err, &unreachable) || !strings.Contains(err.Error(), "no TLS in this test") {
		t.Errorf("no TLS client: err = %v, want the HTTPClients' error as is", err)
	}
}

func TestDoPassesReadErrors(t *testing.T) {
	t.Parallel()
	clients := newPods(t, map[string]http.HandlerFunc{"basic-c-0": podhttptest.Answer(200, "0123456789")})
	c := podhttp.NewClient(clients, time.Second, 0, 1<<10)
	errStop := errors.New("stop")
	var first []byte
	err := c.Do(context.Background(), request("basic-c-0", podhttp.Options{}), func(status int, body io.Reader) error {
		first = make([]byte, 2)
		_, _ = io.ReadFull(body, first)
		return errStop
	})
	if !errors.Is(err, errStop) || string(first) != "01" {
		t.Errorf("Do = %v after reading %q; want read's error after reading the start", err, first)
	}
}

func TestStatusError(t *testing.T) {
	t.Parallel()
	err := podhttp.StatusError(http.MethodPost, "http://h:1/info", 500, []byte("  internal error\n"))
	if want := "POST http://h:1/info: 500 Internal Server Error: internal error"; err.Error() != want {
		t.Errorf("StatusError = %q, want %q", err, want)
	}
	long := strings.Repeat("x", 300)
	if got := podhttp.Snippet([]byte(long)); got != long[:256]+"…" {
		t.Errorf("Snippet of 300 bytes = %q", got)
	}
}
