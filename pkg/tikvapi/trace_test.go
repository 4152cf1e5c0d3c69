package tikvapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tikvapi"
)

// TestErrorsCarryStackAndSentinel checks the HTTP client boundary: the error records where it left the
// package (printed by %+v) and errors.Is still finds ErrLeaderCountNotFound.
func TestErrorsCarryStackAndSentinel(t *testing.T) {
	t.Parallel()
	clients := newTiKVPods(t, map[string]http.HandlerFunc{"basic-tikv-1": podhttptest.Answer(200, "process_cpu_seconds_total 1\n")})
	_, err := tikvapi.NewClient(clients, 0).GetLeaderCount(context.Background(), "ns", "basic", "basic-tikv-1", tikvapi.Options{})
	if !errors.Is(err, tikvapi.ErrLeaderCountNotFound) {
		t.Fatalf("err = %v, want ErrLeaderCountNotFound", err)
	}
	verbose := fmt.Sprintf("%+v", err)
	if !strings.HasPrefix(verbose, err.Error()) || !strings.Contains(verbose, "tikvapi.(*client).GetLeaderCount") {
		t.Errorf("error has no stack:\n%s", verbose)
	}
}
