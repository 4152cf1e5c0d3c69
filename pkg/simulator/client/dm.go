package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// DMClusters lists the simulated DMClusters.
func (c *Client) DMClusters(ctx context.Context) ([]api.DMClusterSummary, error) {
	var out []api.DMClusterSummary
	return out, c.do(ctx, http.MethodGet, "/dmclusters", nil, &out)
}

// DMCluster returns the simulated dm-master state of DMCluster namespace/name (members, leader, workers,
// and the history of leader changes, evictions and deletes); a 404 StatusError when it is unknown.
func (c *Client) DMCluster(ctx context.Context, namespace, name string) (*api.DMClusterState, error) {
	var out api.DMClusterState
	if err := c.do(ctx, http.MethodGet, dmPath(namespace, name, ""), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetDMMasterUnhealthy marks dm-master member (pod name) not alive — it loses leadership and counts
// against the quorum — or clears the mark; 404 when it is not a member.
func (c *Client) SetDMMasterUnhealthy(ctx context.Context, namespace, name, member string, unhealthy bool) error {
	return c.do(ctx, putOrDelete(unhealthy), dmPath(namespace, name, "/masters/"+url.PathEscape(member)+"/unhealthy"), nil, nil)
}

// AddDMFault injects f (component "dm-master" or empty) into the DMCluster's dm-master API and returns
// it with its ID; a 400 StatusError explains an invalid fault.
func (c *Client) AddDMFault(ctx context.Context, namespace, name string, f api.Fault) (*api.Fault, error) {
	var out api.Fault
	if err := c.do(ctx, http.MethodPost, dmPath(namespace, name, "/faults"), f, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDMFault removes one fault of the DMCluster; 404 when it is unknown (or already expired).
func (c *Client) DeleteDMFault(ctx context.Context, namespace, name, id string) error {
	return c.do(ctx, http.MethodDelete, dmPath(namespace, name, "/faults/"+url.PathEscape(id)), nil, nil)
}

// ClearDMFaults removes every fault of the DMCluster.
func (c *Client) ClearDMFaults(ctx context.Context, namespace, name string) error {
	return c.do(ctx, http.MethodDelete, dmPath(namespace, name, "/faults"), nil, nil)
}

func dmPath(namespace, name, suffix string) string {
	return "/dmclusters/" + url.PathEscape(namespace) + "/" + url.PathEscape(name) + suffix
}
