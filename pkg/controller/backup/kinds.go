package backup

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// Controller names: the queue names and the "controller" metric label, as
// the TiDB Operator names them.
const (
	BackupControllerName         = "backup"
	RestoreControllerName        = "restore"
	BackupScheduleControllerName = "backupschedule"
)

// NewBackupController returns the Backup controller over deps (Backup
// informer and lister, clientset for status, recorder, clock). An invalid
// Backup gets a FailedValidation event, a True Invalid condition and phase
// Invalid. It fails only when the event handler cannot be registered.
func NewBackupController(deps *controller.Dependencies) (*Controller[*v1alpha1.Backup], error) {
	kind := Kind[*v1alpha1.Backup]{
		Name:   "Backup",
		NotRun: "backups are not run yet",
		Get: func(ns, name string) (*v1alpha1.Backup, error) {
			return deps.BackupLister.Backups(ns).Get(name)
		},
		Validate: func(b *v1alpha1.Backup) field.ErrorList {
			b = b.DeepCopy()
			defaulting.SetBackupDefaults(b)
			return validation.ValidateBackup(b)
		},
		SyncStatus: func(ctx context.Context, b *v1alpha1.Backup, message string) (bool, error) {
			return syncBackupStatus(ctx, deps.Clientset, b, message, metav1.NewTime(deps.Clock.Now()))
		},
		InvalidMessage: backupInvalidMessage,
	}
	c, err := New(BackupControllerName, kind, deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer(), deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("backup controller: %w", err)
	}
	return c, nil
}

// NewRestoreController returns the Restore controller over deps, which
// reports an invalid Restore as NewBackupController does a Backup. The target
// TidbCluster is not looked up: only the Restore's own spec is validated. It
// fails only when the event handler cannot be registered.
func NewRestoreController(deps *controller.Dependencies) (*Controller[*v1alpha1.Restore], error) {
	kind := Kind[*v1alpha1.Restore]{
		Name:   "Restore",
		NotRun: "restores are not run yet",
		Get: func(ns, name string) (*v1alpha1.Restore, error) {
			return deps.RestoreLister.Restores(ns).Get(name)
		},
		Validate: func(r *v1alpha1.Restore) field.ErrorList {
			r = r.DeepCopy()
			defaulting.SetRestoreDefaults(r)
			return validation.ValidateRestore(r)
		},
		SyncStatus: func(ctx context.Context, r *v1alpha1.Restore, message string) (bool, error) {
			return syncRestoreStatus(ctx, deps.Clientset, r, message, metav1.NewTime(deps.Clock.Now()))
		},
		InvalidMessage: restoreInvalidMessage,
	}
	c, err := New(RestoreControllerName, kind, deps.InformerFactory.Pingcap().V1alpha1().Restores().Informer(), deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("restore controller: %w", err)
	}
	return c, nil
}

// NewBackupScheduleController returns the BackupSchedule controller over
// deps. BackupScheduleStatus has no conditions or phase in v1alpha1, so an
// invalid schedule is reported by the FailedValidation event only and the
// controller never writes to the API. It fails only when the event handler
// cannot be registered.
func NewBackupScheduleController(deps *controller.Dependencies) (*Controller[*v1alpha1.BackupSchedule], error) {
	kind := Kind[*v1alpha1.BackupSchedule]{
		Name:   "BackupSchedule",
		NotRun: "no Backups are created from it yet",
		Get: func(ns, name string) (*v1alpha1.BackupSchedule, error) {
			return deps.BackupScheduleLister.BackupSchedules(ns).Get(name)
		},
		Validate: func(bs *v1alpha1.BackupSchedule) field.ErrorList {
			bs = bs.DeepCopy()
			defaulting.SetBackupScheduleDefaults(bs)
			return validation.ValidateBackupSchedule(bs)
		},
	}
	c, err := New(BackupScheduleControllerName, kind,
		deps.InformerFactory.Pingcap().V1alpha1().BackupSchedules().Informer(), deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("backupschedule controller: %w", err)
	}
	return c, nil
}
