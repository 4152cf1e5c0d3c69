package manager

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// passwordKey is the key of the TiDB password in spec.from/to.secretName.
const passwordKey = "password"

// Export runs `export`: dumpling dumps the backup's spec.from TiDB straight
// to its storage, Running → Complete with backupPath and backupSize (summed
// from storage), or Failed. It errors when the CR cannot be read or written,
// or (wrapping ErrFailed) when the export failed.
func (m *Manager) Export(ctx context.Context) error {
	b, err := m.Client.PingcapV1alpha1().Backups(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading backup %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	if condition.IsBackupFinished(b) {
		m.logf("backup %s/%s already finished (%s); nothing to do", b.Namespace, b.Name, b.Status.Phase)
		return nil
	}
	loc, err := storage.LocationOf(b.Spec.StorageProvider)
	if err != nil {
		return m.failBackup(ctx, ReasonInvalidStorage, err, "")
	}
	if b.Spec.From == nil {
		return m.failBackup(ctx, ReasonBuildCommand, fmt.Errorf("an export needs spec.from"), "")
	}
	login, err := m.login(ctx, *b.Spec.From)
	if err != nil {
		return m.failBackup(ctx, ReasonReadCredentials, err, "")
	}
	args, err := command.Dumpling(b, loc, login)
	if err != nil {
		return m.failBackup(ctx, ReasonBuildCommand, err, "")
	}
	started := metav1.NewTime(m.now())
	if err := m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupRunning},
		func(st *v1alpha1.BackupStatus) { st.TimeStarted, st.BackupPath = started, loc.URL() })); err != nil {
		return err
	}
	if _, err := m.runGuarded(ctx, b.Spec.From, b.Spec.TikvGCLifeTime, toolPath(m.Opts.DumplingPath, "dumpling"), args,
		m.failBackup); err != nil {
		return err
	}
	size, err := m.sizeOf(ctx, loc)
	if err != nil {
		return m.failBackup(ctx, ReasonSizeFailed, err, "")
	}
	done := metav1.NewTime(m.now())
	return m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupComplete},
		func(st *v1alpha1.BackupStatus) {
			st.BackupSize, st.BackupSizeReadable = size, HumanBytes(size)
			st.TimeCompleted = done
			st.TimeTaken = timeTaken(st.TimeStarted.Time, done.Time)
		}))
}

// Import runs `import`: TiDB Lightning (TiDB backend) loads the restore's
// storage into its spec.to TiDB, Running → Complete or Failed. It errors
// when the CR cannot be read or written, or (wrapping ErrFailed) when the
// import failed.
func (m *Manager) Import(ctx context.Context) error {
	r, err := m.Client.PingcapV1alpha1().Restores(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading restore %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	if condition.IsRestoreFinished(r) {
		m.logf("restore %s/%s already finished (%s); nothing to do", r.Namespace, r.Name, r.Status.Phase)
		return nil
	}
	loc, err := storage.LocationOf(r.Spec.StorageProvider)
	if err != nil {
		return m.failRestore(ctx, ReasonInvalidStorage, err, "")
	}
	if r.Spec.To == nil {
		return m.failRestore(ctx, ReasonBuildCommand, fmt.Errorf("an import needs spec.to"), "")
	}
	login, err := m.login(ctx, *r.Spec.To)
	if err != nil {
		return m.failRestore(ctx, ReasonReadCredentials, err, "")
	}
	args, err := command.Lightning(r, loc, login)
	if err != nil {
		return m.failRestore(ctx, ReasonBuildCommand, err, "")
	}
	return m.runRestore(ctx, nil, toolPath(m.Opts.LightningPath, "tidb-lightning"), args,
		func(toolResult) (string, error) { return "", nil })
}

// login reads the TiDB password from access's Secret (key "password").
func (m *Manager) login(ctx context.Context, access v1alpha1.TiDBAccessConfig) (command.Login, error) {
	if m.Kube == nil {
		return command.Login{}, fmt.Errorf("no Kubernetes client to read secret %s", access.SecretName)
	}
	s, err := m.Kube.CoreV1().Secrets(m.Opts.Namespace).Get(ctx, access.SecretName, metav1.GetOptions{})
	if err != nil {
		return command.Login{}, fmt.Errorf("reading the TiDB password secret %s/%s: %w", m.Opts.Namespace, access.SecretName, err)
	}
	pw, ok := s.Data[passwordKey]
	if !ok {
		return command.Login{}, fmt.Errorf("secret %s/%s has no key %q", m.Opts.Namespace, access.SecretName, passwordKey)
	}
	return command.Login{Access: access, Password: string(pw), ClientTLS: m.Opts.ClientTLS}, nil
}
