package simulator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// dmHarness drives the simulated DMCluster "default/basic" with hand-made observations.
type dmHarness struct {
	*harness
	dmPods map[string]PodObservation
}

func newDMHarness(t *testing.T) *dmHarness {
	t.Helper()
	return &dmHarness{harness: newHarness(t), dmPods: map[string]PodObservation{}}
}

// run starts (or restarts with a new UID when uid differs) pod <dc>-<comp>-<i>, Running and Ready.
func (d *dmHarness) run(comp Component, i int, uid string) string {
	name := fmt.Sprintf("basic-%s-%d", comp, i)
	d.dmPods[name] = PodObservation{Name: name, Component: comp, Running: true, Ready: true, UID: uid}
	d.observeDM()
	return name
}

// stop makes a pod not Running (it keeps its UID).
func (d *dmHarness) stop(name string) {
	p := d.dmPods[name]
	p.Running, p.Ready = false, false
	d.dmPods[name] = p
	d.observeDM()
}

// restart counts a container restart of a running pod: a new process.
func (d *dmHarness) restart(name string) {
	p := d.dmPods[name]
	p.Restarts++
	d.dmPods[name] = p
	d.observeDM()
}

// remove deletes a pod.
func (d *dmHarness) remove(name string) {
	delete(d.dmPods, name)
	d.observeDM()
}

func (d *dmHarness) observeDM() {
	obs := DMObservation{HasPVCs: true}
	for _, p := range d.dmPods {
		obs.Pods = append(obs.Pods, p)
	}
	sort.Slice(obs.Pods, func(i, j int) bool { return obs.Pods[i].Name < obs.Pods[j].Name })
	d.reg.ObserveDM(ClusterKey{Namespace: "default", Name: "basic"}, obs)
}

// master sends a request to dm-master's client Service.
func (d *dmHarness) master(method, path string) response {
	d.t.Helper()
	return d.proxy(method, "http://basic-dm-master.default:8261"+path, "")
}

// pod sends a request to one dm-master pod's peer address.
func (d *dmHarness) pod(pod, method, path string) response {
	d.t.Helper()
	return d.proxy(method, "http://"+pod+".basic-dm-master-peer.default:8261"+path, "")
}

// state reads the DMCluster through the admin API.
func (d *dmHarness) state() api.DMClusterState {
	d.t.Helper()
	r := d.admin(http.MethodGet, "/dmclusters/default/basic", "")
	wantStatus(d.t, r, http.StatusOK)
	return decode[api.DMClusterState](d.t, r)
}

// admin sends a plain request to the admin API.
func (d *dmHarness) admin(method, path, body string) response {
	d.t.Helper()
	return d.direct(method, api.PathPrefix+path, body)
}

// members decodes a members answer.
func (d *dmHarness) members(r response) dmListMembers {
	d.t.Helper()
	wantStatus(d.t, r, http.StatusOK)
	return decode[dmListMembers](d.t, r)
}

// result decodes a write's answer.
func (d *dmHarness) result(r response) dmResult {
	d.t.Helper()
	wantStatus(d.t, r, http.StatusOK)
	return decode[dmResult](d.t, r)
}

// direct sends a plain (non-proxy) request to the server, as the admin client does.
func (d *dmHarness) direct(method, path, body string) response {
	d.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	d.srv.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}
