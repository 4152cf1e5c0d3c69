package simulator

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// The TiCDC model, after TiCDC (tiflow) v8 with the v3 table scheduler:
//   - every Running TiCDC pod runs one capture once PD is reachable; a capture is one run of the process,
//     so its ID is new whenever the process starts again (a container restart or a recreated pod), and
//     also when PD was lost, because TiCDC restarts its capture when its etcd session expires;
//   - exactly one capture is the owner: the oldest, chosen again when the owner goes or resigns;
//   - the cluster replicates ticdcTables tables, which the owner spreads evenly over the captures; tables
//     of a capture that went away are taken over at once, balancing moves tables within TiCDCDrainTime;
//   - one capture at a time may be the drain target: its tables move to the others within TiCDCDrainTime
//     and it gets none back while it stays the target. The target lives in the owner's memory, so it is
//     forgotten when the owner changes, and it is replaced by a new drain request once it holds no table;
//   - a capture marked unhealthy through the admin API stays registered, but its processor is taken as
//     not initialized: the owner then reports the cluster unhealthy, refuses drains and schedules nothing.

// ticdcClusterID is the TiCDC cluster ID TiCDC reports (its `--cluster-id`, "default" unless set); it is
// not PD's cluster ID.
const ticdcClusterID = "default"

// capture is one registered TiCDC capture.
type capture struct {
	id  string
	pod string
	// podUID and restarts identify the run of the process the capture belongs to.
	podUID   string
	restarts int32
	// seq orders captures by registration: the lowest is the oldest.
	seq     uint64
	version string
	tables  int
}

// ticdcCanRun reports whether TiCDC reaches PD: PD has a leader and is not made unreachable.
func (c *Cluster) ticdcCanRun() bool { return c.pdAvailable() && !c.pdUnreachable }

// captureAddress is the capture's advertised address, `<pod>.<tc>-ticdc-peer.<ns>.svc[.<domain>]:8301`,
// as the operator's start script sets `--advertise-addr`.
func (c *Cluster) captureAddress(cp *capture) string {
	return c.podHost(cp.pod, ComponentTiCDC) + ":" + ticdcPort
}

// newCaptureID derives a UUID-shaped capture ID (TiCDC uses a random UUID) from the cluster, the pod and
// the registration sequence number, so every registration gets a new ID.
func (c *Cluster) newCaptureID(pod string, seq uint64) string {
	a := stableID("capture", c.key.String(), pod, strconv.FormatUint(seq, 10))
	b := stableID("capture-tail", c.key.String(), pod, strconv.FormatUint(seq, 10))
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

// syncCaptures ends the captures whose process stopped (pod gone, not Running, recreated or restarted) or
// lost PD, registers a capture for every Running TiCDC pod without one while PD is reachable, and makes
// sure there is an owner.
func (c *Cluster) syncCaptures() {
	canRun := c.ticdcCanRun()
	for _, cp := range c.sortedCaptures() {
		p, ok := c.pods[cp.pod]
		switch {
		case !canRun:
			c.removeCapture(cp, "PD is not reachable")
		case !ok || p.Component != ComponentTiCDC || !p.Running:
			c.removeCapture(cp, "pod is not running")
		case p.UID != cp.podUID || p.Restarts != cp.restarts:
			c.removeCapture(cp, "process restarted")
		default:
			cp.version = c.version(p)
		}
	}
	if !canRun {
		return
	}
	for _, p := range c.podsOf(ComponentTiCDC) {
		if _, ok := c.captures[p.Name]; ok || !p.Running {
			continue
		}
		c.nextCaptureSeq++
		cp := &capture{
			id: c.newCaptureID(p.Name, c.nextCaptureSeq), pod: p.Name, podUID: p.UID, restarts: p.Restarts,
			seq: c.nextCaptureSeq, version: c.version(p),
		}
		c.captures[p.Name] = cp
		c.log.Info("TiCDC capture registered", "pod", p.Name, "capture", cp.id)
	}
	c.electCDCOwner("")
}

// removeCapture forgets cp: its tables wait for another capture, and owner or drain target go with it.
func (c *Cluster) removeCapture(cp *capture, why string) {
	delete(c.captures, cp.pod)
	c.ticdcUnassigned += cp.tables
	if c.cdcDrainTarget == cp.pod {
		c.cdcDrainTarget = ""
	}
	if c.cdcOwner == cp.pod {
		c.cdcOwner = ""
	}
	c.log.Info("TiCDC capture gone", "pod", cp.pod, "capture", cp.id, "reason", why)
}

// sortedCaptures returns the captures oldest first.
func (c *Cluster) sortedCaptures() []*capture {
	out := make([]*capture, 0, len(c.captures))
	for _, cp := range c.captures {
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// captureByID returns the capture with id, nil when none.
func (c *Cluster) captureByID(id string) *capture {
	for _, cp := range c.captures {
		if cp.id == id {
			return cp
		}
	}
	return nil
}

// electCDCOwner keeps a registered owner unless it is the one resigning (resigning); otherwise the oldest
// capture other than resigning becomes owner, preferring one that is not the drain target. TiCDC's election
// is a race; the oldest keeps tests deterministic. A resigning sole capture is elected again. A new owner
// starts without a drain target, because the target lives in the old owner's scheduler.
func (c *Cluster) electCDCOwner(resigning string) {
	if _, ok := c.captures[c.cdcOwner]; ok && c.cdcOwner != resigning {
		return
	}
	var fallback, chosen string
	for _, cp := range c.sortedCaptures() {
		if cp.pod == resigning && len(c.captures) > 1 {
			continue
		}
		if fallback == "" {
			fallback = cp.pod
		}
		if cp.pod != c.cdcDrainTarget {
			chosen = cp.pod
			break
		}
	}
	if chosen == "" {
		chosen = fallback
	}
	if chosen != c.cdcOwner {
		c.log.Info("TiCDC owner elected", "pod", chosen, "previous", c.cdcOwner)
		c.cdcDrainTarget = ""
	}
	c.cdcOwner = chosen
}

// cdcStalled reports whether a capture's processor is not initialized (marked unhealthy): the owner then
// reports the cluster unhealthy, refuses drains and moves no table.
func (c *Cluster) cdcStalled() bool {
	for pod := range c.captures {
		if c.cdcUnhealthy[pod] {
			return true
		}
	}
	return false
}

// cdcError is a TiCDC API error: the HTTP status, the RFC code and the message after the code.
type cdcError struct {
	status int
	code   string
	msg    string
}

// drainCapture is `PUT /api/v1/captures/drain`, answered by the owner: the current table count of the
// capture with id, which becomes the drain target unless another capture is still being drained (then
// the request is ignored, as TiCDC's scheduler does, and the count is still returned). The checks and
// their order are TiCDC's.
func (c *Cluster) drainCapture(id string) (int, *cdcError) {
	if len(c.captures) <= 1 {
		return 0, &cdcError{http.StatusBadRequest, "CDC:ErrSchedulerRequestFailed", "scheduler request failed, only one capture alive"}
	}
	cp := c.captureByID(id)
	switch {
	case cp == nil:
		return 0, &cdcError{http.StatusBadRequest, "CDC:ErrCaptureNotExist", "capture not exists, " + id}
	case cp.pod == c.cdcOwner:
		return 0, &cdcError{http.StatusBadRequest, "CDC:ErrSchedulerRequestFailed", "scheduler request failed, cannot drain the owner"}
	case c.cdcStalled():
		return 0, &cdcError{http.StatusServiceUnavailable, "CDC:ErrSchedulerRequestFailed", "not all captures initialized"}
	}
	current, busy := c.captures[c.cdcDrainTarget]
	if cp.tables > 0 && c.cdcDrainTarget != cp.pod && (!busy || current.tables == 0) {
		c.cdcDrainTarget, c.cdcDrainFrom, c.cdcDrainElapsed = cp.pod, cp.tables, 0
		c.log.Info("TiCDC capture draining", "pod", cp.pod, "capture", cp.id, "tables", cp.tables)
	}
	return cp.tables, nil
}

// resignCDCOwner is `POST /api/v1/owner/resign`: the owner steps down and another capture is elected.
func (c *Cluster) resignCDCOwner() {
	c.log.Info("TiCDC owner resigns", "pod", c.cdcOwner)
	c.electCDCOwner(c.cdcOwner)
}

// moveTables runs one step of dt of the table model; see the top of this file.
func (c *Cluster) moveTables(dt time.Duration) {
	caps := c.sortedCaptures()
	c.reconcileTableTotal(caps)
	if len(caps) == 0 || c.cdcStalled() {
		return
	}
	var eligible []*capture
	for _, cp := range caps {
		if cp.pod != c.cdcDrainTarget {
			eligible = append(eligible, cp)
		}
	}
	if len(eligible) == 0 {
		return
	}
	period := c.timings().TiCDCDrainTime
	if target := c.captures[c.cdcDrainTarget]; target != nil && target.tables > 0 {
		n := target.tables
		if period > 0 {
			c.cdcDrainElapsed += dt
			due := int(float64(max(c.cdcDrainFrom, 1)) * float64(c.cdcDrainElapsed) / float64(period))
			n = min(target.tables, max(due-(c.cdcDrainFrom-target.tables), 0))
		}
		target.tables -= n
		c.ticdcUnassigned += n
	}
	base, rest := c.ticdcTables/len(eligible), c.ticdcTables%len(eligible)
	share := func(i int) int {
		if i < rest {
			return base + 1
		}
		return base
	}
	// Unheld tables go one by one to the capture furthest below its share, so they spread evenly.
	for c.ticdcUnassigned > 0 {
		best, deficit := -1, 0
		for i, cp := range eligible {
			if d := share(i) - cp.tables; d > deficit {
				best, deficit = i, d
			}
		}
		if best < 0 {
			break
		}
		eligible[best].tables++
		c.ticdcUnassigned--
	}
	for i, dst := range eligible {
		budget := min(max(share(i)-dst.tables, 0), rateAmount(share(i), dt, period))
		for j, src := range eligible {
			n := min(budget, max(src.tables-share(j), 0))
			src.tables -= n
			dst.tables += n
			budget -= n
		}
	}
}

// reconcileTableTotal keeps held plus unassigned tables equal to ticdcTables after the count changed:
// missing tables wait for a capture, excess ones are taken from the captures holding the most.
func (c *Cluster) reconcileTableTotal(caps []*capture) {
	held := 0
	for _, cp := range caps {
		held += cp.tables
	}
	excess := held + c.ticdcUnassigned - c.ticdcTables
	if excess <= 0 {
		c.ticdcUnassigned -= excess
		return
	}
	take := min(excess, c.ticdcUnassigned)
	c.ticdcUnassigned -= take
	excess -= take
	for excess > 0 {
		var richest *capture
		for _, cp := range caps {
			if cp.tables > 0 && (richest == nil || cp.tables > richest.tables) {
				richest = cp
			}
		}
		if richest == nil {
			return
		}
		n := min(excess, richest.tables)
		richest.tables -= n
		excess -= n
	}
}
