package podhttp_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

func TestFakePods(t *testing.T) {
	t.Parallel()
	pods := podhttp.FakePods[string, string]{Default: "default"}
	pods.Set("ns", "p0", "set")
	pods.Update("ns", "p1", func(v *string) { *v += "+updated" })
	errDown := errors.New("down")
	pods.SetError("ns", "p2", errDown)

	for _, tc := range []struct {
		pod, want string
		err       error
	}{
		{pod: "p0", want: "set"},
		{pod: "p1", want: "default+updated"},
		{pod: "p2", err: errDown},
		{pod: "p3", want: "default"},
	} {
		got, err := pods.Record("call "+tc.pod, "ns", tc.pod)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Record(%s) = %q, %v; want %q, %v", tc.pod, got, err, tc.want, tc.err)
		}
	}
	if got, _ := pods.Record("other namespace", "other", "p0"); got != "default" {
		t.Errorf("pods are keyed by namespace too: got %q", got)
	}
	pods.SetError("ns", "p2", nil)
	if _, err := pods.Record("call p2", "ns", "p2"); err != nil {
		t.Errorf("after clearing the error: %v", err)
	}
	want := []string{"call p0", "call p1", "call p2", "call p3", "other namespace", "call p2"}
	if diff := cmp.Diff(want, pods.Calls()); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
}

func TestFakePodsConcurrent(t *testing.T) {
	t.Parallel()
	var pods podhttp.FakePods[int, int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			pods.Update("ns", "p", func(v *int) { *v++ })
			_, _ = pods.Record(i, "ns", "p")
		})
	}
	wg.Wait()
	if n, _ := pods.Record(-1, "ns", "p"); n != 8 || len(pods.Calls()) != 9 {
		t.Errorf("value %d after 8 updates, %d calls", n, len(pods.Calls()))
	}
}
