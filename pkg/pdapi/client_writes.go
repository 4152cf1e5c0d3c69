package pdapi

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// ReplicationConfigUpdate is the body of `POST /pd/api/v1/config/replicate`: PD decodes it over its
// current replication config, so only the non-nil fields change. Booleans travel as JSON strings
// ("true"), which is what PD accepts (the `,string` encoding of ReplicationConfig); the shared
// ReplicationConfig type has no omitempty and would overwrite every field.
type ReplicationConfigUpdate struct {
	MaxReplicas          *uint64      `json:"max-replicas,omitempty"`
	LocationLabels       *StringSlice `json:"location-labels,omitempty"`
	StrictlyMatchLabel   *bool        `json:"strictly-match-label,omitempty,string"`
	EnablePlacementRules *bool        `json:"enable-placement-rules,omitempty,string"`
	IsolationLevel       *string      `json:"isolation-level,omitempty"`
}

// isEmpty reports whether u changes nothing.
func (u ReplicationConfigUpdate) isEmpty() bool {
	return u == ReplicationConfigUpdate{}
}

// TransferPDLeader implements Writer.
func (c *pdClient) TransferPDLeader(ctx context.Context, memberName string) error {
	path := leaderTransferPath + url.PathEscape(memberName)
	return wrap("TransferPDLeader", c.write(ctx, http.MethodPost, path, nil, http.StatusNotFound))
}

// DeleteMember implements Writer.
func (c *pdClient) DeleteMember(ctx context.Context, name string) error {
	path := memberByNamePath + url.PathEscape(name)
	return wrap("DeleteMember", c.write(ctx, http.MethodDelete, path, nil, http.StatusNotFound))
}

// DeleteMemberByID implements Writer.
func (c *pdClient) DeleteMemberByID(ctx context.Context, memberID uint64) error {
	members, err := c.GetMembers(ctx)
	if err != nil {
		return wrap("DeleteMemberByID", err)
	}
	if !slices.ContainsFunc(members.Members, func(m *Member) bool { return m.MemberID == memberID }) {
		return nil
	}
	path := memberByIDPath + strconv.FormatUint(memberID, 10)
	return wrap("DeleteMemberByID", c.write(ctx, http.MethodDelete, path, nil, http.StatusNotFound))
}

// DeleteStore implements Writer.
func (c *pdClient) DeleteStore(ctx context.Context, storeID uint64) error {
	path := storePath + strconv.FormatUint(storeID, 10)
	return wrap("DeleteStore", c.write(ctx, http.MethodDelete, path, nil, http.StatusNotFound, http.StatusGone))
}

// SetStoreState implements Writer.
func (c *pdClient) SetStoreState(ctx context.Context, storeID uint64, state string) error {
	path := storePath + strconv.FormatUint(storeID, 10) + "/state?state=" + url.QueryEscape(state)
	return wrap("SetStoreState", c.write(ctx, http.MethodPost, path, nil))
}

// SetStoreLabels implements Writer.
func (c *pdClient) SetStoreLabels(ctx context.Context, storeID uint64, labels map[string]string) error {
	path := storePath + strconv.FormatUint(storeID, 10) + "/label"
	if labels == nil {
		labels = map[string]string{}
	}
	return wrap("SetStoreLabels", c.write(ctx, http.MethodPost, path, labels))
}

// UpdateReplicationConfig implements Writer; an empty update sends nothing.
func (c *pdClient) UpdateReplicationConfig(ctx context.Context, update ReplicationConfigUpdate) error {
	if update.isEmpty() {
		return nil
	}
	return wrap("UpdateReplicationConfig", c.write(ctx, http.MethodPost, replicateConfigPath, update))
}
