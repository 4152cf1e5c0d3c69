package backupschedule

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// epoch is the fake clock's start (controller.NewFakeDependencies).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture is a Control over fake clientsets, seeded indexers and a fake clock.
type fixture struct {
	t       *testing.T
	deps    *controller.FakeDependencies
	control *Control
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	c := NewControl(deps.BackupLister, deps.CompactBackupLister, deps.Clientset, deps.KubeClient, deps.Recorder, deps.FakeClock)
	return &fixture{t: t, deps: deps, control: c}
}

// newSchedule returns a valid schedule "bs" in ns1, created at created,
// backing up cluster basic to S3 prefix "daily".
func newSchedule(schedule string, created time.Time) *v1alpha1.BackupSchedule {
	return &v1alpha1.BackupSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "bs", Namespace: "ns1", UID: "bs-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(created)},
		Spec: v1alpha1.BackupScheduleSpec{
			Schedule: schedule,
			BackupTemplate: v1alpha1.BackupSpec{
				BR: &v1alpha1.BRConfig{Cluster: "basic"},
				StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
					Provider: "aws", Bucket: "bucket", Prefix: "daily", SecretName: "s3-secret"}},
			},
		},
	}
}

// seedSchedule puts bs into the fake clientset (for its status patches).
func (f *fixture) seedSchedule(bs *v1alpha1.BackupSchedule) {
	f.t.Helper()
	if err := f.deps.FakePingcap.Tracker().Add(bs.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

// seedBackup puts b into the Backup cache and the fake clientset.
func (f *fixture) seedBackup(b *v1alpha1.Backup) {
	f.t.Helper()
	if err := f.deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer().GetIndexer().Add(b); err != nil {
		f.t.Fatal(err)
	}
	if err := f.deps.FakePingcap.Tracker().Add(b.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

// scheduled returns the Backup bs would have created at at, in phase
// (empty: not started) with commitTs.
func scheduled(bs *v1alpha1.BackupSchedule, at time.Time, phase v1alpha1.BackupConditionType, commitTs string) *v1alpha1.Backup {
	b := newBackup(bs, at)
	b.UID = types.UID(b.Name + "-uid")
	b.Status.Phase = phase
	b.Status.CommitTs = commitTs
	if phase != "" {
		b.Status.Conditions = []v1alpha1.BackupCondition{{Type: phase, Status: corev1.ConditionTrue}}
	}
	return b
}

// sync runs one Sync of a copy of bs.
func (f *fixture) sync(bs *v1alpha1.BackupSchedule) (Result, error) {
	f.t.Helper()
	return f.control.Sync(context.Background(), bs.DeepCopy())
}

// writes returns the fake clientsets' write actions ("create backups",
// "patch backupschedules/status", "delete jobs", ...).
func (f *fixture) writes() []string {
	var out []string
	actions := append(f.deps.FakePingcap.Actions(), f.deps.FakeKube.Actions()...)
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		switch a := a.(type) {
		case k8stesting.CreateAction:
			s += " " + a.GetObject().(metav1.Object).GetName()
		case k8stesting.DeleteAction:
			s += " " + a.GetName()
		case k8stesting.PatchAction:
			s += " " + a.GetName()
		}
		out = append(out, s)
	}
	return out
}

// resetActions forgets the recorded actions.
func (f *fixture) resetActions() {
	f.deps.FakePingcap.ClearActions()
	f.deps.FakeKube.ClearActions()
}

// events drains the recorder: "<type> <reason> <message>" each.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.deps.FakeRecorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// status reads bs's status from the fake clientset.
func (f *fixture) status() v1alpha1.BackupScheduleStatus {
	f.t.Helper()
	bs, err := f.deps.FakePingcap.PingcapV1alpha1().BackupSchedules("ns1").Get(context.Background(), "bs", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return bs.Status
}

// backupNames lists the Backups in the fake clientset.
func (f *fixture) backupNames() []string {
	f.t.Helper()
	list, err := f.deps.FakePingcap.PingcapV1alpha1().Backups("ns1").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, b := range list.Items {
		out = append(out, b.Name)
	}
	return out
}

// hasEvent reports whether one of events contains all parts.
func hasEvent(events []string, parts ...string) bool {
	for _, e := range events {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(e, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func timePtr(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
