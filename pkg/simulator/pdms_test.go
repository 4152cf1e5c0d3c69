package simulator

import (
	"net/http"
	"strings"
	"testing"
)

// TestPDMSMembersPrimaryAndTransfer: PD lists each micro-service's Running pods, names the lowest as
// primary until a transfer moves it, and the tso Service answers its health check.
func TestPDMSMembersPrimaryAndTransfer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 1)
	h.addPods(ComponentTSO, 2)
	h.addPods(ComponentScheduling, 1)

	r := h.pd(http.MethodGet, "/pd/api/v2/ms/members/tso", "")
	wantStatus(t, r, http.StatusOK)
	members := decode[[]pdmsEntry](t, r)
	if len(members) != 2 || members[0].ServiceAddr != "http://basic-tso-0.basic-tso-peer.default.svc:2379" {
		t.Fatalf("tso members %+v", members)
	}
	if got := decode[string](t, h.pd(http.MethodGet, "/pd/api/v2/ms/primary/tso", "")); !strings.Contains(got, "basic-tso-0.") {
		t.Fatalf("tso primary %q, want basic-tso-0", got)
	}
	wantStatus(t, h.proxy(http.MethodPost, "http://basic-tso.default:2379/tso/api/v1/primary/transfer", `{"new_primary":"basic-tso-9"}`),
		http.StatusInternalServerError)
	wantStatus(t, h.proxy(http.MethodPost, "http://basic-tso.default:2379/tso/api/v1/primary/transfer", `{"new_primary":"basic-tso-1"}`),
		http.StatusOK)
	if got := decode[string](t, h.pd(http.MethodGet, "/pd/api/v2/ms/primary/tso", "")); !strings.Contains(got, "basic-tso-1.") {
		t.Fatalf("tso primary %q after the transfer, want basic-tso-1", got)
	}
	h.deletePod("basic-tso-1")
	if got := decode[string](t, h.pd(http.MethodGet, "/pd/api/v2/ms/primary/tso", "")); !strings.Contains(got, "basic-tso-0.") {
		t.Errorf("tso primary %q once basic-tso-1 is gone, want basic-tso-0", got)
	}
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-tso.default:2379/tso/api/v1/health", ""), http.StatusOK)
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-scheduling.default:2379/tso/api/v1/health", ""), http.StatusNotFound)
	wantStatus(t, h.pd(http.MethodGet, "/pd/api/v2/ms/members/bogus", ""), http.StatusBadRequest)
	if got := decode[[]pdmsEntry](t, h.pd(http.MethodGet, "/pd/api/v2/ms/members/scheduling", "")); len(got) != 1 {
		t.Errorf("scheduling members %+v", got)
	}
}
