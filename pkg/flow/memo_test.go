package flow

import (
	"context"
	"errors"
	"testing"
)

func TestRememberReadsOncePerSync(t *testing.T) {
	t.Parallel()
	calls := 0
	read := func() (int, error) { calls++; return calls, nil }
	ctx := WithMemo(context.Background())
	for i := 0; i < 3; i++ {
		if v, _ := Remember(ctx, "stores", read); v != 1 {
			t.Fatalf("read %d, want the first answer 1", v)
		}
	}
	Forget(ctx, "stores")
	if v, _ := Remember(ctx, "stores", read); v != 2 {
		t.Errorf("after Forget read %d, want a fresh answer 2", v)
	}
	if v, _ := Remember(context.Background(), "stores", read); v != 3 {
		t.Errorf("without a memo read %d, want every call to read", v)
	}
}

func TestRememberKeepsErrors(t *testing.T) {
	t.Parallel()
	calls := 0
	ctx := WithMemo(context.Background())
	for i := 0; i < 2; i++ {
		_, err := Remember(ctx, "k", func() (string, error) { calls++; return "", errors.New("refused") })
		if err == nil {
			t.Fatal("want the error")
		}
	}
	if calls != 1 {
		t.Errorf("read %d times, want once", calls)
	}
}
