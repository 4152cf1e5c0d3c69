package manager

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// Restore runs `restore`: `br restore <type>` (or `br restore point` for
// PiTR), Running → Complete with commitTs (BR's BackupTS, or the PiTR
// restored TS) and times, or Failed with the reason. A Restore already
// Complete or Failed is left alone. It errors when the CR cannot be read or
// written, or (wrapping ErrFailed) when the restore failed.
func (m *Manager) Restore(ctx context.Context) error {
	r, err := m.Client.PingcapV1alpha1().Restores(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading restore %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	if condition.IsRestoreFinished(r) {
		m.logf("restore %s/%s already finished (%s); nothing to do", r.Namespace, r.Name, r.Status.Phase)
		return nil
	}
	if m.Opts.Mode == string(v1alpha1.RestoreModePiTR) {
		r.Spec.Mode = v1alpha1.RestoreModePiTR
	}
	loc, err := storage.LocationOf(r.Spec.StorageProvider)
	if err != nil {
		return m.failRestore(ctx, ReasonInvalidStorage, err, "")
	}
	args, err := command.BRRestore(r, loc, m.Opts.ClusterTLS)
	if err != nil {
		return m.failRestore(ctx, ReasonBuildCommand, err, "")
	}
	return m.runRestore(ctx, r, m.brPath(), args, func(res toolResult) (string, error) {
		if r.Spec.Mode == v1alpha1.RestoreModePiTR {
			return r.Spec.PitrRestoredTs, nil
		}
		s, ok := res.lastSummary()
		if !ok || !s.Succeeded {
			return "", fmt.Errorf("BR exited 0 without a success summary")
		}
		return s.CommitTs(), nil
	})
}

// runRestore writes Running, runs the tool (for a BR restore br, inside the
// GC life-time dance of its spec.to) and writes Complete with the commitTs
// commitTs reads from its output, or Failed.
func (m *Manager) runRestore(ctx context.Context, br *v1alpha1.Restore, path string, args []string,
	commitTs func(toolResult) (string, error)) error {
	started := metav1.NewTime(m.now())
	if err := m.updateRestore(ctx, m.setRestore(v1alpha1.RestoreRunning, "", "",
		func(st *v1alpha1.RestoreStatus) { st.TimeStarted = started })); err != nil {
		return err
	}
	var access *v1alpha1.TiDBAccessConfig
	var want *string
	if br != nil {
		access, want = br.Spec.To, br.Spec.TikvGCLifeTime
	}
	res, err := m.runGuarded(ctx, access, want, path, args, m.failRestore)
	if err != nil {
		return err
	}
	ts, err := commitTs(res)
	if err != nil {
		return m.failRestore(ctx, ReasonNoSummary, err, res.failure())
	}
	done := metav1.NewTime(m.now())
	return m.updateRestore(ctx, m.setRestore(v1alpha1.RestoreComplete, "", "", func(st *v1alpha1.RestoreStatus) {
		st.CommitTs = ts
		st.TimeCompleted = done
		st.TimeTaken = timeTaken(st.TimeStarted.Time, done.Time)
	}))
}

// failRestore records Failed with reason and cause (plus the tool's last
// lines), and returns the cause wrapped in ErrFailed.
func (m *Manager) failRestore(ctx context.Context, reason string, cause error, detail string) error {
	msg := cause.Error()
	if detail != "" {
		msg += ": " + detail
	}
	m.logf("restore %s/%s failed: %s: %s", m.Opts.Namespace, m.Opts.Name, reason, msg)
	if err := m.updateRestore(ctx, m.setRestore(v1alpha1.RestoreFailed, reason, msg, nil)); err != nil {
		return errors.Join(fmt.Errorf("%w: %w", ErrFailed, cause), err)
	}
	return fmt.Errorf("%w: %s: %w", ErrFailed, reason, cause)
}
