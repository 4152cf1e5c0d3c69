package tidbapi

import (
	"context"
	"maps"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Call is one recorded FakeClient call.
type Call struct {
	// Method is "GetHealth", "GetInfo", "SetLabels", "StartUpgrade" or "FinishUpgrade".
	Method                     string
	Namespace, TCName, PodName string
	Options                    Options
	// Labels are SetLabels' labels as "k=v" joined by commas in key order (a string keeps Call
	// comparable).
	Labels string
}

// FakeClient is an in-memory Client for unit tests: pods are healthy unless set otherwise, GetInfo
// returns what SetInfo stored (a zero Info by default), errors are injected per pod, and every call is
// recorded. Pods are keyed by namespace and name. Safe for concurrent use.
type FakeClient struct {
	pods podhttp.FakePods[fakePod, Call]
}

// fakePod is what FakeClient answers for one pod.
type fakePod struct {
	unhealthy bool
	info      Info // Labels is never written after SetInfo stores its copy
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod is healthy.
func NewFakeClient() *FakeClient { return &FakeClient{} }

// SetHealth sets the health GetHealth reports for a pod.
func (f *FakeClient) SetHealth(namespace, podName string, healthy bool) {
	f.pods.Update(namespace, podName, func(p *fakePod) { p.unhealthy = !healthy })
}

// SetInfo sets what GetInfo returns for a pod.
func (f *FakeClient) SetInfo(namespace, podName string, info Info) {
	info.Labels = maps.Clone(info.Labels)
	f.pods.Update(namespace, podName, func(p *fakePod) { p.info = info })
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.pods.SetError(namespace, podName, err)
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call { return f.pods.Calls() }

// GetHealth implements Client.
func (f *FakeClient) GetHealth(_ context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	call := Call{Method: "GetHealth", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	pod, err := f.pods.Record(call, namespace, podName)
	if err != nil {
		return false, err
	}
	return !pod.unhealthy, nil
}

// GetInfo implements Client.
func (f *FakeClient) GetInfo(_ context.Context, namespace, tcName, podName string, opts Options) (*Info, error) {
	call := Call{Method: "GetInfo", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	pod, err := f.pods.Record(call, namespace, podName)
	if err != nil {
		return nil, err
	}
	info := pod.info
	info.Labels = maps.Clone(info.Labels)
	return &info, nil
}
