package backup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// cluster is TidbCluster ns/basic running TiKV v8.5.0.
func cluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "uid-tc"},
		Spec: v1alpha1.TidbClusterSpec{
			Version: "v8.5.0",
			TiKV:    &v1alpha1.TiKVSpec{},
		},
	}
}

// settle copies what the fakes store into the informers' indexers, as
// synced informers would after the writes, and forgets the actions.
func settle(t *testing.T, deps *controller.FakeDependencies) {
	t.Helper()
	ctx := context.Background()
	pc := deps.FakePingcap.PingcapV1alpha1()
	bks, err := pc.Backups("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	for i := range bks.Items {
		items = append(items, &bks.Items[i])
	}
	replace(t, deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer().Replace, items)
	rts, err := pc.Restores("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items = nil
	for i := range rts.Items {
		items = append(items, &rts.Items[i])
	}
	replace(t, deps.InformerFactory.Pingcap().V1alpha1().Restores().Informer().GetIndexer().Replace, items)
	jobs, err := deps.FakeKube.BatchV1().Jobs("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items = nil
	for i := range jobs.Items {
		items = append(items, &jobs.Items[i])
	}
	replace(t, deps.JobInformerFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace, items)
	deps.FakePingcap.ClearActions()
	deps.FakeKube.ClearActions()
}

func replace(t *testing.T, f func([]any, string) error, items []any) {
	t.Helper()
	if err := f(items, ""); err != nil {
		t.Fatal(err)
	}
}

// expectNoWrites fails when the fakes recorded any write.
func expectNoWrites(t *testing.T, deps *controller.FakeDependencies) {
	t.Helper()
	if w := writes(deps); len(w) != 0 {
		t.Fatalf("want no writes, got %d: %v", len(w), w)
	}
}

// storedJob reads Job ns/name from the fake API; nil when absent.
func storedJob(t *testing.T, deps *controller.FakeDependencies, name string) *batchv1.Job {
	t.Helper()
	j, err := deps.FakeKube.BatchV1().Jobs("ns").Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// finishJob marks the stored Job name Complete or Failed (as the Job
// controller would) and settles the caches.
func finishJob(t *testing.T, deps *controller.FakeDependencies, name string, typ batchv1.JobConditionType, at time.Time) {
	t.Helper()
	j := storedJob(t, deps, name)
	if j == nil {
		t.Fatalf("no Job %s to finish", name)
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: metav1.NewTime(at)})
	if _, err := deps.FakeKube.BatchV1().Jobs("ns").UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, deps)
}

// mutateBackup changes the stored Backup name (as a user or the
// backup-manager would) and settles the caches.
func mutateBackup(t *testing.T, deps *controller.FakeDependencies, name string, f func(*v1alpha1.Backup)) {
	t.Helper()
	ctx := context.Background()
	b, err := deps.FakePingcap.PingcapV1alpha1().Backups("ns").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f(b)
	if _, err := deps.FakePingcap.PingcapV1alpha1().Backups("ns").Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, deps)
}

// stored reads Backup name from the fake API.
func stored(t *testing.T, deps *controller.FakeDependencies, name string) *v1alpha1.Backup {
	t.Helper()
	b, err := deps.FakePingcap.PingcapV1alpha1().Backups("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requeueAfter returns the delay of a RequeueError, failing on anything else.
func requeueAfter(t *testing.T, err error) time.Duration {
	t.Helper()
	re, ok := flow.AsRequeue(err)
	if !ok {
		t.Fatalf("want a RequeueError, got %v", err)
	}
	return re.After
}

// events drains the recorded events.
func events(deps *controller.FakeDependencies) []string {
	var out []string
	for ev := nextEvent(deps); ev != ""; ev = nextEvent(deps) {
		out = append(out, ev)
	}
	return out
}

// expectEvent fails unless one of evs starts with prefix.
func expectEvent(t *testing.T, evs []string, prefix string) {
	t.Helper()
	for _, ev := range evs {
		if strings.HasPrefix(ev, prefix) {
			return
		}
	}
	t.Fatalf("no event %q in %q", prefix, evs)
}

// failJobCreates makes every Job create fail.
func failJobCreates(deps *controller.FakeDependencies) {
	deps.FakeKube.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("quota exceeded")
	})
}

// condOf returns b's condition of typ, nil when absent.
func condOf(b *v1alpha1.Backup, typ v1alpha1.BackupConditionType) *v1alpha1.BackupCondition {
	return findBackupCondition(b, typ)
}
