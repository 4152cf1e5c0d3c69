// Package tidbinit is the sync step that gives a new cluster's root a
// random password when spec.tidb.initializer.createPassword is set (spec
// §3.4 TiDB): once a TiDB server is healthy it creates the Secret
// `<tc>-init` (key `root`, owned by the TidbCluster), sets root's password
// through SQL, and records status.tidb.passwordInitialized.
//
// Every step survives an operator restart or crash between steps: the
// Secret is created once and never regenerated, and when root no longer
// logs in with the empty password, the Secret's password working means it
// was already set. So there is never a second password and never a lost
// one. A cluster whose passwordInitialized is true is not looked at again
// (no read, no SQL). The step never holds up the members after it: waits
// and failures ask for a revisit (flow.RevisitAfter) instead.
package tidbinit

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// SecretKey is the key of the root password in Secret `<tc>-init`.
const SecretKey = "root"

// Event reasons.
const (
	ReasonPasswordInitialized = "RootPasswordInitialized"
	ReasonFailedPassword      = "FailedInitRootPassword"
)

// Revisit delays: while no TiDB server is healthy, and after a failure.
const (
	waitDelay  = 10 * time.Second
	retryDelay = 30 * time.Second
)

// SecretName returns "<tc>-init", the Secret with root's random password.
func SecretName(tcName string) string { return tcName + "-init" }

// rootSQL is what the step asks of TiDB (tidbsql in production).
type rootSQL interface {
	// SetRootPassword logs in as root with current and sets password;
	// tidbsql.ErrAccessDenied when current is wrong.
	SetRootPassword(ctx context.Context, t tidbsql.Target, current, password string) error
	// CheckPassword reports whether root logs in with password.
	CheckPassword(ctx context.Context, t tidbsql.Target, user, password string) error
}

type realSQL struct{}

func (realSQL) SetRootPassword(ctx context.Context, t tidbsql.Target, current, password string) error {
	return tidbsql.SetRootPassword(ctx, t, current, password)
}

func (realSQL) CheckPassword(ctx context.Context, t tidbsql.Target, user, password string) error {
	return tidbsql.CheckPassword(ctx, t, user, password)
}

// Step is the member of a cluster sync that initializes root's password.
type Step struct {
	kube     kubernetes.Interface
	writer   *apply.Applier
	recorder record.EventRecorder
	sql      rootSQL
	generate func() (string, error)
}

// New returns the step over env's API client (Secret reads), write layer
// (the Secret's create) and recorder.
func New(env *component.Env) *Step {
	return &Step{kube: env.Kube, writer: env.Writer, recorder: env.Recorder, sql: realSQL{}, generate: NewPassword}
}

// Name labels metrics and logs.
func (s *Step) Name() string { return "tidb_init" }

// Sync initializes root's password of tc when createPassword asks for it and
// status.tidb.passwordInitialized is not yet true. It sets
// passwordInitialized in tc.Status (true once done, false with a Warning
// event when an attempt failed) and asks for a revisit while waiting for a
// healthy TiDB or after a failure (the Secret cannot be read or created,
// TiDB cannot be reached, root's password is unknown). It never returns an
// error, so the members after it always run.
func (s *Step) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if !wanted(tc) || tc.Spec.Paused {
		return nil
	}
	if !tidbHealthy(tc) {
		flow.RevisitAfter(ctx, waitDelay, "root password: waiting for a healthy TiDB")
		return nil
	}
	if err := s.initialize(ctx, tc); err != nil {
		s.fail(ctx, tc, err)
		return nil
	}
	tc.Status.TiDB.PasswordInitialized = ptr(true)
	if s.recorder != nil {
		s.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonPasswordInitialized,
			"root's password is set; it is in Secret %s, key %s", SecretName(tc.Name), SecretKey)
	}
	return nil
}

// initialize reads or creates the Secret and sets root's password from it.
func (s *Step) initialize(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	password, err := s.ensureSecret(ctx, tc)
	if err != nil {
		return err
	}
	target, err := s.target(ctx, tc)
	if err != nil {
		return err
	}
	return s.setPassword(ctx, target, SecretName(tc.Name), password)
}

// wanted reports whether tc asks for a random root password not yet set.
func wanted(tc *v1alpha1.TidbCluster) bool {
	db := tc.Spec.TiDB
	if db == nil || db.Initializer == nil || !db.Initializer.CreatePassword {
		return false
	}
	done := tc.Status.TiDB.PasswordInitialized
	return done == nil || !*done
}

// tidbHealthy reports whether some TiDB server answered healthy, as the
// TiDB component observed in this sync.
func tidbHealthy(tc *v1alpha1.TidbCluster) bool {
	for _, m := range tc.Status.TiDB.Members {
		if m.Health {
			return true
		}
	}
	return false
}

// setPassword sets root's password from empty to password; when the empty
// password is refused it checks password, which working means an earlier
// run already set it (crashed before recording it).
func (s *Step) setPassword(ctx context.Context, t tidbsql.Target, secret, password string) error {
	err := s.sql.SetRootPassword(ctx, t, "", password)
	if err == nil || !errors.Is(err, tidbsql.ErrAccessDenied) {
		return err
	}
	if err := s.sql.CheckPassword(ctx, t, tidbsql.RootUser, password); err != nil {
		if errors.Is(err, tidbsql.ErrAccessDenied) {
			return fmt.Errorf("root has a password that is neither empty nor the one in Secret %s; "+
				"it was changed outside the operator", secret)
		}
		return err
	}
	return nil
}

// fail records a failed attempt: a Warning event, passwordInitialized
// false, and a revisit.
func (s *Step) fail(ctx context.Context, tc *v1alpha1.TidbCluster, err error) {
	klog.FromContext(ctx).Info("root password not initialized", "tidbcluster", klog.KObj(tc), "err", err)
	tc.Status.TiDB.PasswordInitialized = ptr(false)
	if s.recorder != nil {
		s.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonFailedPassword,
			"root's password from Secret %s is not set yet: %v", SecretName(tc.Name), err)
	}
	flow.RevisitAfter(ctx, retryDelay, "root password: %v", err)
}

// ensureSecret returns root's password from Secret <tc>-init, creating the
// Secret with a new random password when it does not exist. An existing
// Secret is never changed; one without a usable password is an error.
func (s *Step) ensureSecret(ctx context.Context, tc *v1alpha1.TidbCluster) (string, error) {
	name := SecretName(tc.Name)
	live, err := s.kube.CoreV1().Secrets(tc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		live, err = s.createSecret(ctx, tc)
	}
	if err != nil {
		return "", fmt.Errorf("root password Secret %s/%s: %w", tc.Namespace, name, err)
	}
	password := string(live.Data[SecretKey])
	if password == "" {
		return "", fmt.Errorf("root password Secret %s/%s has no %q: it was not written by the operator; "+
			"delete it or add the key", tc.Namespace, name, SecretKey)
	}
	return password, nil
}

// createSecret creates <tc>-init with a new password; when it appeared in
// the meantime, the existing one is read and used instead.
func (s *Step) createSecret(ctx context.Context, tc *v1alpha1.TidbCluster) (*corev1.Secret, error) {
	password, err := s.generate()
	if err != nil {
		return nil, err
	}
	desired := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(tc.Name), Namespace: tc.Namespace,
			Labels: label.New().Instance(tc.Name).Component(names.TiDB).Labels()},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SecretKey: []byte(password)},
	}
	created, err := s.writer.CreateSecret(ctx, tc, desired)
	if apierrors.IsAlreadyExists(err) {
		return s.kube.CoreV1().Secrets(tc.Namespace).Get(ctx, desired.Name, metav1.GetOptions{})
	}
	return created, err
}

func ptr[T any](v T) *T { return &v }
