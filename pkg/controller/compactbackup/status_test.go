package compactbackup

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestInvalidThenFixed: an invalid spec writes Invalid True, state Failed
// and the errors (once: the same verdict again writes nothing); fixed, the
// condition goes and the state is cleared so the compaction is scheduled;
// an unsupported field is named in its own condition.
func TestInvalidThenFixed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, compact(), false)
	now := f.ctl.now()
	ctx := context.Background()
	wrote, err := syncConditions(ctx, f.deps.Clientset, f.stored(t), "spec.startTs: Required value: start-ts must be set", "", now)
	cb := f.stored(t)
	if err != nil || !wrote || cb.Status.State != v1alpha1.CompactFailed || invalidMessage(cb) == "" ||
		cb.Status.Message != "spec.startTs: Required value: start-ts must be set" {
		t.Fatalf("invalid: wrote %v err %v status %+v", wrote, err, cb.Status)
	}
	if wrote, err := syncConditions(ctx, f.deps.Clientset, cb, invalidMessage(cb), "", now); err != nil || wrote {
		t.Fatalf("the same verdict again: wrote %v err %v, want no write", wrote, err)
	}
	cb.Spec.BR.DB = "test"
	wrote, err = syncConditions(ctx, f.deps.Clientset, cb, "", unsupportedMessage(cb), now)
	cb = f.stored(t)
	if err != nil || !wrote || cb.Status.State != "" || cb.Status.Message != "" || invalidMessage(cb) != "" ||
		!meta.IsStatusConditionTrue(cb.Status.Conditions, ConditionUnsupported) {
		t.Fatalf("fixed: wrote %v err %v status %+v, want state cleared and only Unsupported", wrote, err, cb.Status)
	}
}

// TestValidWritesNothing: a valid spec without unsupported fields on a
// status without conditions writes nothing.
func TestValidWritesNothing(t *testing.T) {
	t.Parallel()
	cb := compact()
	cb.Status.State = v1alpha1.CompactRunning
	got := statusFor(&cb.Status, "", "", 1, metav1.Now())
	if !equalStatus(&cb.Status, got) || got.Conditions != nil {
		t.Fatalf("statusFor changed a valid status: %+v", got)
	}
}
