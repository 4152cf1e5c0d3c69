package flow

import "context"

// Observation says how much of a cluster's members a sync reads from PD
// and TiDB.
type Observation int

const (
	// ObserveAll reads everything: members, health, the PD leader, PD's
	// location labels (and syncs store and server labels from them).
	ObserveAll Observation = iota
	// ObserveFailures is the periodic refresh of a converged cluster: it
	// reads what shows a failure (PD health, the stores, TiDB health) and
	// keeps what no failure changes (the PD leader while every member
	// stays as healthy as before, PD's location labels), read by an
	// ObserveAll less than the full refresh interval ago.
	ObserveFailures
	// ObserveNone keeps the members in status: a converged cluster whose
	// members were read less than --status-refresh-interval ago.
	ObserveNone
)

type observationKey struct{}

// WithObservation marks ctx with how much a sync observes; an unmarked
// context observes everything.
func WithObservation(ctx context.Context, o Observation) context.Context {
	return context.WithValue(ctx, observationKey{}, o)
}

// ObservationOf returns the mark WithObservation put on ctx (ObserveAll
// when none).
func ObservationOf(ctx context.Context) Observation {
	o, _ := ctx.Value(observationKey{}).(Observation)
	return o
}

// RecentObservation reports whether ctx is marked ObserveNone: components
// may keep the members in status instead of asking again. A component
// must still observe when anything it owns changed since.
func RecentObservation(ctx context.Context) bool {
	return ObservationOf(ctx) == ObserveNone
}

// FailuresOnly reports whether ctx is marked ObserveFailures: components
// read what shows a failure and may keep the rest.
func FailuresOnly(ctx context.Context) bool {
	return ObservationOf(ctx) == ObserveFailures
}
