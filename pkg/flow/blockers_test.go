package flow

import (
	"context"
	"fmt"
	"testing"
)

// TestAddBlockerKeepsEachReasonOnce: components meeting the same cause
// name it once; order is kept; an empty reason and a context without a
// collection record nothing.
func TestAddBlockerKeepsEachReasonOnce(t *testing.T) {
	t.Parallel()
	AddBlocker(context.Background(), "ignored")
	ctx, b := WithBlockers(context.Background())
	for _, why := range []string{"PD at x timed out", "pod a is Pending", "", "PD at x timed out"} {
		AddBlocker(ctx, why)
	}
	if got := fmt.Sprint(b.List()); got != "[PD at x timed out pod a is Pending]" {
		t.Fatalf("blockers = %s", got)
	}
}
