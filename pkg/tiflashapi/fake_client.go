package tiflashapi

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

// FakeClient is an in-memory Client for unit tests: GetStoreStatus returns what SetStoreStatus stored
// (StoreStatusRunning by default) or the injected error, and every call is recorded first. Pods are keyed
// by namespace and name. Safe for concurrent use.
type FakeClient struct {
	mu       sync.Mutex
	statuses map[string]StoreStatus
	errs     map[string]error
	calls    []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod is Running.
func NewFakeClient() *FakeClient {
	return &FakeClient{statuses: map[string]StoreStatus{}, errs: map[string]error{}}
}

func podKey(namespace, podName string) string { return namespace + "/" + podName }

// SetStoreStatus sets the store status a pod reports.
func (f *FakeClient) SetStoreStatus(namespace, podName string, status StoreStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[podKey(namespace, podName)] = status
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

// GetStoreStatus implements Client.
func (f *FakeClient) GetStoreStatus(_ context.Context, namespace, tcName, podName string, opts Options) (StoreStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, Call{Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err := f.errs[podKey(namespace, podName)]; err != nil {
		return "", err
	}
	if status, ok := f.statuses[podKey(namespace, podName)]; ok {
		return status, nil
	}
	return StoreStatusRunning, nil
}
