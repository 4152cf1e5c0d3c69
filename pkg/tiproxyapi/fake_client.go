package tiproxyapi

import (
	"context"
	"fmt"
	"maps"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Call is one recorded FakeClient call.
type Call struct {
	// Method is "GetHealth" or "GetConfig".
	Method                     string
	Namespace, TCName, PodName string
	Options                    Options
}

// FakeClient is an in-memory Client for unit tests: pods are healthy (config checksum 0) unless set
// otherwise, GetConfig returns what SetConfig stored (a zero Config by default), errors are injected per
// pod, and every call is recorded first. Pods are keyed by namespace and name. Safe for concurrent use.
type FakeClient struct {
	pods podhttp.FakePods[fakePod, Call]
}

// fakePod is what FakeClient answers for one pod.
type fakePod struct {
	unhealthy string // the reason; "" when healthy
	checksum  uint32
	config    Config // Labels is never written after SetConfig stores its copy
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient in which every pod is healthy.
func NewFakeClient() *FakeClient { return &FakeClient{} }

// SetHealthy makes a pod healthy, reporting checksum as its config checksum.
func (f *FakeClient) SetHealthy(namespace, podName string, checksum uint32) {
	f.pods.Update(namespace, podName, func(p *fakePod) { p.unhealthy, p.checksum = "", checksum })
}

// SetUnhealthy makes a pod unhealthy for reason (e.g. "shutting down (502)"; "" means "unhealthy").
func (f *FakeClient) SetUnhealthy(namespace, podName, reason string) {
	if reason == "" {
		reason = "unhealthy"
	}
	f.pods.Update(namespace, podName, func(p *fakePod) { p.unhealthy = reason })
}

// SetConfig sets what GetConfig returns for a pod.
func (f *FakeClient) SetConfig(namespace, podName string, cfg Config) {
	cfg.Labels = maps.Clone(cfg.Labels)
	f.pods.Update(namespace, podName, func(p *fakePod) { p.config = cfg })
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetError(namespace, podName string, err error) {
	f.pods.SetError(namespace, podName, err)
}

// Calls returns the recorded calls, oldest first.
func (f *FakeClient) Calls() []Call { return f.pods.Calls() }

// GetHealth implements Client: the health set for the pod, with the body TiProxy answers.
func (f *FakeClient) GetHealth(_ context.Context, namespace, tcName, podName string, opts Options) (Health, error) {
	call := Call{Method: "GetHealth", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	pod, err := f.pods.Record(call, namespace, podName)
	if err != nil {
		return Health{}, err
	}
	if pod.unhealthy != "" {
		return Health{Reason: pod.unhealthy}, nil
	}
	return Health{Healthy: true, ConfigChecksum: pod.checksum, Body: fmt.Sprintf(`{"config_checksum":%d}`, pod.checksum)}, nil
}

// GetConfig implements Client.
func (f *FakeClient) GetConfig(_ context.Context, namespace, tcName, podName string, opts Options) (*Config, error) {
	call := Call{Method: "GetConfig", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}
	pod, err := f.pods.Record(call, namespace, podName)
	if err != nil {
		return nil, err
	}
	cfg := pod.config
	cfg.Labels = maps.Clone(cfg.Labels)
	return &cfg, nil
}
