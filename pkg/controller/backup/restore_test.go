package backup

import (
	"context"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

func validRestore(mode v1alpha1.RestoreMode) *v1alpha1.Restore {
	return &v1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns", UID: "uid-r", Generation: 1},
		Spec: v1alpha1.RestoreSpec{
			Mode:            mode,
			BR:              &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b", Prefix: "bk"}},
		},
	}
}

func restoreFixture(t *testing.T, objs ...any) (*controller.FakeDependencies, func() error) {
	t.Helper()
	deps := controller.NewFakeDependencies()
	c, err := NewRestoreController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, deps, objs...)
	return deps, func() error {
		err := c.sync(context.Background(), "ns/rt")
		settle(t, deps)
		return err
	}
}

func storedRestore(t *testing.T, deps *controller.FakeDependencies) *v1alpha1.Restore {
	t.Helper()
	r, err := deps.FakePingcap.PingcapV1alpha1().Restores("ns").Get(context.Background(), "rt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRestoreWaitsForItsCluster(t *testing.T) {
	t.Parallel()
	deps, sync := restoreFixture(t, validRestore(""))
	requeueAfter(t, sync())
	if storedJob(t, deps, "restore-rt") != nil {
		t.Fatal("a restore Job was created for a missing cluster")
	}
	got := storedRestore(t, deps)
	if cond := condition.GetRestoreCondition(&got.Status, v1alpha1.RestoreRetryFailed); cond == nil || cond.Reason != ReasonClusterNotFound {
		t.Fatalf("status %+v, want RetryFailed GetTidbClusterFailed", got.Status)
	}
	expectEvent(t, events(deps), "Warning GetTidbClusterFailed")

	// The cluster appears: the Job runs.
	seed(t, deps, cluster())
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "restore-rt") == nil || !condition.IsRestoreScheduled(storedRestore(t, deps)) {
		t.Fatal("want the Job and Scheduled once the cluster exists")
	}
}

// TestPiTRRestoreOfClusterWithoutTiKV: a cluster without TiKV of its own
// has nothing to roll: the PiTR Job is created at once, with --mode=pitr,
// and the cluster is not annotated.
func TestPiTRRestoreOfClusterWithoutTiKV(t *testing.T) {
	t.Parallel()
	tc := cluster()
	tc.Spec.TiKV = nil
	deps, sync := restoreFixture(t, validRestore(v1alpha1.RestoreModePiTR), tc)
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	job := storedJob(t, deps, "restore-rt")
	if job == nil || !slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "--mode=pitr") {
		t.Fatalf("Job %+v, want --mode=pitr", job)
	}
	if got := storedCluster(t, deps); got.Annotations[label.AnnPiTRRestore] != "" {
		t.Fatalf("annotations %v, want none", got.Annotations)
	}
	expectEvent(t, events(deps), "Normal JobCreated")
}

func TestRestoreJobFailureAndIdempotence(t *testing.T) {
	t.Parallel()
	deps, sync := restoreFixture(t, validRestore(""), cluster())
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if w := writes(deps); len(w) != 0 {
		t.Fatalf("a converged restore wrote %v", w)
	}
	finishJob(t, deps, "restore-rt", batchv1.JobFailed, deps.FakeClock.Now())
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	got := storedRestore(t, deps)
	if !condition.IsRestoreFailed(got) || got.Status.Phase != v1alpha1.RestoreFailed {
		t.Fatalf("status %+v, want Failed", got.Status)
	}
	expectEvent(t, events(deps), "Warning BackoffLimitExceeded")
	// A restore never runs twice: the deleted Job of a Scheduled restore is not recreated.
	if err := deps.FakeKube.BatchV1().Jobs("ns").Delete(context.Background(), "restore-rt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, deps)
	if err := sync(); err != nil || storedJob(t, deps, "restore-rt") != nil {
		t.Fatalf("sync %v recreated the Job", err)
	}
}

func TestRestoreCreateFailureIsRetryFailed(t *testing.T) {
	t.Parallel()
	deps, sync := restoreFixture(t, validRestore(""), cluster())
	failJobCreates(deps)
	if err := sync(); err == nil {
		t.Fatal("want a retried error")
	}
	got := storedRestore(t, deps)
	if cond := condition.GetRestoreCondition(&got.Status, v1alpha1.RestoreRetryFailed); cond == nil || cond.Reason != ReasonCreateRestoreJobErr {
		t.Fatalf("status %+v", got.Status)
	}
	expectEvent(t, events(deps), "Warning CreateRestoreJobFailed")
}
