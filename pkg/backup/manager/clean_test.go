package manager

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// objects returns n keys under prefix plus keys of a sibling and another prefix.
func objects(prefix string, n int) map[string]int64 {
	out := map[string]int64{prefix + "1-sibling/x": 1, "other/y": 1}
	for i := range n {
		out[fmt.Sprintf("%s/%03d.sst", prefix, i)] = int64(i)
	}
	return out
}

func TestCleanOptionsOf(t *testing.T) {
	t.Parallel()
	d := CleanOptionsOf(nil)
	if d.PageSize != 10000 || d.BatchConcurrency != 10 || d.RoutineConcurrency != 100 || d.RetryCount != 5 || d.BatchSize != 1000 {
		t.Errorf("defaults = %+v", d)
	}
	o := CleanOptionsOf(&v1alpha1.CleanOption{PageSize: 7, BatchConcurrency: 3, RoutineConcurrency: 4,
		RetryCount: 1, BackoffEnabled: true, DisableBatchConcurrency: true})
	if o.PageSize != 7 || o.BatchConcurrency != 3 || o.RoutineConcurrency != 4 || o.RetryCount != 1 || !o.BackoffEnabled || !o.DisableBatchConcurrency {
		t.Errorf("options = %+v", o)
	}
}

func TestDeleteUnderBatches(t *testing.T) {
	t.Parallel()
	b := newFakeBucket(objects("bk", 25))
	opt := CleanOptionsOf(&v1alpha1.CleanOption{PageSize: 10, BatchConcurrency: 2})
	opt.BatchSize = 4
	n, err := DeleteUnder(t.Context(), b, "bk/", opt)
	if err != nil || n != 25 {
		t.Fatalf("DeleteUnder = %d, %v; want 25", n, err)
	}
	if len(b.objects) != 2 || b.objects["bk1-sibling/x"] != 1 || b.objects["other/y"] != 1 {
		t.Errorf("left %v, want only the sibling and the other prefix", b.objects)
	}
	// Pages of 10, 10, 5 in batches of at most 4: 3+3+2 batches.
	if len(b.batches) != 8 || len(b.singles) != 0 {
		t.Errorf("%d batches, %d singles; want 8, 0", len(b.batches), len(b.singles))
	}
	for _, batch := range b.batches {
		if len(batch) > 4 {
			t.Errorf("batch of %d keys exceeds 4", len(batch))
		}
	}
	if b.maxFlight > 2 {
		t.Errorf("%d batches in flight, want at most 2", b.maxFlight)
	}
}

func TestDeleteUnderOneByOne(t *testing.T) {
	t.Parallel()
	b := newFakeBucket(objects("bk", 12))
	opt := CleanOptionsOf(&v1alpha1.CleanOption{DisableBatchConcurrency: true, RoutineConcurrency: 3})
	n, err := DeleteUnder(t.Context(), b, "bk/", opt)
	if err != nil || n != 12 || len(b.singles) != 12 || len(b.batches) != 0 || b.maxFlight > 3 {
		t.Errorf("n=%d err=%v singles=%d batches=%d maxFlight=%d", n, err, len(b.singles), len(b.batches), b.maxFlight)
	}
}

func TestDeleteUnderRetries(t *testing.T) {
	t.Parallel()
	b := newFakeBucket(objects("bk", 3))
	b.failDelete["bk/001.sst"] = 2
	var waits []time.Duration
	opt := CleanOptionsOf(&v1alpha1.CleanOption{RetryCount: 2, BackoffEnabled: true, DisableBatchConcurrency: true})
	opt.SleepForTest = func(d time.Duration) { waits = append(waits, d) }
	if _, err := DeleteUnder(t.Context(), b, "bk/", opt); err != nil {
		t.Fatalf("two failures within two retries: %v", err)
	}
	if len(waits) != 2 || waits[0] != 100*time.Millisecond || waits[1] != 200*time.Millisecond {
		t.Errorf("backoff waits = %v", waits)
	}

	b = newFakeBucket(objects("bk", 3))
	b.failDelete["bk/002.sst"] = -1
	n, err := DeleteUnder(t.Context(), b, "bk/", CleanOptionsOf(&v1alpha1.CleanOption{RetryCount: 1}))
	if err == nil || n != 0 {
		t.Errorf("a key that never deletes: n=%d err=%v, want an error", n, err)
	}
	if len(b.batches) != 2 {
		t.Errorf("%d batch attempts, want 1 + 1 retry", len(b.batches))
	}
	if _, err := DeleteUnder(t.Context(), b, "", CleanOptionsOf(nil)); err == nil {
		t.Error("an empty prefix was accepted")
	}
}

func TestSizeUnderAndHumanBytes(t *testing.T) {
	t.Parallel()
	b := newFakeBucket(objects("bk", 2500))
	got, err := SizeUnder(t.Context(), b, "bk/")
	if want := int64(2499 * 2500 / 2); err != nil || got != want {
		t.Errorf("SizeUnder = %d, %v; want %d", got, err, want)
	}
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 15041: "15.0 kB", 1_900_000: "1.9 MB", 3 << 40: "3.3 TB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
