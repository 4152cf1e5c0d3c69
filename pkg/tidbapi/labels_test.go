package tidbapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// TestSetLabels: POST /labels carries the labels as a JSON object; a status
// other than 200 is an error naming the URL and TiDB's text.
func TestSetLabels(t *testing.T) {
	t.Parallel()
	var got map[string]string
	clients := podhttptest.Pods{PeerHost: "basic-tidb-peer.ns:10080", Paths: []string{"/labels"}, Handlers: map[string]http.HandlerFunc{
		"basic-tidb-0": func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad request "+r.Method, http.StatusBadRequest)
				return
			}
			if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`"The labels of TiDB server have been updated."`))
		},
		"basic-tidb-1": podhttptest.Answer(http.StatusBadRequest, "labels not supported"),
	}}.Serve(t)
	c := tidbapi.NewClient(clients, 0).(tidbapi.LabelSetter)
	if err := c.SetLabels(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{}, map[string]string{"zone": "z1"}); err != nil {
		t.Fatal(err)
	}
	if got["zone"] != "z1" || len(got) != 1 {
		t.Errorf("TiDB got labels %v, want zone=z1", got)
	}
	err := c.SetLabels(context.Background(), "ns", "basic", "basic-tidb-1", tidbapi.Options{}, map[string]string{"zone": "z1"})
	if err == nil || !strings.Contains(err.Error(), "/labels") || !strings.Contains(err.Error(), "labels not supported") {
		t.Errorf("SetLabels error = %v, want one naming the URL and TiDB's answer", err)
	}
}

// TestFakeSetLabels: the fake merges the labels into what GetInfo reports.
func TestFakeSetLabels(t *testing.T) {
	t.Parallel()
	f := tidbapi.NewFakeClient()
	f.SetInfo("ns", "p0", tidbapi.Info{Labels: map[string]string{"host": "n0"}})
	if err := f.SetLabels(context.Background(), "ns", "basic", "p0", tidbapi.Options{}, map[string]string{"zone": "z1"}); err != nil {
		t.Fatal(err)
	}
	info, err := f.GetInfo(context.Background(), "ns", "basic", "p0", tidbapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels["zone"] != "z1" || info.Labels["host"] != "n0" {
		t.Errorf("labels after SetLabels = %v, want host=n0 zone=z1", info.Labels)
	}
}
