package pdapi

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// TransferPDLeader implements Writer: a known member becomes the leader; an unknown one is a no-op.
func (f *FakeClient) TransferPDLeader(_ context.Context, memberName string) error {
	if err := f.begin(MethodTransferPDLeader, memberName); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.memberIndex(memberName) >= 0 {
		f.leader = memberName
	}
	return nil
}

// DeleteMember implements Writer: removes the member (and its health entry) if present.
func (f *FakeClient) DeleteMember(_ context.Context, name string) error {
	if err := f.begin(MethodDeleteMember, name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeMember(func(m *Member) bool { return m.Name == name })
	return nil
}

// DeleteMemberByID implements Writer: removes the member (and its health entry) if present.
func (f *FakeClient) DeleteMemberByID(_ context.Context, memberID uint64) error {
	if err := f.begin(MethodDeleteMemberByID, memberID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeMember(func(m *Member) bool { return m.MemberID == memberID })
	return nil
}

// removeMember drops the matching members, their health and, if it was one of them, the leader.
func (f *FakeClient) removeMember(match func(*Member) bool) {
	f.members = slices.DeleteFunc(f.members, func(m *Member) bool {
		if !match(m) {
			return false
		}
		f.health = slices.DeleteFunc(f.health, func(h MemberHealth) bool { return h.Name == m.Name })
		if f.leader == m.Name {
			f.leader = ""
		}
		return true
	})
}

// DeleteStore implements Writer: an Up store becomes Offline; other or unknown stores are unchanged.
func (f *FakeClient) DeleteStore(_ context.Context, storeID uint64) error {
	if err := f.begin(MethodDeleteStore, storeID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, err := f.store(storeID); err == nil && !isTombstone(s) {
		setStoreState(s, StoreStateOffline, StoreStateNameOffline)
	}
	return nil
}

// SetStoreState implements Writer: "Up" or "Offline" (any case); an unknown store fails with a 404
// StatusError, another state with a 400 one.
func (f *FakeClient) SetStoreState(_ context.Context, storeID uint64, state string) error {
	if err := f.begin(MethodSetStoreState, storeID, state); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.store(storeID)
	if err != nil {
		return err
	}
	switch strings.ToLower(state) {
	case "up":
		setStoreState(s, StoreStateUp, StoreStateNameUp)
	case "offline":
		setStoreState(s, StoreStateOffline, StoreStateNameOffline)
	default:
		return fakeStatusError(http.MethodPost, storePath+strconv.FormatUint(storeID, 10)+"/state", http.StatusBadRequest, "invalid state "+state)
	}
	return nil
}

// SetStoreLabels implements Writer: merges labels into the store's (sorted by key); an unknown store
// fails with a 404 StatusError.
func (f *FakeClient) SetStoreLabels(_ context.Context, storeID uint64, labels map[string]string) error {
	if err := f.begin(MethodSetStoreLabels, storeID, maps.Clone(labels)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.store(storeID)
	if err != nil {
		return err
	}
	merged := map[string]string{}
	for _, l := range s.Store.Labels {
		merged[l.Key] = l.Value
	}
	maps.Copy(merged, labels)
	s.Store.Labels = nil
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		s.Store.Labels = append(s.Store.Labels, &StoreLabel{Key: k, Value: merged[k]})
	}
	return nil
}

// BeginEvictLeader implements Writer: the store is listed by GetEvictLeaderSchedulers.
func (f *FakeClient) BeginEvictLeader(_ context.Context, storeID uint64) error {
	if err := f.begin(MethodBeginEvictLeader, storeID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.evicting == nil {
		f.evicting = map[uint64]bool{}
	}
	f.evicting[storeID] = true
	return nil
}

// EndEvictLeader implements Writer: the store is no longer listed.
func (f *FakeClient) EndEvictLeader(_ context.Context, storeID uint64) error {
	if err := f.begin(MethodEndEvictLeader, storeID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.evicting, storeID)
	return nil
}

// UpdateReplicationConfig implements Writer: the set fields of update change the config. Like PD, changing
// enable-placement-rules fails with a 500 StatusError before bootstrap (ErrTiKVNotBootstrapped), and
// disabling it while a TiFlash store that is not Tombstone exists fails with a 500 as well; nothing changes
// then.
func (f *FakeClient) UpdateReplicationConfig(_ context.Context, update ReplicationConfigUpdate) error {
	if err := f.begin(MethodUpdateReplicationConfig, update); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applyReplicationUpdate(update)
}

// applyReplicationUpdate changes the replication config as PD's SetReplicationConfig; the caller holds f.mu.
func (f *FakeClient) applyReplicationUpdate(update ReplicationConfigUpdate) error {
	r := &f.config.Replication
	if p := update.EnablePlacementRules; p != nil && *p != r.EnablePlacementRules {
		switch {
		case f.notBootstrapped:
			return fakeStatusError(http.MethodPost, replicateConfigPath, http.StatusInternalServerError,
				"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first")
		case !*p && slices.ContainsFunc(f.stores, func(s *StoreInfo) bool { return !isTombstone(s) && IsTiFlash(s.Store) }):
			return fakeStatusError(http.MethodPost, replicateConfigPath, http.StatusInternalServerError,
				"cannot disable placement rules with TiFlash nodes")
		}
	}
	if update.MaxReplicas != nil {
		r.MaxReplicas = *update.MaxReplicas
	}
	if update.LocationLabels != nil {
		r.LocationLabels = slices.Clone(*update.LocationLabels)
	}
	if update.StrictlyMatchLabel != nil {
		r.StrictlyMatchLabel = *update.StrictlyMatchLabel
	}
	if update.EnablePlacementRules != nil {
		r.EnablePlacementRules = *update.EnablePlacementRules
	}
	if update.IsolationLevel != nil {
		r.IsolationLevel = *update.IsolationLevel
	}
	return nil
}

// memberIndex is the index of the named member, or -1; the caller holds f.mu.
func (f *FakeClient) memberIndex(name string) int {
	return slices.IndexFunc(f.members, func(m *Member) bool { return m.Name == name })
}

// store finds a store by ID, or returns a 404 StatusError; the caller holds f.mu.
func (f *FakeClient) store(storeID uint64) (*StoreInfo, error) {
	for _, s := range f.stores {
		if s.Store.ID == storeID {
			return s, nil
		}
	}
	path := storePath + strconv.FormatUint(storeID, 10)
	return nil, fakeStatusError(http.MethodGet, path, http.StatusNotFound, "[PD:core:ErrStoreNotFound]store "+strconv.FormatUint(storeID, 10)+" not found")
}

// fakeStatusError is the StatusError a real client would return, with a "fake" URL.
func fakeStatusError(method, path string, status int, msg string) error {
	return &StatusError{Method: method, URL: "fake://pd" + path, StatusCode: status, Message: msg}
}

func isTombstone(s *StoreInfo) bool {
	return s.Store.State == StoreStateTombstone || s.Store.StateName == StoreStateNameTombstone
}

func setStoreState(s *StoreInfo, state StoreState, name string) {
	s.Store.State, s.Store.StateName = state, name
}

func copyHealth(h HealthInfo) HealthInfo {
	if h == nil {
		return nil
	}
	out := make(HealthInfo, len(h))
	for i, m := range h {
		m.ClientUrls = slices.Clone(m.ClientUrls)
		out[i] = m
	}
	return out
}

func copyMember(m *Member) *Member {
	if m == nil {
		return &Member{}
	}
	out := *m
	out.PeerUrls, out.ClientUrls = slices.Clone(m.PeerUrls), slices.Clone(m.ClientUrls)
	return &out
}

// copyStore deep-copies s, giving a nil Store or Status a zero value.
func copyStore(s *StoreInfo) *StoreInfo {
	out := &StoreInfo{Store: &MetaStore{}, Status: &StoreStatus{}}
	if s == nil {
		return out
	}
	if s.Store != nil {
		*out.Store = *s.Store
		out.Store.Labels = nil
		for _, l := range s.Store.Labels {
			if l != nil {
				out.Store.Labels = append(out.Store.Labels, &StoreLabel{Key: l.Key, Value: l.Value})
			}
		}
	}
	if s.Status != nil {
		*out.Status = *s.Status
		out.Status.StartTS = copyPtr(s.Status.StartTS)
		out.Status.LastHeartbeatTS = copyPtr(s.Status.LastHeartbeatTS)
		out.Status.Uptime = copyPtr(s.Status.Uptime)
		out.Status.SlowTrend = copyPtr(s.Status.SlowTrend)
	}
	return out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
