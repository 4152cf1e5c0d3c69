// Package compactbackup holds the CompactBackup controller: on the shared
// backup shell (backup.New: validation with the Invalid condition and the
// FailedValidation event before any write, one Unsupported Warning per
// generation), its sync (control.go) schedules a compaction, creates its Job
// (job.go) running `backup-manager compact`, mirrors the Job's failure into
// status.state and re-creates a missing Job with backoff; the Job's
// backup-manager writes Running, progress, endTs, RetryFailed and Complete
// itself (pkg/backup/compactstatus). Deleting a CompactBackup deletes its
// Job (the controller at once, the garbage collector through the owner
// reference); the compacted files are kept, as v1.6 keeps them.
package compactbackup

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
)

// Kind is the kind the controller serves, as its Jobs' owner references name it.
const Kind = "CompactBackup"

// ControllerName is the queue's name and the "controller" metric label (v1.6's).
const ControllerName = "compactBackup"

// NewController returns the CompactBackup controller over deps (the
// CompactBackup and Job informers and listers, the TidbCluster lister, the
// clientsets, recorder, clock and backup-manager image). An invalid
// CompactBackup gets a FailedValidation event, a True Invalid condition
// and state Failed with the errors as message; a valid one runs (control).
// A change of one of its Jobs requeues it; once it is gone its Job is
// deleted. It fails only when an event handler cannot be registered.
func NewController(deps *controller.Dependencies) (*backup.Controller[*v1alpha1.CompactBackup], error) {
	ctl := newControl(deps)
	kind := backup.Kind[*v1alpha1.CompactBackup]{
		Name: Kind,
		Get: func(ns, name string) (*v1alpha1.CompactBackup, error) {
			return deps.CompactBackupLister.CompactBackups(ns).Get(name)
		},
		Validate: func(cb *v1alpha1.CompactBackup) field.ErrorList { return validation.ValidateCompactBackup(cb) },
		SyncStatus: func(ctx context.Context, cb *v1alpha1.CompactBackup, message string) (bool, error) {
			return syncConditions(ctx, deps.Clientset, cb, message, unsupportedMessage(cb), ctl.now())
		},
		InvalidMessage: invalidMessage,
		Unsupported:    func(cb *v1alpha1.CompactBackup) []string { return unsupported.Fields(unsupported.CompactBackup, cb) },
		Run:            ctl.sync,
		Gone:           ctl.deleteJob,
	}
	informer := deps.InformerFactory.Pingcap().V1alpha1().CompactBackups().Informer()
	c, err := backup.New(ControllerName, kind, informer, deps.Recorder, deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("compact backup controller: %w", err)
	}
	owner := func(ns, name string) (types.UID, error) {
		cb, err := deps.CompactBackupLister.CompactBackups(ns).Get(name)
		if err != nil {
			return "", err
		}
		return cb.UID, nil
	}
	jobs := deps.JobInformerFactory.Batch().V1().Jobs().Informer()
	if _, err := jobs.AddEventHandler(controller.EnqueueOwnerHandler(c.Worker(), Kind, owner)); err != nil {
		return nil, fmt.Errorf("compact backup controller: register Job event handler: %w", err)
	}
	return c, nil
}
