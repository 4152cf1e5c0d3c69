package simulator

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// fault is an injected rule of one cluster; see api.Fault.
type fault struct {
	api.Fault
}

// faultAction is what the matching faults do to one request: wait delay, then drop the connection or
// answer with status and body (status 0: serve normally).
type faultAction struct {
	delay  time.Duration
	drop   bool
	status int
	body   string
}

// validateFault checks a fault before it is added; the error explains what to fix.
func validateFault(f api.Fault) error {
	switch f.Kind {
	case api.FaultError:
		if f.Status < 500 || f.Status > 599 {
			return fmt.Errorf("an error fault needs a 5xx status, got %d", f.Status)
		}
	case api.FaultLatency:
		if f.Delay <= 0 {
			return fmt.Errorf("a latency fault needs a positive delay, got %v", time.Duration(f.Delay))
		}
	case api.FaultDrop:
	default:
		return fmt.Errorf("unknown fault kind %q (want %q, %q or %q)", f.Kind, api.FaultError, api.FaultLatency, api.FaultDrop)
	}
	if f.Component != "" && !simulatedComponents[Component(f.Component)] {
		return fmt.Errorf("unknown component %q (want pd, tikv, tidb, tiflash, ticdc, tiproxy, pump or empty)", f.Component)
	}
	if f.Times < 0 {
		return fmt.Errorf("times must not be negative, got %d", f.Times)
	}
	if f.PathPrefix != "" && !strings.HasPrefix(f.PathPrefix, "/") {
		return fmt.Errorf("pathPrefix must start with /, got %q", f.PathPrefix)
	}
	return nil
}

// addFault validates f, gives it an ID and appends it; it errors when f is invalid.
func (c *Cluster) addFault(f api.Fault) (api.Fault, error) {
	if err := validateFault(f); err != nil {
		return api.Fault{}, err
	}
	c.nextFaultID++
	f.ID = strconv.Itoa(c.nextFaultID)
	f.Method = strings.ToUpper(f.Method)
	f.Hits = 0
	c.faults = append(c.faults, &fault{Fault: f})
	c.log.Info("fault injected", "fault", f.ID, "kind", f.Kind, "method", f.Method, "pathPrefix", f.PathPrefix,
		"component", f.Component)
	return f, nil
}

// faultList returns copies of the active faults in insertion order.
func (c *Cluster) faultList() []api.Fault {
	out := make([]api.Fault, 0, len(c.faults))
	for _, f := range c.faults {
		out = append(out, f.Fault)
	}
	return out
}

// removeFault deletes the fault with id and reports whether it existed.
func (c *Cluster) removeFault(id string) bool {
	for i, f := range c.faults {
		if f.ID == id {
			c.faults = append(c.faults[:i], c.faults[i+1:]...)
			return true
		}
	}
	return false
}

// matchFaults applies every fault matching the request: latencies add up, and the first error or drop
// fault decides the answer. Matching counts as a hit; a fault whose Times are used up is removed.
func (c *Cluster) matchFaults(comp Component, r *http.Request) faultAction {
	var act faultAction
	c.faults, act = applyFaults(c.faults, comp, r)
	return act
}

// applyFaults is matchFaults over faults; it returns the faults kept and the action.
func applyFaults(faults []*fault, comp Component, r *http.Request) ([]*fault, faultAction) {
	var act faultAction
	decided := false
	kept := faults[:0]
	for _, f := range faults {
		if !f.matches(comp, r) || (decided && f.Kind != api.FaultLatency) {
			kept = append(kept, f)
			continue
		}
		f.Hits++
		switch f.Kind {
		case api.FaultLatency:
			act.delay += time.Duration(f.Delay)
		case api.FaultDrop:
			act.drop, decided = true, true
		case api.FaultError:
			act.status, act.body, decided = f.Status, f.Body, true
		}
		if f.Times == 0 || f.Hits < f.Times {
			kept = append(kept, f)
		}
	}
	return kept, act
}

func (f *fault) matches(comp Component, r *http.Request) bool {
	return (f.Method == "" || f.Method == r.Method) &&
		(f.Component == "" || Component(f.Component) == comp) &&
		strings.HasPrefix(r.URL.Path, f.PathPrefix)
}
