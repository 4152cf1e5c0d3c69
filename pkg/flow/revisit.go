package flow

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

type revisitKey struct{}

// Revisits collects, during one sync, work a member started and must come
// back to without holding up the members after it (a PVC the storage
// driver is still expanding). The sync ends as a RequeueError after the
// shortest delay asked for, naming every reason.
type Revisits struct {
	mu      sync.Mutex
	after   time.Duration
	reasons []string
}

// WithRevisits returns ctx carrying an empty collection for one sync.
func WithRevisits(ctx context.Context) (context.Context, *Revisits) {
	r := &Revisits{}
	return context.WithValue(ctx, revisitKey{}, r), r
}

// RevisitAfter asks, when ctx carries a collection (WithRevisits), for
// another sync within d because of reason; otherwise it does nothing.
func RevisitAfter(ctx context.Context, d time.Duration, format string, args ...any) {
	r, ok := ctx.Value(revisitKey{}).(*Revisits)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reasons) == 0 || d < r.after {
		r.after = d
	}
	r.reasons = append(r.reasons, fmt.Sprintf(format, args...))
}

// Err returns nil when nothing asked for a revisit, else a RequeueError
// after the shortest delay with the reasons joined by "; ".
func (r *Revisits) Err() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reasons) == 0 {
		return nil
	}
	return &RequeueError{Reason: strings.Join(r.reasons, "; "), After: r.after}
}
