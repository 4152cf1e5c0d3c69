package tikvapi

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Call is one recorded FakeClient call.
type Call = podhttp.Call

// FakeClient is an in-memory Client for unit tests: GetLeaderCount returns what SetLeaderCount stored
// (0 by default) or the injected error, and every call is recorded. Pods are keyed by namespace and
// name. Safe for concurrent use.
type FakeClient struct {
	pods podhttp.FakePods[int, Call]
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod has no leaders.
func NewFakeClient() *FakeClient { return &FakeClient{} }

// SetLeaderCount sets the leader count of a pod.
func (f *FakeClient) SetLeaderCount(namespace, podName string, count int) {
	f.pods.Set(namespace, podName, count)
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.pods.SetError(namespace, podName, err)
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call { return f.pods.Calls() }

// GetLeaderCount implements Client.
func (f *FakeClient) GetLeaderCount(_ context.Context, namespace, tcName, podName string, opts Options) (int, error) {
	call := Call{Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	return f.pods.Record(call, namespace, podName)
}
