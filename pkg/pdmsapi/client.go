// Package pdmsapi is the operator's client of PD's micro-services (spec.pd.mode "ms"): the members and
// primary of a service as PD lists them (`GET /pd/api/v2/ms/members/<svc>`, `GET
// /pd/api/v2/ms/primary/<svc>` on `<tc>-pd:2379`), the tso service's health (`GET /tso/api/v1/health` on
// `<tc>-tso:2379`) and a primary transfer (`POST /<svc>/api/v1/primary/transfer` on `<tc>-<svc>:2379`).
package pdmsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Port is the client port of PD and of every micro-service.
const Port = 2379

// DefaultTimeout bounds one request, as the TiDB Operator's micro-service client does.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds an answer; a member list is a few hundred bytes per member.
const maxBodyBytes = 1 << 20

// Options says how to reach the services of one TidbCluster.
type Options = podhttp.Options

// HTTPClients returns the *http.Client for a TidbCluster (*pdapi.HTTPClientCache).
type HTTPClients = podhttp.HTTPClients

// Client asks PD and the micro-services of one TidbCluster per call. Calls do not retry; each is
// bounded by ctx and the client timeout. Errors name the URL (and the status and text answered), carry
// the stack of the failed call (pdapi.Trace) and unwrap to their cause (*podhttp.UnreachableError when
// nothing answered).
type Client interface {
	// Members returns the service addresses PD lists for service svc, in PD's order.
	Members(ctx context.Context, namespace, tcName, svc string, opts Options) ([]string, error)
	// Primary returns the service address of svc's primary as PD names it.
	Primary(ctx context.Context, namespace, tcName, svc string, opts Options) (string, error)
	// Healthy reports whether the tso service answers its health check with a status below 400; an
	// unreachable service is false with a nil error.
	Healthy(ctx context.Context, namespace, tcName string, opts Options) (bool, error)
	// TransferPrimary asks svc to move its primary to the member named newPrimary; any status below 400
	// is success.
	TransferPrimary(ctx context.Context, namespace, tcName, svc, newPrimary string, opts Options) error
}

// member is one entry of PD's member list (PD's discovery.ServiceRegistryEntry).
type member struct {
	ServiceAddr string `json:"service-addr"`
}

type client struct{ http *podhttp.Client }

// NewClient returns a Client sending through httpClients, each request bounded by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{http: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes)}
}

// ServiceURL is "<scheme>://<tc>-<component>.<ns>[.svc.<domain>]:2379", the client Service of PD or of
// a micro-service.
func ServiceURL(namespace, tcName, component string, opts Options) string {
	host := names.ServiceHost(names.Member(tcName, component), namespace, opts.ClusterDomain)
	return fmt.Sprintf("%s://%s:%d", names.Scheme(opts.TLSEnabled), host, Port)
}

func (c *client) Members(ctx context.Context, namespace, tcName, svc string, opts Options) ([]string, error) {
	url := ServiceURL(namespace, tcName, names.PD, opts) + "/pd/api/v2/ms/members/" + svc
	var ms []member
	if err := c.getJSON(ctx, url, namespace, tcName, opts, &ms); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ServiceAddr)
	}
	return out, nil
}

func (c *client) Primary(ctx context.Context, namespace, tcName, svc string, opts Options) (string, error) {
	url := ServiceURL(namespace, tcName, names.PD, opts) + "/pd/api/v2/ms/primary/" + svc
	var primary string
	err := c.getJSON(ctx, url, namespace, tcName, opts, &primary)
	return primary, err
}

func (c *client) Healthy(ctx context.Context, namespace, tcName string, opts Options) (bool, error) {
	url := ServiceURL(namespace, tcName, names.TSO, opts) + "/tso/api/v1/health"
	status, _, err := c.http.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err != nil {
		var unreachable *podhttp.UnreachableError
		if errors.As(err, &unreachable) && ctx.Err() == nil {
			return false, nil
		}
		return false, pdapi.Trace(fmt.Errorf("tso health %s: %w", url, err))
	}
	return status < http.StatusBadRequest, nil
}

func (c *client) TransferPrimary(ctx context.Context, namespace, tcName, svc, newPrimary string, opts Options) error {
	url := ServiceURL(namespace, tcName, svc, opts) + "/" + svc + "/api/v1/primary/transfer"
	body, err := json.Marshal(map[string]string{"new_primary": newPrimary})
	if err != nil {
		return err
	}
	req := podhttp.NewRequest(http.MethodPost, url, namespace, tcName, opts)
	req.Body = body
	status, text, err := c.http.ReadAll(ctx, req)
	if err == nil && status >= http.StatusBadRequest {
		err = fmt.Errorf("answered %d: %s", status, strings.TrimSpace(string(text)))
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("transfer the %s primary to %s (POST %s): %w", svc, newPrimary, url, err))
	}
	return nil
}

// getJSON reads url's answer into out; any status but 200 is an error with PD's text.
func (c *client) getJSON(ctx context.Context, url, namespace, tcName string, opts Options, out any) error {
	status, body, err := c.http.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("answered %d: %s", status, strings.TrimSpace(string(body)))
	}
	if err == nil {
		if jerr := json.Unmarshal(body, out); jerr != nil {
			err = fmt.Errorf("decode %q: %w", strings.TrimSpace(string(body)), jerr)
		}
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("GET %s: %w", url, err))
	}
	return nil
}
