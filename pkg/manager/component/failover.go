package component

import (
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// FailoverConfig is what the command line says about failover.
type FailoverConfig struct {
	// Enabled is --auto-failover.
	Enabled bool
	// Period is the component's grace period after a member's health or
	// state last changed before it counts as failed.
	Period time.Duration
}

// MaxFailover returns spec.<component>.maxFailoverCount (3 when unset).
func MaxFailover(p *int32) int32 {
	if p == nil {
		return 3
	}
	return *p
}

// Expired reports whether a transition at since is older than period at now.
func Expired(since time.Time, period time.Duration, now time.Time) bool {
	return !since.IsZero() && now.Sub(since) > period
}

// PodsReady reports whether the component's StatefulSet reports at least n
// Ready pods.
func PodsReady(s *v1alpha1.ComponentStatus, n int32) bool {
	return s.StatefulSet != nil && s.StatefulSet.ReadyReplicas >= n
}
