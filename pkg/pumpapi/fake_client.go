package pumpapi

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Method names a Client method in recorded calls.
type Method string

// The Client methods.
const (
	MethodGetStatus Method = "GetStatus"
	MethodOffline   Method = "Offline"
)

// Call is one recorded FakeClient call.
type Call struct {
	Method                     Method
	Namespace, TCName, PodName string
	// NodeID is the node Offline was asked to take offline.
	NodeID  string
	Options Options
}

// FakePump is one pump of a FakeClient: its registry record and whether its process serves the API.
type FakePump struct {
	// NodeID and Host are its registry record's; State is what the registry says.
	NodeID, Host, State string
	// MaxCommitTS is the registry record's.
	MaxCommitTS int64
	// Closing is the pump's own state after an accepted Offline: it refuses another request and no
	// longer serves the registry, while the registry still shows State until FinishOffline.
	Closing bool
	// Stopped is true when the process does not serve (never started, or exited after going offline):
	// every call to the pod is unreachable.
	Stopped bool
}

// fakeCluster is the registry of one TidbCluster, by pod.
type fakeCluster map[string]*FakePump

// FakeClient is an in-memory Pump cluster for unit tests, one binlog registry per namespace/TidbCluster,
// answering the way Pump does: a pod answers only while its pump serves (else the call is unreachable);
// every serving pump that is not closing serves the whole registry; Offline is accepted only by the
// pump of that node while it is online, and refused otherwise (as Pump words it). An accepted Offline
// makes the pump closing — the registry keeps its record as it was, as Pump's does until the drainers
// read its binlog — and FinishOffline then writes offline and stops the process. Errors can be injected
// per pod, and every call is recorded first. Safe for concurrent use.
type FakeClient struct {
	mu       sync.Mutex
	clusters map[string]fakeCluster // "ns/tc"
	podErrs  map[string]error       // "ns/pod"
	calls    []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient without pumps.
func NewFakeClient() *FakeClient {
	return &FakeClient{clusters: map[string]fakeCluster{}, podErrs: map[string]error{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// SetPump makes pod podName of TidbCluster namespace/tcName run pump p (replacing what it ran).
func (f *FakeClient) SetPump(namespace, tcName, podName string, p FakePump) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster := f.clusters[key(namespace, tcName)]
	if cluster == nil {
		cluster = fakeCluster{}
		f.clusters[key(namespace, tcName)] = cluster
	}
	cluster[podName] = &p
}

// SetState sets the registry state of a pod's pump.
func (f *FakeClient) SetState(namespace, tcName, podName, state string) {
	f.update(namespace, tcName, podName, func(p *FakePump) { p.State = state })
}

// SetStopped stops (or restarts) a pod's pump process; a restarted pump is no longer closing.
func (f *FakeClient) SetStopped(namespace, tcName, podName string, stopped bool) {
	f.update(namespace, tcName, podName, func(p *FakePump) { p.Stopped, p.Closing = stopped, false })
}

// FinishOffline ends a closing pump's way offline: the registry says offline and the process exits.
func (f *FakeClient) FinishOffline(namespace, tcName, podName string) {
	f.update(namespace, tcName, podName, func(p *FakePump) { p.State, p.Closing, p.Stopped = StateOffline, false, true })
}

func (f *FakeClient) update(namespace, tcName, podName string, change func(*FakePump)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.clusters[key(namespace, tcName)][podName]; p != nil {
		change(p)
	}
}

// Pump returns a copy of a pod's pump, and whether the pod runs one.
func (f *FakeClient) Pump(namespace, tcName, podName string) (FakePump, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.clusters[key(namespace, tcName)][podName]
	if p == nil {
		return FakePump{}, false
	}
	return *p, true
}

// SetError makes every call to a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.podErrs, key(namespace, podName))
		return
	}
	f.podErrs[key(namespace, podName)] = err
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// CallsOf returns the recorded calls of method m, oldest first.
func (f *FakeClient) CallsOf(m Method) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Method == m {
			out = append(out, c)
		}
	}
	return out
}

// begin records call and returns the cluster and the pump of the pod it is sent to, or the error the
// call fails with. It must be called with f.mu held.
func (f *FakeClient) begin(call Call) (fakeCluster, *FakePump, error) {
	f.calls = append(f.calls, call)
	if err := f.podErrs[key(call.Namespace, call.PodName)]; err != nil {
		return nil, nil, err
	}
	cluster := f.clusters[key(call.Namespace, call.TCName)]
	self := cluster[call.PodName]
	if self == nil || self.Stopped {
		url := BaseURL(call.Namespace, call.TCName, call.PodName, call.Options)
		return nil, nil, &podhttp.UnreachableError{Err: fmt.Errorf("%s %s: dial tcp: connection refused", call.Method, url)}
	}
	return cluster, self, nil
}

// GetStatus implements Client.
func (f *FakeClient) GetStatus(_ context.Context, namespace, tcName, podName string, opts Options) (*Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster, self, err := f.begin(Call{Method: MethodGetStatus, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err != nil {
		return nil, err
	}
	if self.Closing {
		// A closing pump has canceled its context and cannot read etcd any more.
		return nil, fmt.Errorf("pump GetStatus %s: %w: context canceled", podName, ErrRegistryUnavailable)
	}
	status := &Status{Nodes: map[string]*NodeStatus{}, CommitTS: 1}
	for _, p := range cluster {
		status.Nodes[p.NodeID] = &NodeStatus{NodeID: p.NodeID, Host: p.Host, State: p.State, MaxCommitTS: p.MaxCommitTS}
	}
	return status, nil
}

// Offline implements Client.
func (f *FakeClient) Offline(_ context.Context, namespace, tcName, podName, nodeID string, opts Options) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, self, err := f.begin(Call{Method: MethodOffline, Namespace: namespace, TCName: tcName, PodName: podName, NodeID: nodeID, Options: opts})
	if err != nil {
		return err
	}
	state := self.State
	if self.Closing {
		state = StateClosing
	}
	switch {
	case nodeID != self.NodeID:
		return &RefusedError{Code: 3, Message: fmt.Sprintf("invalide nodeID %s, this pump's nodeID is %s", nodeID, self.NodeID)}
	case state != StateOnline:
		return &RefusedError{Code: 3, Message: fmt.Sprintf("this pump's state is %s, apply close failed!", state)}
	}
	self.Closing = true
	return nil
}
