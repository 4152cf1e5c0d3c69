package flow

import "context"

type recentObservationKey struct{}

// WithRecentObservation marks ctx for a sync of a converged cluster whose
// members were read from PD and TiDB less than --status-refresh-interval
// ago: components may keep the members in status instead of asking again.
func WithRecentObservation(ctx context.Context) context.Context {
	return context.WithValue(ctx, recentObservationKey{}, true)
}

// RecentObservation reports whether ctx was marked by WithRecentObservation.
// A component must still observe when anything it owns changed since.
func RecentObservation(ctx context.Context) bool {
	recent, _ := ctx.Value(recentObservationKey{}).(bool)
	return recent
}
