package tidbapi

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// Call is one recorded FakeClient call.
type Call struct {
	// Method is "GetHealth" or "GetInfo".
	Method                     string
	Namespace, TCName, PodName string
	Options                    Options
}

// FakeClient is an in-memory Client for unit tests: pods are healthy unless set otherwise, GetInfo
// returns what SetInfo stored (a zero Info by default), errors are injected per pod, and every call is
// recorded. Pods are keyed by namespace and name. Safe for concurrent use.
type FakeClient struct {
	mu        sync.Mutex
	unhealthy map[string]bool
	infos     map[string]Info
	errs      map[string]error
	calls     []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod is healthy.
func NewFakeClient() *FakeClient {
	return &FakeClient{unhealthy: map[string]bool{}, infos: map[string]Info{}, errs: map[string]error{}}
}

func podKey(namespace, podName string) string { return namespace + "/" + podName }

// SetHealth sets the health GetHealth reports for a pod.
func (f *FakeClient) SetHealth(namespace, podName string, healthy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unhealthy[podKey(namespace, podName)] = !healthy
}

// SetInfo sets what GetInfo returns for a pod.
func (f *FakeClient) SetInfo(namespace, podName string, info Info) {
	f.mu.Lock()
	defer f.mu.Unlock()
	info.Labels = maps.Clone(info.Labels)
	f.infos[podKey(namespace, podName)] = info
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

// record notes a call and returns the injected error of its pod.
func (f *FakeClient) record(method, namespace, tcName, podName string, opts Options) error {
	f.calls = append(f.calls, Call{Method: method, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	return f.errs[podKey(namespace, podName)]
}

// GetHealth implements Client.
func (f *FakeClient) GetHealth(_ context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("GetHealth", namespace, tcName, podName, opts); err != nil {
		return false, err
	}
	return !f.unhealthy[podKey(namespace, podName)], nil
}

// GetInfo implements Client.
func (f *FakeClient) GetInfo(_ context.Context, namespace, tcName, podName string, opts Options) (*Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("GetInfo", namespace, tcName, podName, opts); err != nil {
		return nil, err
	}
	info := f.infos[podKey(namespace, podName)]
	info.Labels = maps.Clone(info.Labels)
	return &info, nil
}
