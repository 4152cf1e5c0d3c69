package pdapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	perrors "github.com/pingcap/errors"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPingcapErrorsHideSentinels records why pdapi.Trace exists: in github.com/pingcap/errors v0.11.4 the
// wrappers implement Cause() but not Unwrap(), so the standard errors.Is cannot see through them.
func TestPingcapErrorsHideSentinels(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("pd GetStores: %w", pdapi.ErrTiKVNotBootstrapped)
	for name, err := range map[string]error{
		"Trace":     perrors.Trace(wrapped),
		"Annotatef": perrors.Annotatef(wrapped, "store %d", 1),
	} {
		if errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
			t.Errorf("perrors.%s: errors.Is sees through it; pdapi.Trace may be replaced by it", name)
		}
		if !errors.Is(perrors.Cause(err), pdapi.ErrTiKVNotBootstrapped) {
			t.Errorf("perrors.%s: Cause lost the error", name)
		}
	}
}

func TestTraceKeepsSentinelsAndRecordsStack(t *testing.T) {
	t.Parallel()
	status := &pdapi.StatusError{Method: "GET", URL: "http://pd/x", StatusCode: 500,
		Message: "[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first"}
	annotated := fmt.Errorf("pd GetStores: %w", status)
	err := pdapi.Trace(annotated)

	if !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		t.Errorf("errors.Is(%v, ErrTiKVNotBootstrapped) = false", err)
	}
	var se *pdapi.StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 {
		t.Errorf("errors.As StatusError = %v", se)
	}
	if perrors.Cause(err) != annotated { //nolint:errorlint // identity: Cause stops at fmt's wrapper, which has no Cause method
		t.Errorf("perrors.Cause = %v, want the traced error", perrors.Cause(err))
	}
	if got, want := err.Error(), "pd GetStores: GET http://pd/x: 500 Internal Server Error: "+status.Message; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := fmt.Sprintf("%v|%s", err, err); got != err.Error()+"|"+err.Error() {
		t.Errorf("%%v|%%s = %q", got)
	}
	verbose := fmt.Sprintf("%+v", err)
	if !strings.HasPrefix(verbose, err.Error()+"\n") || !strings.Contains(verbose, "TestTraceKeepsSentinelsAndRecordsStack") {
		t.Errorf("%%+v has no stack:\n%s", verbose)
	}
	if !perrors.HasStack(err) {
		t.Error("perrors.HasStack = false")
	}

	// A second Trace keeps the first (deepest) stack and still unwraps.
	outer := pdapi.Trace(fmt.Errorf("pd DeleteMemberByID: %w", err))
	if !errors.Is(outer, pdapi.ErrTiKVNotBootstrapped) || strings.Count(fmt.Sprintf("%+v", outer), "trace.go") != 1 {
		t.Errorf("re-traced error:\n%+v", outer)
	}
	if pdapi.Trace(err) != err || pdapi.Trace(nil) != nil { //nolint:errorlint // identity is the point
		t.Error("Trace must return an already traced error and nil as they are")
	}
}

func TestClientErrorsCarryStackAndSentinels(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{"GET /pd/api/v1/stores": {http.StatusInternalServerError, pdNotBootstrappedJSON}})
	_, err := pd.client().GetStores(context.Background())
	if !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		t.Fatalf("GetStores: err = %v, want ErrTiKVNotBootstrapped", err)
	}
	if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "pdapi.(*pdClient).GetStores") {
		t.Errorf("the stack does not name the client method:\n%s", verbose)
	}
}
