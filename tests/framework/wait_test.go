package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name      string
		cond      func(calls int) (bool, error)
		wantErr   []string // substrings; nil means success
		wantCalls int      // exact number of calls, 0 to skip the check
		wrapsBoom bool
	}{
		{name: "done at once", cond: func(int) (bool, error) { return true, nil }, wantCalls: 1},
		{name: "done on third call", cond: func(c int) (bool, error) { return c == 3, nil }, wantCalls: 3},
		{name: "error stops at once", cond: func(int) (bool, error) { return false, boom }, wantErr: []string{"boom"}, wantCalls: 1, wrapsBoom: true},
		{name: "timeout reports the observation", cond: func(int) (bool, error) { return false, nil },
			wantErr: []string{"not done after", "last observation: saw 7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			timeout := 10 * time.Second // generous: the successful cases end long before it
			if tc.wantErr != nil {
				timeout = 350 * time.Millisecond
			}
			err := Poll(context.Background(), timeout, func(ctx context.Context) (bool, error) {
				calls++
				Observef(ctx, "saw %d", 7)
				return tc.cond(calls)
			})
			if tc.wantErr == nil && err != nil {
				t.Fatalf("Poll() = %v, want nil", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Poll() = %v, want an error containing %q", err, want)
				}
			}
			if tc.wantCalls != 0 && calls != tc.wantCalls {
				t.Errorf("cond called %d times, want %d", calls, tc.wantCalls)
			}
			if tc.wrapsBoom && !errors.Is(err, boom) {
				t.Errorf("Poll() = %v, want it to wrap the condition's error", err)
			}
		})
	}
}

func TestTestNameLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"TestFoo":                      "testfoo",
		"TestFoo/sub_case#01":          "testfoo-sub-case-01",
		strings.Repeat("TestLong", 20): strings.Repeat("testlong", 8)[:63],
	} {
		if got := testNameLabel(in); got != want {
			t.Errorf("testNameLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
