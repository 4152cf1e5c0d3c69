package pdapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// PD HTTP API paths (spec §5).
const (
	healthPath           = "/pd/api/v1/health"
	clusterPath          = "/pd/api/v1/cluster"
	membersPath          = "/pd/api/v1/members"
	leaderPath           = "/pd/api/v1/leader"
	leaderTransferPath   = "/pd/api/v1/leader/transfer/"
	memberByNamePath     = "/pd/api/v1/members/name/"
	memberByIDPath       = "/pd/api/v1/members/id/"
	storesPath           = "/pd/api/v1/stores"
	tombstoneStoresPath  = "/pd/api/v1/stores?state=2"
	storePath            = "/pd/api/v1/store/"
	configPath           = "/pd/api/v1/config"
	replicateConfigPath  = "/pd/api/v1/config/replicate"
	schedulersPath       = "/pd/api/v1/schedulers"
	evictLeaderListPath  = "/pd/api/v1/scheduler-config/evict-leader-scheduler/list"
	readyPath            = "/pd/api/v2/ready"
	evictLeaderScheduler = "evict-leader-scheduler"
)

// GetHealth implements Reader.
func (c *pdClient) GetHealth(ctx context.Context) (HealthInfo, error) {
	var out HealthInfo
	if err := c.getJSON(ctx, healthPath, &out); err != nil {
		return nil, wrap("GetHealth", err)
	}
	return out, nil
}

// GetCluster implements Reader.
func (c *pdClient) GetCluster(ctx context.Context) (*Cluster, error) {
	out := &Cluster{}
	if err := c.getJSON(ctx, clusterPath, out); err != nil {
		return nil, wrap("GetCluster", err)
	}
	return out, nil
}

// GetMembers implements Reader; a null element of `members` is reported as a malformed answer.
func (c *pdClient) GetMembers(ctx context.Context) (*MembersInfo, error) {
	out := &MembersInfo{}
	if err := c.getJSON(ctx, membersPath, out); err != nil {
		return nil, wrap("GetMembers", err)
	}
	for i, m := range out.Members {
		if m == nil {
			return nil, wrap("GetMembers", fmt.Errorf("GET %s%s: members[%d] is null", c.baseURL, membersPath, i))
		}
	}
	return out, nil
}

// GetLeader implements Reader.
func (c *pdClient) GetLeader(ctx context.Context) (*Member, error) {
	out := &Member{}
	if err := c.getJSON(ctx, leaderPath, out); err != nil {
		return nil, wrap("GetLeader", err)
	}
	return out, nil
}

// GetStores implements Reader.
func (c *pdClient) GetStores(ctx context.Context) (*StoresInfo, error) {
	out, err := c.getStores(ctx, storesPath)
	return out, wrap("GetStores", err)
}

// GetTombstoneStores implements Reader.
func (c *pdClient) GetTombstoneStores(ctx context.Context) (*StoresInfo, error) {
	out, err := c.getStores(ctx, tombstoneStoresPath)
	return out, wrap("GetTombstoneStores", err)
}

// getStores reads a store list and checks that every element has a store; a missing status is
// replaced by a zero one so that callers may dereference it.
func (c *pdClient) getStores(ctx context.Context, path string) (*StoresInfo, error) {
	out := &StoresInfo{}
	if err := c.getJSON(ctx, path, out); err != nil {
		return nil, err
	}
	for i, s := range out.Stores {
		if err := normalizeStore(s); err != nil {
			return nil, fmt.Errorf("GET %s%s: stores[%d]: %w", c.baseURL, path, i, err)
		}
	}
	return out, nil
}

// normalizeStore rejects an element without `store` and fills a missing `status`.
func normalizeStore(s *StoreInfo) error {
	if s == nil || s.Store == nil {
		return errors.New("no store object in PD's answer")
	}
	if s.Status == nil {
		s.Status = &StoreStatus{}
	}
	return nil
}

// GetStore implements Reader.
func (c *pdClient) GetStore(ctx context.Context, storeID uint64) (*StoreInfo, error) {
	out := &StoreInfo{}
	path := storePath + strconv.FormatUint(storeID, 10)
	if err := c.getJSON(ctx, path, out); err != nil {
		return nil, wrap("GetStore", err)
	}
	if err := normalizeStore(out); err != nil {
		return nil, wrap("GetStore", fmt.Errorf("GET %s%s: %w", c.baseURL, path, err))
	}
	return out, nil
}

// GetConfig implements Reader.
func (c *pdClient) GetConfig(ctx context.Context) (*Config, error) {
	out := &Config{}
	if err := c.getJSON(ctx, configPath, out); err != nil {
		return nil, wrap("GetConfig", err)
	}
	return out, nil
}

// GetReady implements Reader.
func (c *pdClient) GetReady(ctx context.Context) (bool, error) {
	resp, err := c.send(ctx, http.MethodGet, readyPath, nil)
	if err != nil {
		return false, wrap("GetReady", err)
	}
	switch resp.status {
	case http.StatusOK, http.StatusNotFound:
		return true, nil
	case http.StatusInternalServerError:
		return false, nil
	}
	return false, wrap("GetReady", resp.statusError())
}
