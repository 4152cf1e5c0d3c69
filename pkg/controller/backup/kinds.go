package backup

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Controller names: the queue names and the "controller" metric label, as
// the TiDB Operator names them.
const (
	BackupControllerName  = "backup"
	RestoreControllerName = "restore"
)

// NewBackupController returns the Backup controller over deps (Backup and
// Job informers and listers, TidbCluster lister, clientsets, recorder,
// clock, backup-manager image). An invalid Backup gets a FailedValidation
// event, a True Invalid condition and phase Invalid; a valid one runs
// (backupControl); a deleted one is cleaned as its cleanPolicy says. A
// Job's change requeues its Backup. It fails only when an event handler
// cannot be registered.
func NewBackupController(deps *controller.Dependencies) (*Controller[*v1alpha1.Backup], error) {
	ctl := &backupControl{writer: newWriter(deps)}
	kind := Kind[*v1alpha1.Backup]{
		Name: "Backup",
		Get: func(ns, name string) (*v1alpha1.Backup, error) {
			return deps.BackupLister.Backups(ns).Get(name)
		},
		Validate: func(b *v1alpha1.Backup) field.ErrorList {
			return validation.ValidateBackup(defaulted(b))
		},
		SyncStatus: func(ctx context.Context, b *v1alpha1.Backup, message string) (bool, error) {
			return syncBackupStatus(ctx, deps.Clientset, b, message, unsupportedMessage(unsupported.Fields(unsupported.Backup, b)),
				metav1.NewTime(deps.Clock.Now()))
		},
		InvalidMessage: backupInvalidMessage,
		Unsupported:    func(b *v1alpha1.Backup) []string { return unsupported.Fields(unsupported.Backup, b) },
		Run:            ctl.sync,
		Delete:         ctl.delete,
	}
	c, err := New(BackupControllerName, kind, deps.InformerFactory.Pingcap().V1alpha1().Backups().Informer(), deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("backup controller: %w", err)
	}
	if err := watchJobs(deps, c.worker, "Backup", func(ns, name string) (types.UID, error) {
		b, err := deps.BackupLister.Backups(ns).Get(name)
		if err != nil {
			return "", err
		}
		return b.UID, nil
	}); err != nil {
		return nil, fmt.Errorf("backup controller: %w", err)
	}
	return c, nil
}

// NewRestoreController returns the Restore controller over deps, which
// validates a Restore as NewBackupController does a Backup, and then runs it
// against its target TidbCluster (restoreControl). A Job's change requeues
// its Restore. It fails only when an event handler cannot be registered.
func NewRestoreController(deps *controller.Dependencies) (*Controller[*v1alpha1.Restore], error) {
	ctl := &restoreControl{writer: newWriter(deps), sets: deps.StatefulSetLister}
	kind := Kind[*v1alpha1.Restore]{
		Name: "Restore",
		Get: func(ns, name string) (*v1alpha1.Restore, error) {
			return deps.RestoreLister.Restores(ns).Get(name)
		},
		Validate: func(r *v1alpha1.Restore) field.ErrorList {
			r = r.DeepCopy()
			defaulting.SetRestoreDefaults(r)
			return validation.ValidateRestore(r)
		},
		SyncStatus: func(ctx context.Context, r *v1alpha1.Restore, message string) (bool, error) {
			return syncRestoreStatus(ctx, deps.Clientset, r, message, unsupportedMessage(unsupported.Fields(unsupported.Restore, r)),
				metav1.NewTime(deps.Clock.Now()))
		},
		InvalidMessage: restoreInvalidMessage,
		Unsupported:    func(r *v1alpha1.Restore) []string { return unsupported.Fields(unsupported.Restore, r) },
		Run:            ctl.sync,
		Gone:           ctl.releaseGone,
	}
	c, err := New(RestoreControllerName, kind, deps.InformerFactory.Pingcap().V1alpha1().Restores().Informer(), deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("restore controller: %w", err)
	}
	if err := watchJobs(deps, c.worker, "Restore", func(ns, name string) (types.UID, error) {
		r, err := deps.RestoreLister.Restores(ns).Get(name)
		if err != nil {
			return "", err
		}
		return r.UID, nil
	}); err != nil {
		return nil, fmt.Errorf("restore controller: %w", err)
	}
	if err := watchOverlayHolders(deps, c.worker); err != nil {
		return nil, fmt.Errorf("restore controller: %w", err)
	}
	return c, nil
}

// watchOverlayHolders requeues the PiTR Restore a TidbCluster's
// label.AnnPiTRRestore names on every change of that cluster: its status
// tells TiKV's rollout with the GC overlay, and a Restore deleted while no
// operator ran is found (Gone) at the informer's first list.
func watchOverlayHolders(deps *controller.Dependencies, w *controller.Worker) error {
	enqueue := func(obj any) {
		if tc, ok := obj.(*v1alpha1.TidbCluster); ok && tc.Annotations[label.AnnPiTRRestore] != "" {
			w.EnqueueKey(tc.Annotations[label.AnnPiTRRestore])
		}
	}
	informer := deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, newObj any) { enqueue(newObj) },
	}); err != nil {
		return fmt.Errorf("register TidbCluster event handler: %w", err)
	}
	return nil
}

// watchJobs requeues the owner (of kind) of every Job change.
func watchJobs(deps *controller.Dependencies, w *controller.Worker, kind string, owner controller.OwnerGetter) error {
	informer := deps.JobInformerFactory.Batch().V1().Jobs().Informer()
	if _, err := informer.AddEventHandler(controller.EnqueueOwnerHandler(w, kind, owner)); err != nil {
		return fmt.Errorf("register Job event handler: %w", err)
	}
	return nil
}
