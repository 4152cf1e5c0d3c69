package tikvapi

import (
	"context"
	"slices"
	"sync"
)

// Call is one recorded FakeClient call.
type Call struct {
	Namespace, TCName, PodName string
	Options                    Options
}

// FakeClient is an in-memory Client for unit tests: GetLeaderCount returns what SetLeaderCount stored
// (0 by default) or the injected error, and every call is recorded. Pods are keyed by namespace and
// name. Safe for concurrent use.
type FakeClient struct {
	mu     sync.Mutex
	counts map[string]int
	errs   map[string]error
	calls  []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod has no leaders.
func NewFakeClient() *FakeClient {
	return &FakeClient{counts: map[string]int{}, errs: map[string]error{}}
}

func podKey(namespace, podName string) string { return namespace + "/" + podName }

// SetLeaderCount sets the leader count of a pod.
func (f *FakeClient) SetLeaderCount(namespace, podName string, count int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[podKey(namespace, podName)] = count
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, podKey(namespace, podName))
		return
	}
	f.errs[podKey(namespace, podName)] = err
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// GetLeaderCount implements Client.
func (f *FakeClient) GetLeaderCount(_ context.Context, namespace, tcName, podName string, opts Options) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, Call{Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err := f.errs[podKey(namespace, podName)]; err != nil {
		return 0, err
	}
	return f.counts[podKey(namespace, podName)], nil
}
