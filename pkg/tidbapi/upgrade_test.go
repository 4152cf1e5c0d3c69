package tidbapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// TestUpgradeSwitch: start and finish are bodyless POSTs to /upgrade/<op>;
// "success!" and the duplicated-operation answers are accepted, anything
// else (TiDB's 400, an unexpected 200 body) is an error naming the URL.
func TestUpgradeSwitch(t *testing.T) {
	t.Parallel()
	var got []string
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.ContentLength > 0 {
				http.Error(w, "This API only support POST method", http.StatusBadRequest)
				return
			}
			got = append(got, r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}
	}
	clients := podhttptest.Pods{PeerHost: "basic-tidb-peer.ns:10080", Paths: []string{"/upgrade/start", "/upgrade/finish"},
		Handlers: map[string]http.HandlerFunc{
			"basic-tidb-0": answer(`"success!"`),
			"basic-tidb-1": answer(`"It's a duplicated operation and the cluster is already in upgrading state."`),
			"basic-tidb-2": answer(`"It's a duplicated operation and the cluster is already in normal state."`),
			"basic-tidb-3": podhttptest.Answer(http.StatusBadRequest, "[domain:8027]session is closed"),
			"basic-tidb-4": answer(`"not success"`),
		}}.Serve(t)
	c := tidbapi.NewClient(clients, 0).(tidbapi.UpgradeSwitch)
	ctx, opts := context.Background(), tidbapi.Options{}
	for _, ok := range []struct {
		pod   string
		start bool
	}{{"basic-tidb-0", true}, {"basic-tidb-0", false}, {"basic-tidb-1", true}, {"basic-tidb-2", false}} {
		call := c.FinishUpgrade
		if ok.start {
			call = c.StartUpgrade
		}
		if err := call(ctx, "ns", "basic", ok.pod, opts); err != nil {
			t.Errorf("%s (start=%v): %v", ok.pod, ok.start, err)
		}
	}
	if want := "/upgrade/start,/upgrade/finish,/upgrade/start,/upgrade/finish"; strings.Join(got, ",") != want {
		t.Errorf("paths %v, want %s", got, want)
	}
	// The duplicated answer of the other operation is no success.
	if err := c.StartUpgrade(ctx, "ns", "basic", "basic-tidb-2", opts); err == nil {
		t.Error("start answered 'already in normal state' must be an error")
	}
	err := c.StartUpgrade(ctx, "ns", "basic", "basic-tidb-3", opts)
	if err == nil || !strings.Contains(err.Error(), "/upgrade/start") || !strings.Contains(err.Error(), "session is closed") {
		t.Errorf("400 error = %v, want one naming the URL and TiDB's text", err)
	}
	if err := c.FinishUpgrade(ctx, "ns", "basic", "basic-tidb-4", opts); err == nil || !strings.Contains(err.Error(), "not success") {
		t.Errorf("unexpected body error = %v", err)
	}
	if err := c.StartUpgrade(ctx, "ns", "basic", "basic-tidb-9", opts); err == nil {
		t.Error("an unreachable pod must be an error")
	}
}

// TestFakeUpgradeSwitch: the fake records the calls and fails with the
// injected error.
func TestFakeUpgradeSwitch(t *testing.T) {
	t.Parallel()
	f := tidbapi.NewFakeClient()
	ctx := context.Background()
	if err := f.StartUpgrade(ctx, "ns", "basic", "p0", tidbapi.Options{}); err != nil {
		t.Fatal(err)
	}
	f.SetError("ns", "p1", context.DeadlineExceeded)
	if err := f.FinishUpgrade(ctx, "ns", "basic", "p1", tidbapi.Options{}); err == nil {
		t.Error("want the injected error")
	}
	calls := f.Calls()
	if len(calls) != 2 || calls[0].Method != "StartUpgrade" || calls[1].Method != "FinishUpgrade" || calls[1].PodName != "p1" {
		t.Errorf("calls %+v", calls)
	}
}
