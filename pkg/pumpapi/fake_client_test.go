package pumpapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// TestFakeClientGoesOfflineAsPumpDoes follows one pump from online to offline: the request is accepted
// once, the closing pump serves no registry while another does (still naming it online), and once
// offline the pump no longer answers.
func TestFakeClientGoesOfflineAsPumpDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pumpapi.NewFakeClient()
	for _, pod := range []string{"basic-pump-0", "basic-pump-1"} {
		f.SetPump("ns", "basic", pod, pumpapi.FakePump{NodeID: pod + ":8250", Host: pod + ".basic-pump:8250", State: pumpapi.StateOnline})
	}
	opts := pumpapi.Options{}
	if err := f.Offline(ctx, "ns", "basic", "basic-pump-1", "basic-pump-0:8250", opts); err == nil {
		t.Error("a pump accepted going offline for another node")
	}
	if err := f.Offline(ctx, "ns", "basic", "basic-pump-1", "basic-pump-1:8250", opts); err != nil {
		t.Fatalf("Offline: %v", err)
	}
	var refused *pumpapi.RefusedError
	if err := f.Offline(ctx, "ns", "basic", "basic-pump-1", "basic-pump-1:8250", opts); !errors.As(err, &refused) ||
		refused.PumpState() != pumpapi.StateClosing {
		t.Errorf("second Offline: %v, want a refusal naming closing", err)
	}
	if _, err := f.GetStatus(ctx, "ns", "basic", "basic-pump-1", opts); !errors.Is(err, pumpapi.ErrRegistryUnavailable) {
		t.Errorf("GetStatus of the closing pump: %v, want ErrRegistryUnavailable", err)
	}
	status, err := f.GetStatus(ctx, "ns", "basic", "basic-pump-0", opts)
	if err != nil || status.Nodes["basic-pump-1:8250"].State != pumpapi.StateOnline {
		t.Errorf("registry while closing = %+v, %v; want basic-pump-1 still online", status, err)
	}
	f.FinishOffline("ns", "basic", "basic-pump-1")
	status, err = f.GetStatus(ctx, "ns", "basic", "basic-pump-0", opts)
	if err != nil || status.Nodes["basic-pump-1:8250"].State != pumpapi.StateOffline {
		t.Errorf("registry after FinishOffline = %+v, %v; want basic-pump-1 offline", status, err)
	}
	var unreachable *podhttp.UnreachableError
	if _, err := f.GetStatus(ctx, "ns", "basic", "basic-pump-1", opts); !errors.As(err, &unreachable) {
		t.Errorf("GetStatus of the exited pump: %v, want unreachable", err)
	}
	if n := len(f.CallsOf(pumpapi.MethodOffline)); n != 3 {
		t.Errorf("recorded %d Offline calls, want 3", n)
	}
	f.SetError("ns", "basic-pump-0", errors.New("injected"))
	if _, err := f.GetStatus(ctx, "ns", "basic", "basic-pump-0", opts); err == nil || err.Error() != "injected" {
		t.Errorf("injected error: %v", err)
	}
	if p, ok := f.Pump("ns", "basic", "basic-pump-1"); !ok || !p.Stopped || p.State != pumpapi.StateOffline {
		t.Errorf("Pump = %+v, %v", p, ok)
	}
}
