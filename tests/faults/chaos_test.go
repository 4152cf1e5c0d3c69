//go:build integration

package faults

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chaos mode (`make chaos`, FAULTS=chaos): a randomized sequence of user actions and faults on
// several clusters at once, drawn from one math/rand source seeded by CHAOS_SEED. With FAULTS
// unset (`make test`) a short slice runs with a fixed seed on one cluster; any other FAULTS skips it.
const (
	// chaosStepTime is the nominal time of one step: CHAOS_DURATION / chaosStepTime steps are
	// planned per cluster, so the plan depends on the seed and the duration only, never on timing.
	chaosStepTime = 40 * time.Second
	// The slice of `make test`.
	chaosSliceSeed     = 20261203
	chaosSliceDuration = 2 * time.Minute
)

// chaosConfig is what a chaos run was asked for.
type chaosConfig struct {
	seed     int64
	duration time.Duration
	clusters int
	slice    bool // the fixed slice of `make test`
}

func (c chaosConfig) steps() int {
	return max(1, int(c.duration/chaosStepTime))
}

func (c chaosConfig) replay() string {
	if c.slice {
		return "FAULTS unset (make test's slice)"
	}
	return fmt.Sprintf("make chaos SEED=%d DURATION=%s CHAOS_CLUSTERS=%d", c.seed, c.duration, c.clusters)
}

// chaosConfigOf reads FAULTS and the CHAOS_* variables; ok is false when chaos does not run.
func chaosConfigOf() (cfg chaosConfig, ok bool, err error) {
	switch os.Getenv("FAULTS") {
	case "":
		return chaosConfig{seed: chaosSliceSeed, duration: chaosSliceDuration, clusters: 1, slice: true}, true, nil
	case "chaos":
	default:
		return cfg, false, nil
	}
	cfg = chaosConfig{seed: time.Now().UnixNano(), duration: 10 * time.Minute, clusters: 3}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		if cfg.seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			return cfg, false, fmt.Errorf("CHAOS_SEED: %w", err)
		}
	}
	if v := os.Getenv("CHAOS_DURATION"); v != "" {
		if cfg.duration, err = time.ParseDuration(v); err != nil {
			return cfg, false, fmt.Errorf("CHAOS_DURATION: %w", err)
		}
	}
	if v := os.Getenv("CHAOS_CLUSTERS"); v != "" {
		if cfg.clusters, err = strconv.Atoi(v); err != nil || cfg.clusters < 1 {
			return cfg, false, fmt.Errorf("CHAOS_CLUSTERS %q: want a positive number", v)
		}
	}
	return cfg, true, nil
}

// chaosOutcome is what one cluster of the run contributes to the figures.
type chaosOutcome struct {
	name       string
	passed     bool
	planned    int
	cc         *chaosCluster
	checks     map[invariant]int
	violations int
	took       time.Duration
}

// TestChaos runs every cluster's plan in parallel, the invariant checker throughout, and writes
// the figures once all have ended.
func TestChaos(t *testing.T) {
	cfg, ok, err := chaosConfigOf()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("chaos runs with FAULTS=chaos (make chaos) or FAULTS unset (its slice)")
	}
	plans := planChaos(rand.New(rand.NewSource(cfg.seed)), cfg.clusters, cfg.steps())
	t.Logf("chaos SEED=%d DURATION=%s clusters=%d, %d steps each; replay: %s\n%s", cfg.seed, cfg.duration,
		cfg.clusters, cfg.steps(), cfg.replay(), planText(plans))
	var mu sync.Mutex
	var outcomes []chaosOutcome
	begin := time.Now()
	t.Cleanup(func() { writeChaosFigures(t, cfg, plans, outcomes, time.Since(begin)) })
	for i, plan := range plans {
		t.Run(fmt.Sprintf("cluster-%d", i), func(t *testing.T) {
			t.Parallel()
			cc := &chaosCluster{actions: map[chaosAction]int{}, faults: map[chaosFault]int{}}
			begin := time.Now()
			// Registered first, so it runs after the scenario's checker reported.
			t.Cleanup(func() {
				r := takeChecks(t)
				mu.Lock()
				defer mu.Unlock()
				outcomes = append(outcomes, chaosOutcome{name: t.Name(), passed: !t.Failed(), planned: len(plan), cc: cc,
					checks: r.checks, violations: r.violations, took: time.Since(begin)})
				if t.Failed() {
					t.Logf("failed at step %d of %d; replay with %s", cc.done+1, len(plan), cfg.replay())
				}
			})
			cc.s = start(t, scOptions{})
			cc.converged++
			cc.run(plan, !cfg.slice)
		})
	}
}

// takeChecks removes and returns the checker's figures recorded for t.
func takeChecks(t *testing.T) result {
	results.Lock()
	defer results.Unlock()
	r := results.checks[t.Name()]
	delete(results.checks, t.Name())
	return r
}

func planText(plans [][]chaosStep) string {
	var b strings.Builder
	for i, plan := range plans {
		fmt.Fprintf(&b, "cluster-%d:\n", i)
		for _, st := range plan {
			fmt.Fprintf(&b, "  %s\n", st)
		}
	}
	return b.String()
}
