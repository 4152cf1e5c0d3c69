package tidbinitializer

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// sync runs one sync of ti (as the cache holds it) and returns its error.
func (f *fixture) sync(ti *v1alpha1.TidbInitializer) error {
	return f.control.Sync(f.t.Context(), ti.DeepCopy())
}

// TestSyncCreatesTheJobOnceTiDBIsHealthy: no Job while no TiDB member is
// healthy (phase Pending, no condition); then one Job and its event; the
// phase follows the Job (Running, Completed); a converged sync writes
// nothing.
func TestSyncCreatesTheJobOnceTiDBIsHealthy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ti := newInitializer()
	f.seedInitializer(ti)
	f.seedSecret("tidb-secret")
	f.seedCluster(newCluster(false))
	if err := f.sync(ti); err != nil {
		t.Fatalf("sync with an unhealthy TiDB: %v", err)
	}
	if w := f.writes(); !slices.Equal(w, []string{"update tidbinitializers/status"}) {
		t.Fatalf("writes while TiDB is unhealthy: %v, want the Pending status only", w)
	}
	ti.Status = f.storedStatus(ti)
	if ti.Status.Phase != v1alpha1.InitializePhasePending || len(ti.Status.Conditions) != 0 {
		t.Errorf("status %+v, want Pending without conditions", ti.Status)
	}

	f.seedCluster(newCluster(true))
	f.deps.FakeKube.ClearActions()
	f.deps.FakePingcap.ClearActions()
	if err := f.sync(ti); err != nil {
		t.Fatalf("sync with a healthy TiDB: %v", err)
	}
	if w := f.writes(); !slices.Equal(w, []string{"create jobs"}) {
		t.Fatalf("writes: %v, want the Job created (status unchanged: Pending)", w)
	}
	if ev := f.events(); !hasEvent(ev, "Normal SuccessfulCreate create Job demo-tidb-initializer") {
		t.Errorf("events %v lack SuccessfulCreate", ev)
	}
	job, err := f.deps.FakeKube.BatchV1().Jobs("ns").Get(t.Context(), "demo-tidb-initializer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	for _, step := range []struct {
		status batchv1.JobStatus
		want   v1alpha1.InitializePhase
	}{
		{batchv1.JobStatus{Active: 1}, v1alpha1.InitializePhaseRunning},
		{batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
			v1alpha1.InitializePhaseCompleted},
	} {
		job.Status = step.status
		f.seedJobUpdate(job)
		if err := f.sync(ti); err != nil {
			t.Fatal(err)
		}
		ti.Status = f.storedStatus(ti)
		if ti.Status.Phase != step.want || ti.Status.Succeeded != step.status.Succeeded || ti.Status.Active != step.status.Active {
			t.Errorf("status %+v, want phase %s mirroring %+v", ti.Status, step.want, step.status)
		}
	}
	f.deps.FakeKube.ClearActions()
	f.deps.FakePingcap.ClearActions()
	if err := f.sync(ti); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("a converged sync wrote %v", w)
	}
}

// seedJobUpdate replaces job in the Job cache.
func (f *fixture) seedJobUpdate(job *batchv1.Job) {
	f.t.Helper()
	if err := f.deps.KubeInformerFactory.Batch().V1().Jobs().Informer().GetIndexer().Update(job.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

// TestSyncReportsInvalidInput: each problem gets phase Pending, the Invalid
// condition with its reason, one Warning, no Job, and the flow it asks for.
func TestSyncReportsInvalidInput(t *testing.T) {
	t.Parallel()
	noCM := newInitializer()
	noCM.Spec.InitSqlConfigMap = ptr.To("init-sql")
	noName := newInitializer()
	noName.Spec.Cluster.Name = ""
	long := newInitializer()
	long.Spec.Cluster.Name = "a-cluster-name-that-is-far-too-long-for-a-job-name-x"
	undecodable := newInitializer()
	undecodable.DecodeError = &v1alpha1.DecodeError{Field: "spec.cluster", Message: "expected an object"}
	noTiDB := newCluster(true)
	noTiDB.Spec.TiDB = nil
	// Fields the API server refuses in the Job's pod template.
	toleration := newInitializer()
	toleration.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
	account := newInitializer()
	account.Spec.ServiceAccountName = "Init_SA"
	negative := newInitializer()
	negative.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}
	cases := []struct {
		name    string
		ti      *v1alpha1.TidbInitializer
		tc      *v1alpha1.TidbCluster
		secret  bool
		reason  string
		outcome string // ignore, requeue, nil
	}{
		{"no cluster name", noName, newCluster(true), true, ReasonFailedValidation, "ignore"},
		{"Job name too long", long, newCluster(true), true, ReasonFailedValidation, "ignore"},
		{"unreadable spec", undecodable, newCluster(true), true, ReasonFailedValidation, "ignore"},
		{"cluster missing", newInitializer(), nil, true, ReasonClusterNotFound, "nil"},
		{"cluster without TiDB", newInitializer(), noTiDB, true, ReasonFailedValidation, "ignore"},
		{"passwordSecret missing", newInitializer(), newCluster(true), false, ReasonSecretNotFound, "requeue"},
		{"initSqlConfigMap missing", noCM, newCluster(true), true, ReasonConfigMapNotFound, "requeue"},
		{"toleration operator", toleration, newCluster(true), true, ReasonFailedValidation, "ignore"},
		{"serviceAccountName", account, newCluster(true), true, ReasonFailedValidation, "ignore"},
		{"negative cpu", negative, newCluster(false), true, ReasonFailedValidation, "ignore"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.seedInitializer(c.ti)
			if c.tc != nil {
				f.seedCluster(c.tc)
			}
			if c.secret {
				f.seedSecret("tidb-secret")
			}
			for range 2 {
				err := f.sync(c.ti)
				_, requeue := flow.AsRequeue(err)
				switch {
				case c.outcome == "ignore" && !flow.IsIgnore(err),
					c.outcome == "requeue" && !requeue,
					c.outcome == "nil" && err != nil:
					t.Fatalf("sync: %v, want %s", err, c.outcome)
				}
				c.ti.Status = f.storedStatus(c.ti)
			}
			st := c.ti.Status
			if st.Phase != v1alpha1.InitializePhasePending || len(st.Conditions) != 1 || st.Conditions[0].Type != ConditionInvalid ||
				st.Conditions[0].Reason != c.reason {
				t.Errorf("status %+v, want Pending and Invalid %s", st, c.reason)
			}
			if ev := f.events(); len(ev) != 1 || !hasEvent(ev, "Warning "+c.reason) {
				t.Errorf("events %v, want one Warning %s", ev, c.reason)
			}
			for _, w := range f.writes() {
				if w != "update tidbinitializers/status" {
					t.Errorf("unexpected write %s", w)
				}
			}
		})
	}
}

// TestSyncConfigMapWithoutKey: an initSqlConfigMap without init-sql waits.
func TestSyncConfigMapWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ti := newInitializer()
	ti.Spec.InitSqlConfigMap = ptr.To("init-sql")
	f.seedInitializer(ti)
	f.seedSecret("tidb-secret")
	f.seedCluster(newCluster(true))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "init-sql", Namespace: "ns"}, Data: map[string]string{"sql": "x"}}
	if err := f.deps.FakeKube.Tracker().Add(cm); err != nil {
		t.Fatal(err)
	}
	if _, ok := flow.AsRequeue(f.sync(ti)); !ok {
		t.Fatal("a ConfigMap without init-sql does not wait")
	}
	if st := f.storedStatus(ti); st.Conditions[0].Message != "initSqlConfigMap ns/init-sql has no key init-sql" {
		t.Errorf("condition %+v", st.Conditions[0])
	}
}

// TestSyncCompletedIsFinal: a Completed initializer whose Job is gone gets
// no new Job; a Failed one does (deleting the Job is the retry).
func TestSyncCompletedIsFinal(t *testing.T) {
	t.Parallel()
	for phase, wantJob := range map[v1alpha1.InitializePhase]bool{
		v1alpha1.InitializePhaseCompleted: false, v1alpha1.InitializePhaseFailed: true,
	} {
		t.Run(string(phase), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ti := newInitializer()
			ti.Status.Phase = phase
			f.seedInitializer(ti)
			f.seedSecret("tidb-secret")
			f.seedCluster(newCluster(true))
			if err := f.sync(ti); err != nil {
				t.Fatal(err)
			}
			created := slices.Contains(f.writes(), "create jobs")
			if created != wantJob {
				t.Errorf("Job created: %t, want %t (writes %v)", created, wantJob, f.writes())
			}
		})
	}
}

// TestSyncForeignJob: a Job of that name not controlled by the initializer
// is never adopted or mirrored.
func TestSyncForeignJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ti := newInitializer()
	f.seedInitializer(ti)
	f.seedJob(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "demo-tidb-initializer", Namespace: "ns"},
		Status: batchv1.JobStatus{Succeeded: 1}})
	if err := f.sync(ti); !flow.IsIgnore(err) {
		t.Fatalf("sync: %v, want an IgnoreError", err)
	}
	if st := f.storedStatus(ti); st.Phase != v1alpha1.InitializePhasePending || st.Conditions[0].Reason != ReasonJobConflict {
		t.Errorf("status %+v, want Pending with JobConflict", st)
	}
}
