package ticdcapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

func TestFakeClientAnswersLikeTiCDC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := ticdcapi.NewFakeClient()
	opts := ticdcapi.Options{}
	var unreachable *podhttp.UnreachableError
	if _, err := f.GetCaptures(ctx, "ns", "basic", "basic-ticdc-0", opts); !errors.As(err, &unreachable) {
		t.Fatalf("a pod without a capture answered: %v", err)
	}
	f.SetCapture("ns", "basic", "basic-ticdc-0", ticdcapi.FakeCapture{ID: "a", Version: "v8.5.0", Owner: true, Tables: 2})
	if _, err := f.DrainCapture(ctx, "ns", "basic", "basic-ticdc-0", "a", opts); err == nil {
		t.Error("the only capture was drained")
	}
	f.SetCapture("ns", "basic", "basic-ticdc-1", ticdcapi.FakeCapture{ID: "b", Version: "v8.5.0", Tables: 3})
	captures, err := f.GetCaptures(ctx, "ns", "basic", "basic-ticdc-1", opts)
	if err != nil || len(captures) != 2 || captures[0].ID != "a" || !captures[0].IsOwner ||
		captures[1].Address != "basic-ticdc-1.basic-ticdc-peer.ns.svc:8301" {
		t.Fatalf("GetCaptures = %+v, %v", captures, err)
	}
	if _, err := f.DrainCapture(ctx, "ns", "basic", "basic-ticdc-1", "a", opts); err == nil {
		t.Error("the owner was drained")
	}
	if _, err := f.DrainCapture(ctx, "ns", "basic", "basic-ticdc-1", "zzz", opts); err == nil {
		t.Error("an unknown capture was drained")
	}
	if n, err := f.DrainCapture(ctx, "ns", "basic", "basic-ticdc-0", "b", opts); n != 3 || err != nil {
		t.Errorf("DrainCapture = %d, %v; want 3", n, err)
	}
	if err := f.ResignOwner(ctx, "ns", "basic", "basic-ticdc-1", opts); err != nil {
		t.Fatal(err)
	}
	if s, err := f.GetStatus(ctx, "ns", "basic", "basic-ticdc-1", opts); err != nil || !s.IsOwner || s.ID != "b" {
		t.Errorf("after resigning, basic-ticdc-1 = %+v, %v; want the owner", s, err)
	}
	f.SetHealthy("ns", "basic", false)
	if ok, err := f.IsHealthy(ctx, "ns", "basic", "basic-ticdc-0", opts); ok || err != nil {
		t.Errorf("IsHealthy = %v, %v; want false", ok, err)
	}
	errDown := errors.New("down")
	f.SetMethodError(ticdcapi.MethodGetStatus, errDown)
	if _, err := f.GetStatus(ctx, "ns", "basic", "basic-ticdc-0", opts); !errors.Is(err, errDown) {
		t.Errorf("method error: %v", err)
	}
	f.SetMethodError(ticdcapi.MethodGetStatus, nil)
	f.SetError("ns", "basic-ticdc-0", errDown)
	if _, err := f.GetCaptures(ctx, "ns", "basic", "basic-ticdc-0", opts); !errors.Is(err, errDown) {
		t.Errorf("pod error: %v", err)
	}
	f.SetError("ns", "basic-ticdc-0", nil)
	f.RemoveCapture("ns", "basic", "basic-ticdc-0")
	if got := f.Captures("ns", "basic"); len(got) != 1 || got["basic-ticdc-1"].ID != "b" {
		t.Errorf("Captures = %+v", got)
	}
	drains := f.CallsOf(ticdcapi.MethodDrainCapture)
	if len(drains) != 4 || drains[3].CaptureID != "b" || drains[3].PodName != "basic-ticdc-0" {
		t.Errorf("drain calls = %+v", drains)
	}
}
