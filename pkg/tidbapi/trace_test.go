package tidbapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// TestErrorsCarryStackAndCause checks the HTTP client boundary: errors record where they left the package
// (printed by %+v) and still unwrap to their cause for errors.Is and errors.As.
func TestErrorsCarryStackAndCause(t *testing.T) {
	t.Parallel()
	clients := newTiDBPods(t, map[string]http.HandlerFunc{"basic-tidb-0": podhttptest.BlockUntilCanceled})
	c := tidbapi.NewClient(clients, time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GetHealth(ctx, "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("GetHealth with an ended ctx: err = %v, want context.Canceled", err)
	}
	if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "tidbapi.(*client).GetHealth") {
		t.Errorf("GetHealth error has no stack:\n%s", verbose)
	}

	_, err = c.GetInfo(ctx, "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	var urlErr *url.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &urlErr) {
		t.Errorf("GetInfo with an ended ctx: err = %v, want a *url.Error wrapping context.Canceled", err)
	}
	if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "tidbapi.(*client).GetInfo") {
		t.Errorf("GetInfo error has no stack:\n%s", verbose)
	}
}
