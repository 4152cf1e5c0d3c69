package tidbinit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// fakeTiDB plays root's password on a TiDB: logins with another password
// are refused as access denied; down makes every call fail to connect.
type fakeTiDB struct {
	password string
	down     bool
	sets     int
	calls    int
	addr     string
}

func (f *fakeTiDB) SetRootPassword(_ context.Context, t tidbsql.Target, current, password string) error {
	f.calls++
	f.addr = t.Addr
	if f.down {
		return errors.New("dial: connection refused")
	}
	if current != f.password {
		return fmt.Errorf("login: %w", tidbsql.ErrAccessDenied)
	}
	f.password = password
	f.sets++
	return nil
}

func (f *fakeTiDB) CheckPassword(_ context.Context, _ tidbsql.Target, _, password string) error {
	f.calls++
	if f.down {
		return errors.New("dial: connection refused")
	}
	if password != f.password {
		return fmt.Errorf("login: %w", tidbsql.ErrAccessDenied)
	}
	return nil
}

type fixture struct {
	step *Step
	kube *kubefake.Clientset
	db   *fakeTiDB
	rec  *record.FakeRecorder
}

func newFixture(t *testing.T, objects ...*corev1.Secret) *fixture {
	t.Helper()
	kube := kubefake.NewClientset()
	for _, o := range objects {
		if _, err := kube.CoreV1().Secrets(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kube.ClearActions()
	rec := record.NewFakeRecorder(20)
	db := &fakeTiDB{}
	n := 0
	return &fixture{
		step: &Step{kube: kube, writer: apply.NewApplier(kube, rec, apply.Caches{}), recorder: rec, sql: db,
			generate: func() (string, error) { n++; return fmt.Sprintf("generated-password-%d", n), nil }},
		kube: kube, db: db, rec: rec,
	}
}

func newCluster(healthy bool) *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	tc.Spec.TiDB = &v1alpha1.TiDBSpec{Initializer: &v1alpha1.TiDBInitializer{CreatePassword: true}}
	tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{"basic-tidb-0": {Name: "basic-tidb-0", Health: healthy}}
	return tc
}

func initSecret(password string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-init", Namespace: "ns"},
		Data: map[string][]byte{SecretKey: []byte(password)}}
}

// sync runs the step and returns the revisit it asked for (nil: none).
func (f *fixture) sync(t *testing.T, tc *v1alpha1.TidbCluster) error {
	t.Helper()
	ctx, revisits := flow.WithRevisits(context.Background())
	if err := f.step.Sync(ctx, tc); err != nil {
		t.Fatalf("Sync returned %v; it must never hold up the members after it", err)
	}
	return revisits.Err()
}

func (f *fixture) secret(t *testing.T) string {
	t.Helper()
	s, err := f.kube.CoreV1().Secrets("ns").Get(context.Background(), "basic-init", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data[SecretKey])
}

func (f *fixture) events() string {
	var out []string
	for len(f.rec.Events) > 0 {
		out = append(out, <-f.rec.Events)
	}
	return strings.Join(out, "\n")
}

func initialized(tc *v1alpha1.TidbCluster) *bool { return tc.Status.TiDB.PasswordInitialized }

// TestFreshCluster: the Secret is created, owned by the cluster, root gets
// its password, status says so and a Normal event tells where it is.
func TestFreshCluster(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tc := newCluster(true)
	if revisit := f.sync(t, tc); revisit != nil {
		t.Errorf("revisit %v", revisit)
	}
	if got := f.secret(t); got != "generated-password-1" || f.db.password != got {
		t.Errorf("Secret %q, TiDB's root password %q: want both the generated one", got, f.db.password)
	}
	s, _ := f.kube.CoreV1().Secrets("ns").Get(context.Background(), "basic-init", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != "u1" {
		t.Errorf("Secret controller %+v, want the TidbCluster", ref)
	}
	if p := initialized(tc); p == nil || !*p {
		t.Errorf("passwordInitialized %v, want true", p)
	}
	if ev := f.events(); !strings.Contains(ev, ReasonPasswordInitialized) || strings.Contains(ev, "generated-password") {
		t.Errorf("events %q: want %s without the password", ev, ReasonPasswordInitialized)
	}
	if f.db.addr != "basic-tidb-peer.ns.svc:4000" {
		t.Errorf("dialed %s, want the peer Service without spec.tidb.service", f.db.addr)
	}
}

// TestRestartBetweenSteps: an operator that stopped after creating the
// Secret, or after setting the password, finishes with the same password
// and never generates a second one.
func TestRestartBetweenSteps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, serverPassword string
		wantSets             int
	}{
		{"stopped after the Secret", "", 1},
		{"stopped after the SQL", "kept-password", 0},
	} {
		f := newFixture(t, initSecret("kept-password"))
		f.db.password = tc.serverPassword
		cluster := newCluster(true)
		if revisit := f.sync(t, cluster); revisit != nil {
			t.Errorf("%s: revisit %v", tc.name, revisit)
		}
		if f.secret(t) != "kept-password" || f.db.password != "kept-password" || f.db.sets != tc.wantSets {
			t.Errorf("%s: Secret %q, root %q, %d sets; want kept-password in both, %d sets",
				tc.name, f.secret(t), f.db.password, f.db.sets, tc.wantSets)
		}
		if p := initialized(cluster); p == nil || !*p {
			t.Errorf("%s: passwordInitialized %v, want true", tc.name, p)
		}
	}
}

// TestFailures: root's password changed by someone else, TiDB down, or a
// Secret without the key: a Warning event, passwordInitialized false, a
// revisit, and the Secret and root's password untouched.
func TestFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		secret         *corev1.Secret
		serverPassword string
		down           bool
		want           string
	}{
		{"changed outside", initSecret("kept-password"), "someone-elses", false, "changed outside the operator"},
		{"TiDB down", initSecret("kept-password"), "", true, "connection refused"},
		{"Secret without root", initSecret(""), "", false, `has no "root"`},
	} {
		f := newFixture(t, tc.secret)
		f.db.password, f.db.down = tc.serverPassword, tc.down
		cluster := newCluster(true)
		revisit := f.sync(t, cluster)
		if revisit == nil || !strings.Contains(revisit.Error(), tc.want) {
			t.Errorf("%s: revisit %v, want one naming %q", tc.name, revisit, tc.want)
		}
		if p := initialized(cluster); p == nil || *p {
			t.Errorf("%s: passwordInitialized %v, want false", tc.name, p)
		}
		if ev := f.events(); !strings.Contains(ev, "Warning "+ReasonFailedPassword) || !strings.Contains(ev, tc.want) {
			t.Errorf("%s: events %q", tc.name, ev)
		}
		if f.secret(t) != string(tc.secret.Data[SecretKey]) || f.db.password != tc.serverPassword {
			t.Errorf("%s: Secret %q, root %q changed", tc.name, f.secret(t), f.db.password)
		}
	}
}

// TestNothingToDo: no createPassword, an unhealthy TiDB (a revisit), a paused
// cluster, and a converged one (passwordInitialized) make no API call and
// no SQL.
func TestNothingToDo(t *testing.T) {
	t.Parallel()
	noInit := newCluster(true)
	noInit.Spec.TiDB.Initializer = nil
	paused := newCluster(true)
	paused.Spec.Paused = true
	done := newCluster(true)
	done.Status.TiDB.PasswordInitialized = ptr(true)
	for _, tc := range []struct {
		name       string
		cluster    *v1alpha1.TidbCluster
		wantRevist bool
	}{
		{"no createPassword", noInit, false},
		{"unhealthy TiDB", newCluster(false), true},
		{"paused", paused, false},
		{"converged", done, false},
	} {
		f := newFixture(t)
		revisit := f.sync(t, tc.cluster)
		if (revisit != nil) != tc.wantRevist {
			t.Errorf("%s: revisit %v", tc.name, revisit)
		}
		if n := len(f.kube.Actions()); n != 0 || f.db.calls != 0 {
			t.Errorf("%s: %d API actions, %d SQL calls; want none", tc.name, n, f.db.calls)
		}
	}
}

// TestSQLAddr: the client Service on its port when spec.tidb.service is set.
func TestSQLAddr(t *testing.T) {
	t.Parallel()
	tc := newCluster(true)
	port := int32(3306)
	tc.Spec.TiDB.Service = &v1alpha1.TiDBServiceSpec{ServiceSpec: v1alpha1.ServiceSpec{Port: &port}}
	if got := sqlAddr(tc); got != "basic-tidb.ns.svc:3306" {
		t.Errorf("addr %s", got)
	}
}

// TestTLSTargetNeedsSecret: with tlsClient enabled and no client Secret the
// attempt fails naming the Secret.
func TestTLSTargetNeedsSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t, initSecret("kept-password"))
	cluster := newCluster(true)
	cluster.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true}
	revisit := f.sync(t, cluster)
	if revisit == nil || !strings.Contains(revisit.Error(), "basic-tidb-client-secret") {
		t.Errorf("revisit %v, want one naming the client Secret", revisit)
	}
	if f.db.calls != 0 {
		t.Errorf("%d SQL calls without TLS material", f.db.calls)
	}
}

// TestNewPassword: 32 characters of the alphabet, different each time.
func TestNewPassword(t *testing.T) {
	t.Parallel()
	a, err := NewPassword()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewPassword()
	if len(a) != PasswordLength || a == b || strings.Trim(a, passwordAlphabet) != "" {
		t.Errorf("passwords %q, %q", a, b)
	}
}
