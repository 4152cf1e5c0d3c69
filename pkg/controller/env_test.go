package controller

import (
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
)

// TestNewEnvCarriesFailoverFlags: each component's failover period comes
// from its own flag (TiFlash from --tiflash-failover-period, not TiKV's),
// and the node-failure settings reach the components.
func TestNewEnvCarriesFailoverFlags(t *testing.T) {
	t.Parallel()
	deps := NewFakeDependencies()
	cfg := deps.CLIConfig
	cfg.PDFailoverPeriod, cfg.TiKVFailoverPeriod, cfg.TiDBFailoverPeriod, cfg.TiFlashFailoverPeriod = time.Minute, 2*time.Minute, 3*time.Minute, 7*time.Minute
	cfg.DetectNodeFailure, cfg.PodHardRecoveryPeriod, cfg.RestartToDeleteStoreGap = true, time.Hour, 5*time.Second
	env := NewEnv(deps.Dependencies)
	for name, want := range map[string]time.Duration{names.PD: time.Minute, names.TiKV: 2 * time.Minute,
		names.TiDB: 3 * time.Minute, names.TiFlash: 7 * time.Minute} {
		if got := env.Failover(name).Period; got != want {
			t.Errorf("%s failover period %v, want %v", name, got, want)
		}
	}
	if nf := env.NodeFailure; !nf.Detect || nf.HardRecoveryPeriod != time.Hour || nf.RestartGap != 5*time.Second {
		t.Errorf("node failure settings %+v", nf)
	}
	if d := DefaultCLIConfig(); d.DetectNodeFailure || d.PodHardRecoveryPeriod != 24*time.Hour || d.RestartToDeleteStoreGap != 10*time.Minute {
		t.Errorf("defaults %+v", d)
	}
}
