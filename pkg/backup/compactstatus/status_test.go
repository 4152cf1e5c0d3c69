package compactstatus

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
)

// TestApplyRules: state and message replace only when set and different;
// endTs only grows (as a number, where v1.6's string comparison would take
// "9" over "10"); a retry record is appended once.
func TestApplyRules(t *testing.T) {
	t.Parallel()
	st := &v1alpha1.CompactStatus{State: v1alpha1.CompactRunning, Message: "m", EndTs: "9"}
	if Apply(st, Update{State: v1alpha1.CompactRunning, Message: "m"}) {
		t.Fatal("an equal update changed the status")
	}
	if !Apply(st, Update{EndTs: "10"}) || st.EndTs != "10" {
		t.Fatalf("endTs 10 over 9: %q", st.EndTs)
	}
	if Apply(st, Update{EndTs: "8"}) || st.EndTs != "10" {
		t.Fatalf("endTs went back to %q", st.EndTs)
	}
	r := NextRetry(st, metav1.Now(), "boom")
	if !Apply(st, Update{State: v1alpha1.CompactRetryFailed, Message: "boom", Retry: r}) || Apply(st, Update{Retry: r}) {
		t.Fatal("the retry record was not appended exactly once")
	}
	if st.State != v1alpha1.CompactRetryFailed || st.Message != "boom" || len(st.BackoffRetryStatus) != 1 ||
		st.BackoffRetryStatus[0].RetryNum != 0 {
		t.Fatalf("status %+v", st)
	}
	if Apply(st, Update{Message: ""}) || st.Message != "boom" {
		t.Fatal("an empty message cleared the message")
	}
}

func TestLatePrepareDoesNotRollBack(t *testing.T) {
	t.Parallel()
	for _, cur := range []v1alpha1.CompactState{v1alpha1.CompactRunning, v1alpha1.CompactComplete, v1alpha1.CompactFailed} {
		st := &v1alpha1.CompactStatus{State: cur}
		if Apply(st, Update{State: v1alpha1.CompactPrepare}) || st.State != cur {
			t.Errorf("Prepare after %s changed the state to %s", cur, st.State)
		}
	}
	for _, cur := range []v1alpha1.CompactState{"", v1alpha1.CompactScheduled, v1alpha1.CompactRetryFailed} {
		st := &v1alpha1.CompactStatus{State: cur}
		if !Apply(st, Update{State: v1alpha1.CompactPrepare}) || st.State != v1alpha1.CompactPrepare {
			t.Errorf("Prepare after %q left the state %s", cur, st.State)
		}
	}
}

// TestWriteUpdatesTheStatus writes through the status subresource and
// writes nothing for a no-op update.
func TestWriteUpdatesTheStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := fake.NewSimpleClientset(&v1alpha1.CompactBackup{ObjectMeta: metav1.ObjectMeta{Name: "cb", Namespace: "ns"}})
	cb, err := Write(ctx, client, "ns", "cb", Update{State: v1alpha1.CompactRunning, Progress: "[READ_META(1/2),COMPACT_WORK(0/10)]"})
	if err != nil || cb.Status.State != v1alpha1.CompactRunning || cb.Status.Progress == "" {
		t.Fatalf("Write: %v %+v", err, cb)
	}
	client.ClearActions()
	if _, err := Write(ctx, client, "ns", "cb", Update{State: v1alpha1.CompactRunning}); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" {
			t.Fatalf("a no-op update wrote: %v", a)
		}
	}
	if _, err := Write(ctx, client, "ns", "gone", Update{State: v1alpha1.CompactRunning}); err == nil {
		t.Fatal("writing a missing CompactBackup succeeded")
	}
}
