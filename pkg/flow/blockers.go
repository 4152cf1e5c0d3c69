package flow

import (
	"context"
	"slices"
	"sync"
)

type blockersKey struct{}

// Blockers collects, during one sync, what concretely keeps a component's
// pods from running (a Pending pod's scheduling message, a StatefulSet that
// cannot create pods, a missing Secret). A later wait such as "waiting for
// a PD quorum" then shows its cause in the cluster's conditions.
type Blockers struct {
	mu    sync.Mutex
	items []string
}

// WithBlockers returns ctx carrying an empty collection for one sync.
func WithBlockers(ctx context.Context) (context.Context, *Blockers) {
	b := &Blockers{}
	return context.WithValue(ctx, blockersKey{}, b), b
}

// AddBlocker records why a component's pods do not run, when ctx carries a
// collection (WithBlockers); otherwise it does nothing. A reason already
// recorded (several components meeting the same cause) is kept once.
func AddBlocker(ctx context.Context, why string) {
	if b, ok := ctx.Value(blockersKey{}).(*Blockers); ok && why != "" {
		b.mu.Lock()
		if !slices.Contains(b.items, why) {
			b.items = append(b.items, why)
		}
		b.mu.Unlock()
	}
}

// List returns what was recorded, in order; nil for a nil collection.
func (b *Blockers) List() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.items...)
}
