package ticdcapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// sendJSON sends a request with a JSON body and returns the answer's status and body (at most
// maxBodyBytes), whatever the status. podhttp sends only bodiless requests, and the drain is the one
// call of ours with a body, so this mirrors podhttp.Client.Do for it: the cluster's *http.Client, the
// same bound per request, and an *podhttp.UnreachableError when no complete answer came.
func (c *client) sendJSON(ctx context.Context, method, url, namespace, tcName string, body []byte, opts Options) (int, []byte, error) {
	httpClient, err := c.httpClients.Get(namespace, tcName, opts.TLSEnabled)
	if err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, &podhttp.UnreachableError{Err: err} // *url.Error names method and URL
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return 0, nil, &podhttp.UnreachableError{Err: fmt.Errorf("%s %s: read body: %w", method, url, err)}
	}
	return resp.StatusCode, answer, nil
}
