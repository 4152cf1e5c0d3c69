package simulator

import (
	"net/http"
	"testing"
	"time"
)

// TestTiCDCDrainOfFewTablesTakesThePeriod: a capture holding a few tables is not drained by the
// ticks alone; its tables leave at TiCDCDrainTime's pace, whatever the tick length.
func TestTiCDCDrainOfFewTablesTakesThePeriod(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 1)
	h.addPods(ComponentTiCDC, 3)
	h.step(time.Second)
	var id string
	var before int
	h.with(func(c *Cluster) {
		c.set.timings.TiCDCDrainTime = time.Hour
		for _, cp := range c.captures {
			if cp.pod != c.cdcOwner && cp.tables > 0 {
				id, before = cp.id, cp.tables
			}
		}
	})
	if id == "" {
		t.Fatal("no capture but the owner holds tables")
	}
	r := h.proxy(http.MethodPut, "http://basic-ticdc-peer.default:8301/api/v1/captures/drain", `{"capture_id":"`+id+`"}`)
	wantStatus(t, r, http.StatusAccepted)
	for range 50 {
		h.step(10 * time.Millisecond)
	}
	h.with(func(c *Cluster) {
		if cp := c.captureByID(id); cp == nil || cp.tables != before {
			t.Errorf("after 50 ticks of 10ms of a 1h drain the capture holds %v tables, want all %d", cp, before)
		}
	})
	h.step(time.Hour)
	h.step(time.Second)
	h.with(func(c *Cluster) {
		if cp := c.captureByID(id); cp == nil || cp.tables != 0 {
			t.Errorf("after the whole period the capture still holds tables: %+v", cp)
		}
	})
}
