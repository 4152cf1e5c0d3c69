package compactbackup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// fixture is a control over fake dependencies holding cb (API and cache)
// and, unless noCluster, TidbCluster ns/basic.
type fixture struct {
	deps *controller.FakeDependencies
	ctl  *control
}

func newFixture(t *testing.T, cb *v1alpha1.CompactBackup, noCluster bool) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	if !noCluster {
		if err := deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer().GetIndexer().Add(cluster()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := deps.FakePingcap.PingcapV1alpha1().CompactBackups("ns").Create(context.Background(), cb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &fixture{deps: deps, ctl: newControl(deps.Dependencies)}
}

// stored reads cb from the fake API.
func (f *fixture) stored(t *testing.T) *v1alpha1.CompactBackup {
	t.Helper()
	cb, err := f.deps.FakePingcap.PingcapV1alpha1().CompactBackups("ns").Get(context.Background(), "cb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

// sync runs the control on the stored cb, with the stored Jobs cached.
func (f *fixture) sync(t *testing.T) error {
	t.Helper()
	jobs, err := f.deps.FakeKube.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	for i := range jobs.Items {
		items = append(items, &jobs.Items[i])
	}
	if err := f.deps.JobInformerFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(items, ""); err != nil {
		t.Fatal(err)
	}
	return f.ctl.sync(context.Background(), f.stored(t))
}

// jobCount is the number of Jobs created so far.
func (f *fixture) jobCount(t *testing.T) int {
	t.Helper()
	jobs, err := f.deps.FakeKube.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs.Items)
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case ev := <-f.deps.FakeRecorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestScheduleThenCreateJob: an empty state becomes Scheduled with no Job;
// the next sync creates the Job (SuccessfulCreate) and writes Prepare; a
// running Job and a Complete one are left alone (no write, no Job).
func TestScheduleThenCreateJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, compact(), false)
	if err := f.sync(t); err != nil || f.stored(t).Status.State != v1alpha1.CompactScheduled || f.jobCount(t) != 0 {
		t.Fatalf("first sync: err %v state %q jobs %d, want Scheduled and no Job", err, f.stored(t).Status.State, f.jobCount(t))
	}
	if err := f.sync(t); err != nil || f.stored(t).Status.State != v1alpha1.CompactPrepare || f.jobCount(t) != 1 {
		t.Fatalf("second sync: err %v state %q jobs %d, want Prepare and the Job", err, f.stored(t).Status.State, f.jobCount(t))
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Normal "+ReasonJobCreated) {
		t.Fatalf("events %q, want one %s", evs, ReasonJobCreated)
	}
	f.deps.FakePingcap.ClearActions()
	for _, done := range []bool{false, true} {
		if done {
			f.setJobCondition(t, batchv1.JobComplete)
		}
		if err := f.sync(t); err != nil {
			t.Fatal(err)
		}
		if w := writes(f.deps.FakePingcap.Actions()); len(w) != 0 || f.jobCount(t) != 1 {
			t.Fatalf("Job complete=%v: writes %v, jobs %d; want none and the one Job", done, w, f.jobCount(t))
		}
	}
}

// TestFinishedStatesAreFinal: Complete and Failed read no Job and write nothing.
func TestFinishedStatesAreFinal(t *testing.T) {
	t.Parallel()
	for _, st := range []v1alpha1.CompactState{v1alpha1.CompactComplete, v1alpha1.CompactFailed} {
		cb := compact()
		cb.Status.State = st
		f := newFixture(t, cb, false)
		f.deps.FakePingcap.ClearActions()
		if err := f.sync(t); err != nil || f.jobCount(t) != 0 || len(writes(f.deps.FakePingcap.Actions())) != 0 {
			t.Fatalf("%s: err %v jobs %d writes %v", st, err, f.jobCount(t), writes(f.deps.FakePingcap.Actions()))
		}
	}
}

// TestFailedJobFailsTheCompaction: the Job's Failed condition makes the
// state Failed with a Warning, keeping the backup-manager's message.
func TestFailedJobFailsTheCompaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, compact(), false)
	_ = f.sync(t)
	_ = f.sync(t)
	f.mutate(t, func(cb *v1alpha1.CompactBackup) {
		cb.Status.State, cb.Status.Message = v1alpha1.CompactRetryFailed, "compaction aborted: disk full"
	})
	f.setJobCondition(t, batchv1.JobFailed)
	f.events()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	got := f.stored(t).Status
	if got.State != v1alpha1.CompactFailed || got.Message != "compaction aborted: disk full" {
		t.Fatalf("status %+v, want Failed with the backup-manager's message", got)
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonJobFailed) {
		t.Fatalf("events %q, want one %s", evs, ReasonJobFailed)
	}
}

// TestCreateFailuresBackOffThenFail: a missing cluster fails each create
// with RetryFailed and an idempotent retry record; the second create is at
// once, the third only 20 s after the second failure; once the last
// record's number exceeds maxRetryTimes the state is Failed, no Job.
func TestCreateFailuresBackOffThenFail(t *testing.T) {
	t.Parallel()
	cb := compact()
	cb.Spec.MaxRetryTimes = 1
	cb.Status.State = v1alpha1.CompactScheduled
	f := newFixture(t, cb, true)
	for i := range 2 {
		err := f.sync(t)
		st := f.stored(t).Status
		if err == nil || !strings.Contains(err.Error(), "failed to fetch tidbcluster ns/basic") ||
			st.State != v1alpha1.CompactRetryFailed || len(st.BackoffRetryStatus) != i+1 || st.BackoffRetryStatus[i].RetryNum != i {
			t.Fatalf("create %d: err %v status %+v, want RetryFailed with record %d", i, err, st, i)
		}
	}
	if d := requeueAfter(t, f.sync(t)); d != 20*time.Second {
		t.Fatalf("third create waits %s, want 20s", d)
	}
	f.deps.FakeClock.Step(20 * time.Second)
	if err := f.sync(t); err == nil || len(f.stored(t).Status.BackoffRetryStatus) != 3 {
		t.Fatalf("third create: err %v, records %d, want 3", err, len(f.stored(t).Status.BackoffRetryStatus))
	}
	if err := f.sync(t); err != nil || f.stored(t).Status.State != v1alpha1.CompactFailed || f.jobCount(t) != 0 {
		t.Fatalf("after the retries: err %v state %q jobs %d, want Failed and no Job", err, f.stored(t).Status.State, f.jobCount(t))
	}
}

// TestCreateRefusedIsRetryFailed: a refused Job create records the API's error.
func TestCreateRefusedIsRetryFailed(t *testing.T) {
	t.Parallel()
	cb := compact()
	cb.Status.State = v1alpha1.CompactScheduled
	f := newFixture(t, cb, false)
	f.deps.FakeKube.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("quota exceeded")
	})
	err := f.sync(t)
	if st := f.stored(t).Status; err == nil || st.State != v1alpha1.CompactRetryFailed || !strings.Contains(st.Message, "quota exceeded") {
		t.Fatalf("err %v status %+v, want RetryFailed naming the refusal", err, st)
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonJobCreateFailed) {
		t.Fatalf("events %q, want one %s", evs, ReasonJobCreateFailed)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{0: 0, 1: 0, 2: 20 * time.Second, 3: 40 * time.Second, 5: 160 * time.Second,
		6: 320 * time.Second, 7: 6 * time.Minute, 30: 6 * time.Minute} {
		if got := backoff(n); got != want {
			t.Errorf("backoff(%d) = %s, want %s", n, got, want)
		}
	}
}

// mutate changes the stored cb.
func (f *fixture) mutate(t *testing.T, change func(*v1alpha1.CompactBackup)) {
	t.Helper()
	cb := f.stored(t)
	change(cb)
	if _, err := f.deps.FakePingcap.PingcapV1alpha1().CompactBackups("ns").UpdateStatus(context.Background(), cb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setJobCondition gives the stored Job a True condition of type typ.
func (f *fixture) setJobCondition(t *testing.T, typ batchv1.JobConditionType) {
	t.Helper()
	j, err := f.deps.FakeKube.BatchV1().Jobs("ns").Get(context.Background(), "cb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"})
	if _, err := f.deps.FakeKube.BatchV1().Jobs("ns").UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writes are the create, update, patch and delete actions among actions.
func writes(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetSubresource())
		}
	}
	return out
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

// TestGoneDeletesItsJob: once the CompactBackup is gone its Job is deleted;
// a Job of that name another owner controls is kept.
func TestGoneDeletesItsJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, compact(), false)
	_ = f.sync(t)
	_ = f.sync(t)
	other := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}}
	if _, err := f.deps.FakeKube.BatchV1().Jobs("ns").Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = f.sync(t) // caches both Jobs
	for _, name := range []string{"cb", "other"} {
		if err := f.ctl.deleteJob(context.Background(), "ns", name); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := f.deps.FakeKube.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].Name != "other" {
		t.Fatalf("Jobs left %v, want only other", jobs.Items)
	}
}
