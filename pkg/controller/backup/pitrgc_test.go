package backup

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// storedCluster reads TidbCluster ns/basic from the fake API.
func storedCluster(t *testing.T, deps *controller.FakeDependencies) *v1alpha1.TidbCluster {
	t.Helper()
	tc, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// settleCluster copies the stored TidbCluster into the cache.
func settleCluster(t *testing.T, deps *controller.FakeDependencies) {
	t.Helper()
	idx := deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer().GetIndexer()
	if err := idx.Update(storedCluster(t, deps)); err != nil {
		t.Fatal(err)
	}
}

// tikvSet is basic-tikv with 3 replicas: overlay says whether its template
// carries the GC overlay, updated how many pods run that template (all
// ready when it is 3).
func tikvSet(overlay bool, updated int32) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns", Generation: 2},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: updated,
			CurrentRevision: "basic-tikv-1", UpdateRevision: "basic-tikv-2"},
	}
	if updated == 3 {
		sts.Status.CurrentRevision = sts.Status.UpdateRevision
	}
	if overlay {
		sts.Spec.Template.Annotations = map[string]string{label.AnnTiKVConfigOverlay: label.TiKVGCOverlay}
	}
	return sts
}

// cacheSet puts sts into the StatefulSet cache, replacing what is there.
func cacheSet(t *testing.T, deps *controller.FakeDependencies, sts *appsv1.StatefulSet) {
	t.Helper()
	idx := deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer()
	if err := idx.Update(sts); err != nil {
		t.Fatal(err)
	}
}

func TestTiKVRunsOverlay(t *testing.T) {
	t.Parallel()
	unseen := tikvSet(true, 3)
	unseen.Status.ObservedGeneration = 1
	for name, c := range map[string]struct {
		sts  *appsv1.StatefulSet
		want bool
		why  string
	}{
		"no StatefulSet":        {nil, false, "does not exist"},
		"template without it":   {tikvSet(false, 3), false, "does not carry the overlay"},
		"template not observed": {unseen, false, "has not seen"},
		"rolling":               {tikvSet(true, 1), false, "1 of 3 TiKV pods"},
		"rolled":                {tikvSet(true, 3), true, ""},
	} {
		ok, why := tikvRunsOverlay(c.sts)
		if ok != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: (%v, %q), want (%v, …%q…)", name, ok, why, c.want, c.why)
		}
	}
}

// TestPiTRRestoreHoldsTiKVGCOverlay: a PiTR restore annotates its cluster
// and waits (Scheduled False, no Job) while TiKV rolls with the overlay;
// once every TiKV pod runs it the Job is created (Scheduled True); once the
// restore is Complete the annotation goes, and nothing else changes.
func TestPiTRRestoreHoldsTiKVGCOverlay(t *testing.T) {
	t.Parallel()
	deps, sync := restoreFixture(t, validRestore(v1alpha1.RestoreModePiTR), cluster())
	cacheSet(t, deps, tikvSet(false, 3))
	for i, sts := range []*appsv1.StatefulSet{tikvSet(false, 3), tikvSet(true, 0), tikvSet(true, 2)} {
		cacheSet(t, deps, sts)
		requeueAfter(t, sync())
		settleCluster(t, deps)
		if storedJob(t, deps, "restore-rt") != nil {
			t.Fatalf("step %d: the Job was created before TiKV runs with the overlay", i)
		}
		if got := storedCluster(t, deps).Annotations[label.AnnPiTRRestore]; got != "ns/rt" {
			t.Fatalf("step %d: cluster annotation %q, want ns/rt", i, got)
		}
		cond := condition.GetRestoreCondition(&storedRestore(t, deps).Status, v1alpha1.RestoreScheduled)
		if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != ReasonWaitGCOverlay {
			t.Fatalf("step %d: Scheduled %+v, want False %s", i, cond, ReasonWaitGCOverlay)
		}
	}
	expectEvent(t, events(deps), "Normal "+ReasonGCOverlaySet)

	cacheSet(t, deps, tikvSet(true, 3))
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "restore-rt") == nil || !condition.IsRestoreScheduled(storedRestore(t, deps)) {
		t.Fatal("want the Job and Scheduled once TiKV runs with the overlay")
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)

	completeRestore(t, deps)
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	settleCluster(t, deps)
	if got := storedCluster(t, deps).Annotations; got[label.AnnPiTRRestore] != "" {
		t.Fatalf("annotations after the restore %v, want the overlay's gone", got)
	}
	expectEvent(t, events(deps), "Normal "+ReasonGCOverlayRemoved)
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
}

// TestPiTRRestoreFailedJobReleasesOverlay: a restore failed by its Job
// releases the cluster on the next sync.
func TestPiTRRestoreFailedJobReleasesOverlay(t *testing.T) {
	t.Parallel()
	deps, sync := restoreFixture(t, validRestore(v1alpha1.RestoreModePiTR), cluster())
	// TiKV still runs with the overlay (of an earlier restore): the
	// annotation is set and the Job created in one sync.
	cacheSet(t, deps, tikvSet(true, 3))
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	settleCluster(t, deps)
	if storedCluster(t, deps).Annotations[label.AnnPiTRRestore] != "ns/rt" || storedJob(t, deps, "restore-rt") == nil {
		t.Fatal("want the cluster annotated and the Job created")
	}
	finishJob(t, deps, "restore-rt", batchv1.JobFailed, deps.FakeClock.Now())
	for range 2 { // Failed, then the release
		if err := sync(); err != nil {
			t.Fatal(err)
		}
	}
	if !condition.IsRestoreFailed(storedRestore(t, deps)) || storedCluster(t, deps).Annotations[label.AnnPiTRRestore] != "" {
		t.Fatalf("status %+v annotations %v, want Failed and released", storedRestore(t, deps).Status, storedCluster(t, deps).Annotations)
	}
}

// TestPiTRRestoreWaitsForAnotherHolder: a cluster held by another PiTR
// restore is left alone; the restore waits, without a Job.
func TestPiTRRestoreWaitsForAnotherHolder(t *testing.T) {
	t.Parallel()
	tc := cluster()
	tc.Annotations = map[string]string{label.AnnPiTRRestore: "other/first"}
	deps, sync := restoreFixture(t, validRestore(v1alpha1.RestoreModePiTR), tc)
	cacheSet(t, deps, tikvSet(true, 3))
	if d := requeueAfter(t, sync()); d != overlayPoll {
		t.Fatalf("requeue after %v, want %v", d, overlayPoll)
	}
	cond := condition.GetRestoreCondition(&storedRestore(t, deps).Status, v1alpha1.RestoreScheduled)
	if storedJob(t, deps, "restore-rt") != nil || cond == nil || !strings.Contains(cond.Message, "held by PiTR restore other/first") {
		t.Fatalf("Scheduled %+v; want a wait for other/first and no Job", cond)
	}
	if got := storedCluster(t, deps).Annotations[label.AnnPiTRRestore]; got != "other/first" {
		t.Fatalf("annotation %q, want other/first kept", got)
	}
}

// TestDeletedPiTRRestoreReleasesOverlay: a Restore gone from the cache
// releases the cluster whose annotation names it, and no other.
func TestDeletedPiTRRestoreReleasesOverlay(t *testing.T) {
	t.Parallel()
	tc := cluster()
	tc.Annotations = map[string]string{label.AnnPiTRRestore: "ns/rt"}
	other := cluster()
	other.Name, other.UID = "other", "uid-other"
	other.Annotations = map[string]string{label.AnnPiTRRestore: "ns/another"}
	deps, sync := restoreFixture(t, tc, other)
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if got := storedCluster(t, deps).Annotations[label.AnnPiTRRestore]; got != "" {
		t.Fatalf("annotation %q after the Restore was deleted, want none", got)
	}
	o, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Get(context.Background(), "other", metav1.GetOptions{})
	if err != nil || o.Annotations[label.AnnPiTRRestore] != "ns/another" {
		t.Fatalf("the other cluster's holder changed: %v %v", o.Annotations, err)
	}
	expectEvent(t, events(deps), "Normal "+ReasonGCOverlayRemoved)
}

// completeRestore writes Complete as the backup-manager does and settles.
func completeRestore(t *testing.T, deps *controller.FakeDependencies) {
	t.Helper()
	r := storedRestore(t, deps)
	condition.SetRestoreCondition(&r.Status, restoreCond(v1alpha1.RestoreComplete, "", ""), metav1.NewTime(deps.FakeClock.Now()))
	if _, err := deps.FakePingcap.PingcapV1alpha1().Restores("ns").UpdateStatus(context.Background(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, deps)
}
