package pdapi

import (
	"context"
	"net/http"
	"slices"
	"sync"
)

// Method names a Client method in FakeClient calls and injected errors.
type Method string

// The Client methods.
const (
	MethodGetHealth                Method = "GetHealth"
	MethodGetCluster               Method = "GetCluster"
	MethodGetMembers               Method = "GetMembers"
	MethodGetLeader                Method = "GetLeader"
	MethodGetStores                Method = "GetStores"
	MethodGetTombstoneStores       Method = "GetTombstoneStores"
	MethodGetStore                 Method = "GetStore"
	MethodGetConfig                Method = "GetConfig"
	MethodGetReady                 Method = "GetReady"
	MethodGetEvictLeaderSchedulers Method = "GetEvictLeaderSchedulers"
	MethodTransferPDLeader         Method = "TransferPDLeader"
	MethodDeleteMember             Method = "DeleteMember"
	MethodDeleteMemberByID         Method = "DeleteMemberByID"
	MethodDeleteStore              Method = "DeleteStore"
	MethodSetStoreState            Method = "SetStoreState"
	MethodSetStoreLabels           Method = "SetStoreLabels"
	MethodBeginEvictLeader         Method = "BeginEvictLeader"
	MethodEndEvictLeader           Method = "EndEvictLeader"
	MethodUpdateReplicationConfig  Method = "UpdateReplicationConfig"
	MethodGetPlacementRules        Method = "GetPlacementRules"
	MethodMaxTiFlashReplicas       Method = "MaxTiFlashReplicas"
	MethodEnablePlacementRules     Method = "EnablePlacementRules"
)

// needBootstrap are the methods PD answers with "TiKV cluster not bootstrapped" before the first store.
var needBootstrap = []Method{
	MethodGetStores, MethodGetTombstoneStores, MethodGetStore, MethodGetEvictLeaderSchedulers, MethodDeleteStore,
	MethodSetStoreState, MethodSetStoreLabels, MethodBeginEvictLeader, MethodEndEvictLeader,
	MethodGetPlacementRules, MethodMaxTiFlashReplicas,
}

var writeMethods = []Method{
	MethodTransferPDLeader, MethodDeleteMember, MethodDeleteMemberByID, MethodDeleteStore, MethodSetStoreState,
	MethodSetStoreLabels, MethodBeginEvictLeader, MethodEndEvictLeader, MethodUpdateReplicationConfig,
	MethodEnablePlacementRules,
}

// IsWrite reports whether m belongs to Writer.
func (m Method) IsWrite() bool { return slices.Contains(writeMethods, m) }

// Call is one recorded FakeClient call: the method and its arguments after ctx, e.g.
// {MethodDeleteStore, [uint64(5)]}.
type Call struct {
	Method Method
	Args   []any
}

// FakeClient is an in-memory Client for unit tests. Reads return copies of what the Set* methods stored;
// writes change that state the simplest way PD would (DeleteStore takes an Up store Offline,
// DeleteMember removes the member, BeginEvictLeader lists the store, …) and never fail unless an error
// is injected. Every call is recorded first, even when it then fails. Create it with NewFakeClient.
// Safe for concurrent use.
type FakeClient struct {
	mu       sync.Mutex
	calls    []Call
	errs     map[Method]error
	hook     func(Call) error
	health   HealthInfo
	cluster  Cluster
	members  []*Member
	leader   string
	stores   []*StoreInfo
	config   Config
	notReady bool
	evicting map[uint64]bool
	rules    []PlacementRule
	// notBootstrapped makes the store and scheduler methods fail as PD does before the first TiKV.
	notBootstrapped bool
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient of a PD without members or stores, ready, with max-replicas 3.
func NewFakeClient() *FakeClient {
	return &FakeClient{
		config:   Config{Replication: ReplicationConfig{MaxReplicas: 3, LocationLabels: StringSlice{}}},
		errs:     map[Method]error{},
		evicting: map[uint64]bool{},
	}
}

// SetError makes every later call of m return err (after being recorded); a nil err clears it.
func (f *FakeClient) SetError(m Method, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, m)
		return
	}
	if f.errs == nil {
		f.errs = map[Method]error{}
	}
	f.errs[m] = err
}

// SetHook installs fn, called (without the fake's lock) on every later call after it is recorded; a
// non-nil result is returned by the call instead of running it, e.g. to fail the third DeleteStore.
func (f *FakeClient) SetHook(fn func(Call) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = fn
}

// Calls returns every call recorded so far, oldest first.
func (f *FakeClient) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// WriteCalls returns the recorded calls of Writer methods, so tests can assert "no write to PD".
func (f *FakeClient) WriteCalls() []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Method.IsWrite() {
			out = append(out, c)
		}
	}
	return out
}

// ResetCalls forgets the recorded calls.
func (f *FakeClient) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

// SetBootstrapped sets whether a TiKV store has registered (true by default). While false, the store
// and scheduler methods fail like PD's: a 500 StatusError that wraps ErrTiKVNotBootstrapped.
func (f *FakeClient) SetBootstrapped(bootstrapped bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notBootstrapped = !bootstrapped
}

// begin records a call and returns, in this order, the hook's error, the injected error, or the
// not-bootstrapped error.
func (f *FakeClient) begin(m Method, args ...any) error {
	call := Call{Method: m, Args: args}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	hook, err := f.hook, f.errs[m]
	if err == nil && f.notBootstrapped && slices.Contains(needBootstrap, m) {
		err = fakeStatusError(http.MethodGet, storesPath, http.StatusInternalServerError,
			"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first")
	}
	f.mu.Unlock()
	if hook != nil {
		if hookErr := hook(call); hookErr != nil {
			return hookErr
		}
	}
	return err
}

// SetHealth sets the answer of GetHealth.
func (f *FakeClient) SetHealth(health HealthInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health = copyHealth(health)
}

// SetCluster sets the answer of GetCluster.
func (f *FakeClient) SetCluster(cluster Cluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cluster = cluster
}

// SetMembers sets the PD members and the leader's name ("" for none), which GetMembers and GetLeader
// return.
func (f *FakeClient) SetMembers(leader string, members ...*Member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members = make([]*Member, 0, len(members))
	for _, m := range members {
		f.members = append(f.members, copyMember(m))
	}
	f.leader = leader
}

// SetStores sets every store PD knows, in any state: GetStores returns those that are not Tombstone,
// GetTombstoneStores the others, GetStore any of them. A store with a nil Status gets a zero one.
func (f *FakeClient) SetStores(stores ...*StoreInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stores = make([]*StoreInfo, 0, len(stores))
	for _, s := range stores {
		f.stores = append(f.stores, copyStore(s))
	}
}

// SetConfig sets the answer of GetConfig.
func (f *FakeClient) SetConfig(cfg Config) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg.Replication.LocationLabels = slices.Clone(cfg.Replication.LocationLabels)
	f.config = cfg
}

// SetReady sets the answer of GetReady (true by default).
func (f *FakeClient) SetReady(ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notReady = !ready
}

// SetEvictLeaderSchedulers sets the stores that have an evict-leader scheduler.
func (f *FakeClient) SetEvictLeaderSchedulers(storeIDs ...uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evicting = map[uint64]bool{}
	for _, id := range storeIDs {
		f.evicting[id] = true
	}
}

// GetHealth implements Reader.
func (f *FakeClient) GetHealth(_ context.Context) (HealthInfo, error) {
	if err := f.begin(MethodGetHealth); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return copyHealth(f.health), nil
}

// GetCluster implements Reader.
func (f *FakeClient) GetCluster(_ context.Context) (*Cluster, error) {
	if err := f.begin(MethodGetCluster); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.cluster
	return &out, nil
}

// GetMembers implements Reader.
func (f *FakeClient) GetMembers(_ context.Context) (*MembersInfo, error) {
	if err := f.begin(MethodGetMembers); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &MembersInfo{Header: &ResponseHeader{ClusterID: f.cluster.ID}}
	for _, m := range f.members {
		out.Members = append(out.Members, copyMember(m))
		if m.Name == f.leader {
			out.Leader, out.EtcdLeader = copyMember(m), copyMember(m)
		}
	}
	return out, nil
}

// GetLeader implements Reader; without a leader it fails as PD does, with a 503 StatusError.
func (f *FakeClient) GetLeader(_ context.Context) (*Member, error) {
	if err := f.begin(MethodGetLeader); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := f.memberIndex(f.leader); f.leader != "" && i >= 0 {
		return copyMember(f.members[i]), nil
	}
	return nil, fakeStatusError(http.MethodGet, leaderPath, http.StatusServiceUnavailable, "[PD:server:ErrLeaderNil]leader is nil")
}

// GetStores implements Reader.
func (f *FakeClient) GetStores(_ context.Context) (*StoresInfo, error) {
	if err := f.begin(MethodGetStores); err != nil {
		return nil, err
	}
	return f.storesWhere(func(s *StoreInfo) bool { return !isTombstone(s) }), nil
}

// GetTombstoneStores implements Reader.
func (f *FakeClient) GetTombstoneStores(_ context.Context) (*StoresInfo, error) {
	if err := f.begin(MethodGetTombstoneStores); err != nil {
		return nil, err
	}
	return f.storesWhere(isTombstone), nil
}

func (f *FakeClient) storesWhere(keep func(*StoreInfo) bool) *StoresInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &StoresInfo{Stores: []*StoreInfo{}}
	for _, s := range f.stores {
		if keep(s) {
			out.Stores = append(out.Stores, copyStore(s))
		}
	}
	out.Count = len(out.Stores)
	return out
}

// GetStore implements Reader; an unknown ID fails with a 404 StatusError (ErrNotFound).
func (f *FakeClient) GetStore(_ context.Context, storeID uint64) (*StoreInfo, error) {
	if err := f.begin(MethodGetStore, storeID); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.store(storeID)
	if err != nil {
		return nil, err
	}
	return copyStore(s), nil
}

// GetConfig implements Reader.
func (f *FakeClient) GetConfig(_ context.Context) (*Config, error) {
	if err := f.begin(MethodGetConfig); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.config
	out.Replication.LocationLabels = slices.Clone(out.Replication.LocationLabels)
	return &out, nil
}

// GetReady implements Reader.
func (f *FakeClient) GetReady(_ context.Context) (bool, error) {
	if err := f.begin(MethodGetReady); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.notReady, nil
}

// GetEvictLeaderSchedulers implements Reader.
func (f *FakeClient) GetEvictLeaderSchedulers(_ context.Context) ([]uint64, error) {
	if err := f.begin(MethodGetEvictLeaderSchedulers); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := []uint64{}
	for id := range f.evicting {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}
