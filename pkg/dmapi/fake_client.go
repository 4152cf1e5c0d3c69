package dmapi

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Method names a Client method in recorded calls and injected errors.
type Method string

// The Client methods.
const (
	MethodGetMasters   Method = "GetMasters"
	MethodGetWorkers   Method = "GetWorkers"
	MethodGetLeader    Method = "GetLeader"
	MethodEvictLeader  Method = "EvictLeader"
	MethodDeleteMaster Method = "DeleteMaster"
	MethodDeleteWorker Method = "DeleteWorker"
)

// Call is one recorded FakeClient call.
type Call struct {
	Method Method
	// Name is the pod of EvictLeader, the member or worker of the deletes; empty for the reads.
	Name string
}

// FakeClient is an in-memory dm-master of one DMCluster for unit tests, scripted with SetMasters,
// SetWorkers and SetLeader and answering as dm-master does: EvictLeader of the leader's pod moves
// leadership to the first other alive master (refused when there is none; a no-op for another pod),
// DeleteMaster removes the member (and the leadership it held), DeleteWorker removes an offline worker
// and refuses any other. Every call is recorded before an injected error (SetError) is returned. Safe for
// concurrent use.
type FakeClient struct {
	mu      sync.Mutex
	masters []MasterMember
	workers []WorkerMember
	leader  Leader
	errs    map[Method]error
	calls   []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient without members.
func NewFakeClient() *FakeClient { return &FakeClient{errs: map[Method]error{}} }

// SetMasters replaces the dm-master members.
func (f *FakeClient) SetMasters(masters ...MasterMember) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.masters = slices.Clone(masters)
}

// SetWorkers replaces the registered dm-workers.
func (f *FakeClient) SetWorkers(workers ...WorkerMember) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workers = slices.Clone(workers)
}

// SetLeader sets the leader; an empty name means no leader.
func (f *FakeClient) SetLeader(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leader = Leader{Name: name, Addr: name + ":8261"}
}

// SetError makes every call of method fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(method Method, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, method)
		return
	}
	f.errs[method] = err
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// CallsOf returns the recorded calls of method, oldest first.
func (f *FakeClient) CallsOf(method Method) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// begin records a call and returns its injected error; the lock must be held.
func (f *FakeClient) begin(method Method, name string) error {
	f.calls = append(f.calls, Call{Method: method, Name: name})
	return f.errs[method]
}

// GetMasters implements Client.
func (f *FakeClient) GetMasters(_ context.Context) ([]MasterMember, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodGetMasters, ""); err != nil {
		return nil, err
	}
	return slices.Clone(f.masters), nil
}

// GetWorkers implements Client.
func (f *FakeClient) GetWorkers(_ context.Context) ([]WorkerMember, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodGetWorkers, ""); err != nil {
		return nil, err
	}
	return slices.Clone(f.workers), nil
}

// GetLeader implements Client.
func (f *FakeClient) GetLeader(_ context.Context) (Leader, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodGetLeader, ""); err != nil {
		return Leader{}, err
	}
	return f.leader, nil
}

// EvictLeader implements Client.
func (f *FakeClient) EvictLeader(_ context.Context, podName string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodEvictLeader, podName); err != nil {
		return err
	}
	if f.leader.Name != podName {
		return nil
	}
	for _, m := range f.masters {
		if m.Name != podName && m.Alive {
			f.leader = Leader{Name: m.Name, Addr: m.Name + ":8261"}
			return nil
		}
	}
	return &RefusedError{Call: "PUT " + PathEvictLeader, Msg: "no other alive dm-master to take leadership"}
}

// DeleteMaster implements Client.
func (f *FakeClient) DeleteMaster(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodDeleteMaster, name); err != nil {
		return err
	}
	f.masters = slices.DeleteFunc(f.masters, func(m MasterMember) bool { return m.Name == name })
	if f.leader.Name == name {
		f.leader = Leader{}
	}
	return nil
}

// DeleteWorker implements Client.
func (f *FakeClient) DeleteWorker(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodDeleteWorker, name); err != nil {
		return err
	}
	i := slices.IndexFunc(f.workers, func(w WorkerMember) bool { return w.Name == name })
	switch {
	case i < 0:
		return &RefusedError{Call: "DELETE " + PathWorkerMembers + name, Msg: fmt.Sprintf("dm-worker with name %s not exists", name)}
	case f.workers[i].Stage != StageOffline:
		return &RefusedError{Call: "DELETE " + PathWorkerMembers + name, Msg: fmt.Sprintf("worker %s is not offline", name)}
	}
	f.workers = slices.Delete(f.workers, i, i+1)
	return nil
}

// FakeControl is a Control handing out one FakeClient per DMCluster (whatever the TLS option), created
// on first use. Safe for concurrent use.
type FakeControl struct {
	mu      sync.Mutex
	clients map[string]*FakeClient
}

var _ Control = &FakeControl{}

// NewFakeControl returns a FakeControl without clusters.
func NewFakeControl() *FakeControl { return &FakeControl{clients: map[string]*FakeClient{}} }

// Cluster returns the FakeClient of DMCluster namespace/dcName, for scripting and inspection.
func (f *FakeControl) Cluster(namespace, dcName string) *FakeClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := namespace + "/" + dcName
	c, ok := f.clients[key]
	if !ok {
		c = NewFakeClient()
		f.clients[key] = c
	}
	return c
}

// GetClient implements Control.
func (f *FakeControl) GetClient(namespace, dcName string, _ Options) Client {
	return f.Cluster(namespace, dcName)
}
