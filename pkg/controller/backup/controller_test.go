package backup

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// validBackup is a BR backup of cluster basic to S3.
func validBackup() *v1alpha1.Backup {
	return &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: "bk", Namespace: "ns", UID: "uid-1", Generation: 1},
		Spec: v1alpha1.BackupSpec{
			BR:              &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b"}},
		},
	}
}

// invalidBackup names two storage providers, which validation forbids.
func invalidBackup() *v1alpha1.Backup {
	b := validBackup()
	b.Spec.Gcs = &v1alpha1.GcsStorageProvider{ProjectId: "p"}
	return b
}

// seed stores objs in the fake clientset and in the informers' indexers, as
// a synced cache would hold them, then forgets the seeding actions.
func seed(t *testing.T, deps *controller.FakeDependencies, objs ...any) {
	t.Helper()
	ctx := context.Background()
	pc := deps.FakePingcap.PingcapV1alpha1()
	informers := deps.InformerFactory.Pingcap().V1alpha1()
	for _, o := range objs {
		var err error
		var indexer cache.Indexer
		switch o := o.(type) {
		case *v1alpha1.Backup:
			_, err = pc.Backups(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			indexer = informers.Backups().Informer().GetIndexer()
		case *v1alpha1.Restore:
			_, err = pc.Restores(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			indexer = informers.Restores().Informer().GetIndexer()
		case *v1alpha1.TidbCluster:
			_, err = pc.TidbClusters(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			indexer = informers.TidbClusters().Informer().GetIndexer()
		case *batchv1.Job:
			_, err = deps.FakeKube.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			indexer = deps.JobInformerFactory.Batch().V1().Jobs().Informer().GetIndexer()
		default:
			t.Fatalf("cannot seed %T", o)
		}
		if err != nil {
			t.Fatalf("seed %T: %v", o, err)
		}
		if err := indexer.Add(o); err != nil {
			t.Fatalf("index %T: %v", o, err)
		}
	}
	deps.FakePingcap.ClearActions()
	deps.FakeKube.ClearActions()
}

// refreshBackup copies the stored Backup into the cache, as the informer
// would after a write, and returns it.
func refreshBackup(t *testing.T, deps *controller.FakeDependencies, name string) *v1alpha1.Backup {
	t.Helper()
	b, err := deps.FakePingcap.PingcapV1alpha1().Backups("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Backup %s: %v", name, err)
	}
	if err := deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer().Update(b); err != nil {
		t.Fatalf("index Backup %s: %v", name, err)
	}
	return b
}

// writes returns the API writes the fakes recorded since the last clear.
func writes(deps *controller.FakeDependencies) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range append(deps.FakePingcap.Actions(), deps.FakeKube.Actions()...) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	return out
}

// expectStatusPatches fails unless the writes are exactly n status patches.
func expectStatusPatches(t *testing.T, deps *controller.FakeDependencies, n int) {
	t.Helper()
	w := writes(deps)
	if len(w) != n {
		t.Fatalf("want %d writes, got %d: %v", n, len(w), w)
	}
	for _, a := range w {
		if a.GetVerb() != "patch" || a.GetSubresource() != "status" {
			t.Fatalf("want a status patch, got %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
		if pt := a.(k8stesting.PatchAction).GetPatchType(); pt != types.JSONPatchType {
			t.Fatalf("patch type %s, want a JSON patch", pt)
		}
	}
	deps.FakePingcap.ClearActions()
}

// nextEvent returns the next recorded event, or "" when there is none.
func nextEvent(deps *controller.FakeDependencies) string {
	select {
	case ev := <-deps.FakeRecorder.Events:
		return ev
	default:
		return ""
	}
}

func findBackupCondition(b *v1alpha1.Backup, typ v1alpha1.BackupConditionType) *v1alpha1.BackupCondition {
	for i := range b.Status.Conditions {
		if b.Status.Conditions[i].Type == typ {
			return &b.Status.Conditions[i]
		}
	}
	return nil
}

func TestInvalidBackupIsReportedOnceThenFixed(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	c, err := NewBackupController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	b := invalidBackup()
	seed(t, deps, cluster())
	// A status field the validation does not own must survive its writes.
	b.Status.BackupPath = "s3://b/kept"
	seed(t, deps, b)
	ctx := context.Background()

	if err := c.sync(ctx, "ns/bk"); !flow.IsIgnore(err) || !strings.Contains(err.Error(), "spec.gcs") {
		t.Fatalf("want an IgnoreError naming spec.gcs, got %v", err)
	}
	expectStatusPatches(t, deps, 1)
	got := refreshBackup(t, deps, "bk")
	cond := findBackupCondition(got, v1alpha1.BackupInvalid)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ReasonInvalidSpec ||
		!strings.Contains(cond.Message, "spec.gcs") || cond.LastTransitionTime.IsZero() {
		t.Fatalf("Invalid condition = %+v", cond)
	}
	if got.Status.Phase != v1alpha1.BackupInvalid || got.Status.BackupPath != "s3://b/kept" {
		t.Fatalf("status = %+v", got.Status)
	}
	if ev := nextEvent(deps); !strings.HasPrefix(ev, "Warning FailedValidation") || !strings.Contains(ev, "spec.gcs") {
		t.Fatalf("event %q, want a FailedValidation naming spec.gcs", ev)
	}

	// A resync of the converged object writes nothing and records nothing.
	if err := c.sync(ctx, "ns/bk"); !flow.IsIgnore(err) {
		t.Fatalf("resync: %v", err)
	}
	expectStatusPatches(t, deps, 0)
	if ev := nextEvent(deps); ev != "" {
		t.Fatalf("resync recorded %q", ev)
	}

	// The user fixes the spec: the Invalid condition and phase go.
	fixed := got.DeepCopy()
	fixed.Spec.Gcs = nil
	fixed.Generation = 2
	if _, err := deps.FakePingcap.PingcapV1alpha1().Backups("ns").Update(ctx, fixed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	refreshBackup(t, deps, "bk")
	deps.FakePingcap.ClearActions()
	if err := c.sync(ctx, "ns/bk"); requeueAfter(t, err) <= 0 {
		t.Fatalf("sync of the fixed spec: %v", err)
	}
	expectStatusPatches(t, deps, 1)
	settle(t, deps)
	if err := c.sync(ctx, "ns/bk"); err != nil {
		t.Fatalf("sync of the fixed spec: %v", err)
	}
	got = refreshBackup(t, deps, "bk")
	if cond := findBackupCondition(got, v1alpha1.BackupInvalid); cond != nil || got.Status.Phase != v1alpha1.BackupScheduled ||
		got.Status.BackupPath != "s3://b/kept" {
		t.Fatalf("status after the fix = %+v", got.Status)
	}
	if ev := nextEvent(deps); !strings.HasPrefix(ev, "Normal JobCreated") {
		t.Fatalf("event %q, want JobCreated", ev)
	}
	settle(t, deps)
	if err := c.sync(ctx, "ns/bk"); err != nil {
		t.Fatalf("resync: %v", err)
	}
	expectNoWrites(t, deps)
	if ev := nextEvent(deps); ev != "" {
		t.Fatalf("resync recorded %q", ev)
	}
}

func TestRestartedControllerDoesNotRepeatAReportedVerdict(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	first, err := NewBackupController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, deps, invalidBackup())
	if err := first.sync(context.Background(), "ns/bk"); !flow.IsIgnore(err) {
		t.Fatalf("sync: %v", err)
	}
	refreshBackup(t, deps, "bk")
	deps.FakePingcap.ClearActions()
	if ev := nextEvent(deps); ev == "" {
		t.Fatal("no event from the first controller")
	}

	// A new process: empty memory, the status written by its predecessor.
	second, err := New(BackupControllerName, first.kind,
		deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer(), deps.Recorder, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.sync(context.Background(), "ns/bk"); !flow.IsIgnore(err) {
		t.Fatalf("sync: %v", err)
	}
	expectStatusPatches(t, deps, 0)
	if ev := nextEvent(deps); ev != "" {
		t.Fatalf("restarted controller repeated %q", ev)
	}
}

func TestStatusPatchIsGuardedByUID(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	c, err := NewBackupController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	// The cache still holds an object deleted and recreated with another UID.
	stale := invalidBackup()
	stale.UID = "uid-old"
	seed(t, deps, invalidBackup())
	if err := deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer().Update(stale); err != nil {
		t.Fatal(err)
	}
	err = c.sync(context.Background(), "ns/bk")
	if err == nil || flow.IsIgnore(err) {
		t.Fatalf("want a retried error from the failed UID test, got %v", err)
	}
	stored := refreshBackup(t, deps, "bk")
	if len(stored.Status.Conditions) != 0 {
		t.Fatalf("the recreated object was written: %+v", stored.Status)
	}
	if ev := nextEvent(deps); ev != "" {
		t.Fatalf("event %q before the status was written", ev)
	}
}

func TestInvalidRestoreGetsInvalidCondition(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	c, err := NewRestoreController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	// A BR restore needs br.cluster.
	r := &v1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns", UID: "uid-r", Generation: 1},
		Spec: v1alpha1.RestoreSpec{
			BR:              &v1alpha1.BRConfig{},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b"}},
		},
	}
	seed(t, deps, r)
	if err := c.sync(context.Background(), "ns/rt"); !flow.IsIgnore(err) {
		t.Fatalf("sync: %v", err)
	}
	expectStatusPatches(t, deps, 1)
	got, err := deps.FakePingcap.PingcapV1alpha1().Restores("ns").Get(context.Background(), "rt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.RestoreInvalid || len(got.Status.Conditions) != 1 ||
		got.Status.Conditions[0].Type != v1alpha1.RestoreInvalid ||
		!strings.Contains(got.Status.Conditions[0].Message, "spec.br.cluster") {
		t.Fatalf("status = %+v", got.Status)
	}
	if ev := nextEvent(deps); !strings.HasPrefix(ev, "Warning FailedValidation") || !strings.Contains(ev, "spec.br.cluster") {
		t.Fatalf("event %q", ev)
	}
}

func TestDeletedObjectEndsTheSync(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	c, err := NewBackupController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.sync(context.Background(), "ns/gone"); err != nil {
		t.Fatalf("sync of a deleted Backup: %v", err)
	}
	expectStatusPatches(t, deps, 0)
	if ev := nextEvent(deps); ev != "" {
		t.Fatalf("event %q for a deleted Backup", ev)
	}
}
