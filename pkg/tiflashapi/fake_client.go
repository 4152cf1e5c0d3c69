package tiflashapi

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Call is one recorded FakeClient call.
type Call = podhttp.Call

// FakeClient is an in-memory Client for unit tests: GetStoreStatus returns what SetStoreStatus stored
// (StoreStatusRunning by default) or the injected error, and every call is recorded first. Pods are keyed
// by namespace and name. Safe for concurrent use.
type FakeClient struct {
	pods podhttp.FakePods[StoreStatus, Call]
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod is Running.
func NewFakeClient() *FakeClient {
	return &FakeClient{pods: podhttp.FakePods[StoreStatus, Call]{Default: StoreStatusRunning}}
}

// SetStoreStatus sets the store status a pod reports.
func (f *FakeClient) SetStoreStatus(namespace, podName string, status StoreStatus) {
	f.pods.Set(namespace, podName, status)
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.pods.SetError(namespace, podName, err)
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call { return f.pods.Calls() }

// GetStoreStatus implements Client.
func (f *FakeClient) GetStoreStatus(_ context.Context, namespace, tcName, podName string, opts Options) (StoreStatus, error) {
	call := Call{Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	return f.pods.Record(call, namespace, podName)
}
