package ticdcapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Method names a Client method in recorded calls and injected errors.
type Method string

// The Client methods.
const (
	MethodGetStatus    Method = "GetStatus"
	MethodGetCaptures  Method = "GetCaptures"
	MethodDrainCapture Method = "DrainCapture"
	MethodResignOwner  Method = "ResignOwner"
	MethodIsHealthy    Method = "IsHealthy"
)

// Call is one recorded FakeClient call.
type Call struct {
	Method                     Method
	Namespace, TCName, PodName string
	// CaptureID is the capture DrainCapture was asked to drain.
	CaptureID string
	Options   Options
}

// FakeCapture is the capture one pod of a FakeClient runs.
type FakeCapture struct {
	ID, Version string
	// Owner marks the owner; setting it on one capture takes it from the others.
	Owner bool
	// Tables is the number of tables on the capture: what DrainCapture answers. The fake never moves
	// tables by itself; a test sets them with SetTables, as TiCDC would move them.
	Tables int
	// Address is the advertise address; "" means the operator's (AdvertiseAddress).
	Address string
}

// FakeClient is an in-memory TiCDC for unit tests, one cluster per namespace/TidbCluster, answering the
// way TiCDC does: a pod answers only while it runs a capture (else the call is unreachable); every
// capture lists them all; DrainCapture refuses the owner, the only capture and an unknown one (400) and
// answers the capture's table count; ResignOwner hands the owner role to the capture of the lowest other
// pod; the cluster is healthy unless set otherwise. Errors can be injected per pod or per method, and
// every call is recorded first. Safe for concurrent use.
type FakeClient struct {
	mu         sync.Mutex
	clusters   map[string]map[string]*FakeCapture // "ns/tc" → pod → capture
	unhealthy  map[string]bool                    // "ns/tc"
	podErrs    map[string]error                   // "ns/pod"
	methodErrs map[Method]error
	calls      []Call
}

var _ Client = &FakeClient{}

// NewFakeClient returns a FakeClient without captures.
func NewFakeClient() *FakeClient {
	return &FakeClient{clusters: map[string]map[string]*FakeCapture{}, unhealthy: map[string]bool{},
		podErrs: map[string]error{}, methodErrs: map[Method]error{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// SetCapture makes pod podName of TidbCluster namespace/tcName run capture c.
func (f *FakeClient) SetCapture(namespace, tcName, podName string, c FakeCapture) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster := f.clusters[key(namespace, tcName)]
	if cluster == nil {
		cluster = map[string]*FakeCapture{}
		f.clusters[key(namespace, tcName)] = cluster
	}
	if c.Owner {
		for _, other := range cluster {
			other.Owner = false
		}
	}
	cluster[podName] = &c
}

// RemoveCapture stops the capture of a pod (the pod is down or gone); a removed owner leaves the
// cluster without an owner until SetCapture names one.
func (f *FakeClient) RemoveCapture(namespace, tcName, podName string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.clusters[key(namespace, tcName)], podName)
}

// SetTables sets the tables left on a pod's capture.
func (f *FakeClient) SetTables(namespace, tcName, podName string, tables int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clusters[key(namespace, tcName)][podName]; c != nil {
		c.Tables = tables
	}
}

// Captures returns a copy of the captures of a cluster, by pod.
func (f *FakeClient) Captures(namespace, tcName string) map[string]FakeCapture {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]FakeCapture{}
	for pod, c := range f.clusters[key(namespace, tcName)] {
		out[pod] = *c
	}
	return out
}

// SetHealthy sets what IsHealthy answers for a cluster.
func (f *FakeClient) SetHealthy(namespace, tcName string, healthy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unhealthy[key(namespace, tcName)] = !healthy
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

// SetMethodError makes every call of method m fail with err (after being recorded); nil clears it.
func (f *FakeClient) SetMethodError(m Method, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.methodErrs, m)
		return
	}
	f.methodErrs[m] = err
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

// begin records call and returns the cluster and capture of the pod it is sent to, or the error the
// call fails with. It must be called with f.mu held.
func (f *FakeClient) begin(call Call) (map[string]*FakeCapture, *FakeCapture, error) {
	f.calls = append(f.calls, call)
	if err := f.podErrs[key(call.Namespace, call.PodName)]; err != nil {
		return nil, nil, err
	}
	if err := f.methodErrs[call.Method]; err != nil {
		return nil, nil, err
	}
	cluster := f.clusters[key(call.Namespace, call.TCName)]
	self := cluster[call.PodName]
	if self == nil {
		url := BaseURL(call.Namespace, call.TCName, call.PodName, call.Options)
		return nil, nil, &podhttp.UnreachableError{Err: fmt.Errorf("%s: dial tcp: connection refused", url)}
	}
	return cluster, self, nil
}

// GetStatus implements Client.
func (f *FakeClient) GetStatus(_ context.Context, namespace, tcName, podName string, opts Options) (*Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, self, err := f.begin(Call{Method: MethodGetStatus, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err != nil {
		return nil, err
	}
	return &Status{ID: self.ID, Version: self.Version, IsOwner: self.Owner, Pid: 1}, nil
}

// GetCaptures implements Client.
func (f *FakeClient) GetCaptures(_ context.Context, namespace, tcName, podName string, opts Options) ([]Capture, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster, _, err := f.begin(Call{Method: MethodGetCaptures, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err != nil {
		return nil, err
	}
	out := make([]Capture, 0, len(cluster))
	for _, pod := range sortedPods(cluster) {
		c := cluster[pod]
		addr := c.Address
		if addr == "" {
			addr = AdvertiseAddress(namespace, tcName, pod, opts.ClusterDomain)
		}
		out = append(out, Capture{ID: c.ID, IsOwner: c.Owner, Address: addr})
	}
	return out, nil
}

// DrainCapture implements Client.
func (f *FakeClient) DrainCapture(_ context.Context, namespace, tcName, podName, captureID string, opts Options) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := Call{Method: MethodDrainCapture, Namespace: namespace, TCName: tcName, PodName: podName, CaptureID: captureID, Options: opts}
	cluster, _, err := f.begin(call)
	if err != nil {
		return 0, err
	}
	refuse := func(why string) (int, error) {
		url := BaseURL(namespace, tcName, podName, opts) + PathDrain
		body := fmt.Sprintf(`{"error_msg":%q,"error_code":"CDC:ErrSchedulerRequestFailed"}`, why)
		return 0, podhttp.StatusError(http.MethodPut, url, http.StatusBadRequest, []byte(body))
	}
	if len(cluster) < 2 {
		return refuse("scheduler request failed: only one capture alive")
	}
	for _, c := range cluster {
		if c.ID != captureID {
			continue
		}
		if c.Owner {
			return refuse("scheduler request failed: cannot drain the owner")
		}
		return c.Tables, nil
	}
	return refuse("capture not exists: " + captureID)
}

// ResignOwner implements Client.
func (f *FakeClient) ResignOwner(_ context.Context, namespace, tcName, podName string, opts Options) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster, _, err := f.begin(Call{Method: MethodResignOwner, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts})
	if err != nil {
		return err
	}
	pods := sortedPods(cluster)
	owner := slices.IndexFunc(pods, func(p string) bool { return cluster[p].Owner })
	if owner < 0 || len(pods) < 2 {
		return nil // no owner to resign, or nobody else to take it: TiCDC re-elects the same capture
	}
	cluster[pods[owner]].Owner = false
	next := pods[0]
	if owner == 0 {
		next = pods[1]
	}
	cluster[next].Owner = true
	return nil
}

// IsHealthy implements Client.
func (f *FakeClient) IsHealthy(_ context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, _, err := f.begin(Call{Method: MethodIsHealthy, Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}); err != nil {
		return false, err
	}
	return !f.unhealthy[key(namespace, tcName)], nil
}

func sortedPods(cluster map[string]*FakeCapture) []string {
	pods := make([]string, 0, len(cluster))
	for p := range cluster {
		pods = append(pods, p)
	}
	slices.Sort(pods)
	return pods
}
