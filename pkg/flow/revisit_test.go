package flow

import (
	"context"
	"testing"
	"time"
)

func TestRevisitsKeepTheShortestDelayAndEveryReason(t *testing.T) {
	ctx, r := WithRevisits(context.Background())
	if err := r.Err(); err != nil {
		t.Fatalf("nothing asked for a revisit, got %v", err)
	}
	RevisitAfter(ctx, time.Minute, "tikv volume %s resizing", "tikv")
	RevisitAfter(ctx, 10*time.Second, "pd volume pd resizing")
	RevisitAfter(ctx, 30*time.Second, "pump volume data resizing")
	re, ok := AsRequeue(r.Err())
	if !ok {
		t.Fatalf("Err() = %v, want a RequeueError", r.Err())
	}
	if re.After != 10*time.Second {
		t.Errorf("After = %v, want the shortest delay 10s", re.After)
	}
	want := "tikv volume tikv resizing; pd volume pd resizing; pump volume data resizing"
	if re.Reason != want {
		t.Errorf("Reason = %q, want %q", re.Reason, want)
	}
}

func TestRevisitAfterWithoutACollectionDoesNothing(t *testing.T) {
	RevisitAfter(context.Background(), time.Second, "ignored")
	var r *Revisits
	if err := r.Err(); err != nil {
		t.Errorf("a nil collection reported %v", err)
	}
}
