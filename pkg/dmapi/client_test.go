package dmapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
)

// dm-master's answers, in the shape of its grpc-gateway JSON.
const (
	mastersJSON = `{"result":true,"msg":"","members":[{"master":{"msg":"","masters":[` +
		`{"name":"basic-dm-master-0","memberID":"1170966016464425456","alive":true,` +
		`"peerURLs":["http://basic-dm-master-0.basic-dm-master-peer:8291"],"clientURLs":["http://basic-dm-master-0.basic-dm-master-peer:8261"]},` +
		`{"name":"basic-dm-master-1","memberID":42,"peerURLs":["http://basic-dm-master-1.basic-dm-master-peer:8291"]}]}}]}`
	workersJSON = `{"result":true,"msg":"","members":[{"worker":{"msg":"","workers":[` +
		`{"name":"basic-dm-worker-0","addr":"basic-dm-worker-0.basic-dm-worker-peer:8262","stage":"free","source":""}]}}]}`
	leaderJSON = `{"result":true,"msg":"","members":[{"leader":{"msg":"","name":"basic-dm-master-0",` +
		`"addr":"basic-dm-master-0.basic-dm-master-peer:8261"}}]}`
	okJSON      = `{"result":true,"msg":""}`
	refusedJSON = `{"result":false,"msg":"worker basic-dm-worker-0 is not offline"}`
)

// request is what the stub saw of one request.
type request struct{ method, host, path, query string }

// stub is dm-master behind a proxy: it answers every request with the scripted status and body and
// records what it was asked.
type stub struct {
	mu     sync.Mutex
	seen   []request
	status int
	body   string
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, request{method: r.Method, host: r.Host, path: r.URL.Path, query: r.URL.RawQuery})
	status, body := s.status, s.body
	s.mu.Unlock()
	if status == 0 {
		podhttptest.BlockUntilCanceled(w, r)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (s *stub) answer(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *stub) last(t *testing.T) request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		t.Fatal("no request reached dm-master")
	}
	return s.seen[len(s.seen)-1]
}

func (s *stub) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// newClient serves a stub as the proxy of a client of DMCluster ns/basic.
func newClient(t *testing.T, timeout time.Duration) (dmapi.Client, *stub) {
	t.Helper()
	s := &stub{status: http.StatusOK}
	proxy := httptest.NewServer(s)
	t.Cleanup(proxy.Close)
	proxyURL, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	transport := pdapi.NewTransport(nil)
	transport.Proxy = http.ProxyURL(proxyURL)
	clients := podhttptest.Plain(&http.Client{Transport: transport})
	return dmapi.NewControlWithHTTPClients(clients, timeout).GetClient("ns", "basic", dmapi.Options{}), s
}

func TestURLs(t *testing.T) {
	t.Parallel()
	if got := dmapi.ServiceURL("ns", "basic", dmapi.Options{}); got != "http://basic-dm-master.ns:8261" {
		t.Errorf("ServiceURL = %q", got)
	}
	if got := dmapi.PeerURL("ns", "basic", "basic-dm-master-1", dmapi.Options{TLSEnabled: true}); got != "https://basic-dm-master-1.basic-dm-master-peer.ns:8261" {
		t.Errorf("PeerURL = %q", got)
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s := newClient(t, 0)

	s.answer(http.StatusOK, mastersJSON)
	masters, err := c.GetMasters(ctx)
	if err != nil || len(masters) != 2 || masters[0].Name != "basic-dm-master-0" || masters[0].MemberID != "1170966016464425456" ||
		!masters[0].Alive || masters[0].ClientURLs[0] != "http://basic-dm-master-0.basic-dm-master-peer:8261" ||
		masters[1].MemberID != "42" || masters[1].Alive || masters[1].PeerURLs[0] != "http://basic-dm-master-1.basic-dm-master-peer:8291" {
		t.Fatalf("GetMasters = %+v, %v", masters, err)
	}
	if got := s.last(t); got != (request{"GET", "basic-dm-master.ns:8261", "/apis/v1alpha1/members", "master=true"}) {
		t.Errorf("GetMasters sent %+v", got)
	}

	s.answer(http.StatusOK, workersJSON)
	workers, err := c.GetWorkers(ctx)
	if err != nil || len(workers) != 1 || workers[0] != (dmapi.WorkerMember{Name: "basic-dm-worker-0", Addr: "basic-dm-worker-0.basic-dm-worker-peer:8262", Stage: dmapi.StageFree}) {
		t.Fatalf("GetWorkers = %+v, %v", workers, err)
	}
	if got := s.last(t); got.query != "worker=true" || got.method != "GET" || got.path != dmapi.PathMembers {
		t.Errorf("GetWorkers sent %+v", got)
	}

	s.answer(http.StatusOK, leaderJSON)
	leader, err := c.GetLeader(ctx)
	if err != nil || leader.Name != "basic-dm-master-0" || leader.Addr != "basic-dm-master-0.basic-dm-master-peer:8261" {
		t.Fatalf("GetLeader = %+v, %v", leader, err)
	}
	if got := s.last(t); got.query != "leader=true" {
		t.Errorf("GetLeader sent %+v", got)
	}
}

func TestWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s := newClient(t, 0)
	s.answer(http.StatusOK, okJSON)
	cases := []struct {
		call func() error
		want request
	}{
		{func() error { return c.EvictLeader(ctx, "basic-dm-master-2") },
			request{"PUT", "basic-dm-master-2.basic-dm-master-peer.ns:8261", "/apis/v1alpha1/leader/1", ""}},
		{func() error { return c.DeleteMaster(ctx, "basic-dm-master-2") },
			request{"DELETE", "basic-dm-master.ns:8261", "/apis/v1alpha1/members/master/basic-dm-master-2", ""}},
		{func() error { return c.DeleteWorker(ctx, "basic-dm-worker-1") },
			request{"DELETE", "basic-dm-master.ns:8261", "/apis/v1alpha1/members/worker/basic-dm-worker-1", ""}},
	}
	for _, tc := range cases {
		if err := tc.call(); err != nil {
			t.Fatalf("%s %s: %v", tc.want.method, tc.want.path, err)
		}
		if got := s.last(t); got != tc.want {
			t.Errorf("sent %+v, want %+v", got, tc.want)
		}
	}
}

func TestEvictLeaderRefusesOtherPods(t *testing.T) {
	t.Parallel()
	c, s := newClient(t, 0)
	for _, pod := range []string{"basic-dm-worker-0", "other-dm-master-0", "basic-dm-master", "basic-dm-master-x", ""} {
		if err := c.EvictLeader(context.Background(), pod); !errors.Is(err, dmapi.ErrNotMasterPod) {
			t.Errorf("EvictLeader(%q) = %v, want ErrNotMasterPod", pod, err)
		}
	}
	if n := s.count(); n != 0 {
		t.Errorf("%d requests sent for pods of no dm-master", n)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s := newClient(t, 0)

	s.answer(http.StatusOK, refusedJSON)
	var refused *dmapi.RefusedError
	err := c.DeleteWorker(ctx, "basic-dm-worker-0")
	if !errors.As(err, &refused) || refused.Msg != "worker basic-dm-worker-0 is not offline" {
		t.Errorf("result=false: %v", err)
	}
	if _, err := c.GetMasters(ctx); !errors.As(err, &refused) {
		t.Errorf("result=false on a list: %v", err)
	}

	for _, body := range []string{`{"result":true,"msg":"","members":[]}`, `{"result":true,"msg":"","members":[{"master":{}},{"master":{}}]}`,
		`{"result":true,"members":[{"worker":{"workers":[]}}]}`} {
		s.answer(http.StatusOK, body)
		if _, err := c.GetMasters(ctx); !errors.Is(err, dmapi.ErrInvalidResponse) {
			t.Errorf("members %s: %v, want ErrInvalidResponse", body, err)
		}
	}

	s.answer(http.StatusInternalServerError, "etcdserver: request timed out")
	err = c.EvictLeader(ctx, "basic-dm-master-0")
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "etcdserver: request timed out") {
		t.Errorf("status 500: %v", err)
	}
	s.answer(http.StatusBadRequest, `{"code":3,"message":"bad"}`)
	if _, err := c.GetLeader(ctx); err == nil || !strings.Contains(err.Error(), `"message":"bad"`) {
		t.Errorf("status 400: %v", err)
	}
	s.answer(http.StatusOK, "not json")
	if _, err := c.GetWorkers(ctx); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("bad JSON: %v", err)
	}
	s.answer(http.StatusOK, `{"result":true,"members":[{"master":{"masters":[{"name":"a","memberID":true}]}}]}`)
	if _, err := c.GetMasters(ctx); err == nil {
		t.Error("a boolean member ID decoded")
	}
}

func TestTimeoutIsUnreachable(t *testing.T) {
	t.Parallel()
	c, s := newClient(t, 50*time.Millisecond)
	s.answer(0, "")
	var unreachable *podhttp.UnreachableError
	if _, err := c.GetMasters(context.Background()); !errors.As(err, &unreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a dm-master that never answers: %v", err)
	}
}

func TestControlCachesPerCluster(t *testing.T) {
	t.Parallel()
	ctl := dmapi.NewControlWithHTTPClients(podhttptest.Plain(http.DefaultClient), 0)
	a := ctl.GetClient("ns", "basic", dmapi.Options{})
	if ctl.GetClient("ns", "basic", dmapi.Options{}) != a {
		t.Error("the same cluster got a second client")
	}
	if ctl.GetClient("ns", "other", dmapi.Options{}) == a || ctl.GetClient("ns", "basic", dmapi.Options{TLSEnabled: true}) == a {
		t.Error("another cluster or TLS setting got the same client")
	}
	// A TLS client the HTTPClients cannot give fails its requests, not GetClient.
	tlsClient := ctl.GetClient("ns", "basic", dmapi.Options{TLSEnabled: true})
	if _, err := tlsClient.GetMasters(context.Background()); err == nil || !strings.Contains(err.Error(), "no TLS") {
		t.Errorf("TLS without a certificate: %v", err)
	}
}

func TestSecretTLSReadsTheDMClientSecret(t *testing.T) {
	t.Parallel()
	var asked string
	fn := dmapi.SecretTLS(func(_ context.Context, namespace, name string) (map[string][]byte, error) {
		asked = namespace + "/" + name
		return nil, errors.New("not found")
	})
	if _, err := fn("ns", "basic"); err == nil || asked != "ns/basic-dm-client-secret" {
		t.Errorf("SecretTLS read %q: %v", asked, err)
	}
}
