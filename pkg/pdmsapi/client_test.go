package pdmsapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// proxied sends every request to one test server, as HTTP_PROXY does in the integration tests.
type proxied struct{ proxy *url.URL }

func (p proxied) Get(string, string, bool) (*http.Client, error) {
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(p.proxy)}}, nil
}

func serve(t *testing.T, h http.HandlerFunc) Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return NewClient(proxied{u}, 0)
}

func TestMembersAndPrimaryAreReadFromPD(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.String() {
		case "http://db-pd.ns:2379/pd/api/v2/ms/members/tso":
			_, _ = io.WriteString(w, `[{"service-addr":"http://db-tso-0.db-tso-peer.ns.svc:2379","version":"v8.5.7"},`+
				`{"service-addr":"http://db-tso-1.db-tso-peer.ns.svc:2379"}]`)
		case "http://db-pd.ns:2379/pd/api/v2/ms/primary/tso":
			_, _ = io.WriteString(w, `"http://db-tso-1.db-tso-peer.ns.svc:2379"`)
		default:
			http.Error(w, "no such path", http.StatusNotFound)
		}
	})
	ctx := context.Background()
	members, err := c.Members(ctx, "ns", "db", "tso", Options{})
	if err != nil || len(members) != 2 || members[1] != "http://db-tso-1.db-tso-peer.ns.svc:2379" {
		t.Fatalf("Members = %v, %v", members, err)
	}
	primary, err := c.Primary(ctx, "ns", "db", "tso", Options{})
	if err != nil || primary != "http://db-tso-1.db-tso-peer.ns.svc:2379" {
		t.Fatalf("Primary = %q, %v", primary, err)
	}
	if _, err := c.Members(ctx, "ns", "db", "scheduling", Options{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404 is an error naming the status: %v", err)
	}
}

func TestHealthAndTransferGoToTheService(t *testing.T) {
	t.Parallel()
	var body string
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.String() == "http://db-tso.ns:2379/tso/api/v1/health":
			_, _ = io.WriteString(w, `"ok"`)
		case r.Method == http.MethodPost && r.URL.String() == "http://db-scheduling.ns:2379/scheduling/api/v1/primary/transfer":
			b, _ := io.ReadAll(r.Body)
			body = string(b)
			if !strings.Contains(body, "db-scheduling-1") {
				http.Error(w, "not a member", http.StatusInternalServerError)
			}
		default:
			http.Error(w, "no such path", http.StatusNotFound)
		}
	})
	ctx := context.Background()
	if ok, err := c.Healthy(ctx, "ns", "db", Options{}); !ok || err != nil {
		t.Errorf("Healthy = %v, %v", ok, err)
	}
	if err := c.TransferPrimary(ctx, "ns", "db", "scheduling", "db-scheduling-1", Options{}); err != nil || body != `{"new_primary":"db-scheduling-1"}` {
		t.Errorf("TransferPrimary = %v, body %s", err, body)
	}
	if err := c.TransferPrimary(ctx, "ns", "db", "scheduling", "db-scheduling-9", Options{}); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("a refused transfer is an error naming the status: %v", err)
	}
}

func TestUnreachableTSOIsUnhealthy(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("http://127.0.0.1:1") // nothing listens on port 1
	c := NewClient(proxied{u}, 0)
	if ok, err := c.Healthy(context.Background(), "ns", "db", Options{}); ok || err != nil {
		t.Errorf("Healthy = %v, %v; want false without an error", ok, err)
	}
}
