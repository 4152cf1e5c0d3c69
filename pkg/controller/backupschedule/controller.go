// Package backupschedule is the BackupSchedule controller (spec §9): on the
// schedule's cron times it creates one snapshot Backup at a time from
// spec.backupTemplate, creates the log backup of spec.logBackupTemplate
// once, creates CompactBackups of that log backup from
// spec.compactBackupTemplate every compactInterval, one at a time, and
// garbage-collects old Backups and CompactBackups by maxReservedTime or maxBackups,
// truncating the log backup up to the oldest snapshot kept. Running the
// Backups (Jobs, cleaning deleted Backups' data) is the Backup
// controller's work.
//
// Wake-ups: each sync computes the next cron time (or Backup expiry) and
// re-adds the schedule's key to the queue for then (AddAfter); a change of
// one of its Backups (one finished, the log checkpoint moved) or
// CompactBackups wakes it too, and the informer resync
// is the safety net. There is no polling loop.
package backupschedule

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "backupschedule"

// Controller is the thin shell: informer events to queue keys, and each key
// through Control.Sync.
type Controller struct {
	schedules listers.BackupScheduleLister
	control   *Control
	worker    *controller.Worker
}

// NewController returns the BackupSchedule controller over deps: the
// BackupSchedule and Backup informers and listers, the clientsets, the
// recorder, the clock and the metrics. It fails only when an event handler
// cannot be registered (a stopped informer).
func NewController(deps *controller.Dependencies) (*Controller, error) {
	c := &Controller{
		schedules: deps.BackupScheduleLister,
		control:   NewControl(deps.BackupLister, deps.CompactBackupLister, deps.Clientset, deps.KubeClient, deps.Recorder, deps.Clock),
	}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	pingcap := deps.InformerFactory.Pingcap().V1alpha1()
	// Every update is enqueued, resyncs included: the resync is the safety
	// net of the AddAfter wake-ups.
	_, err := pingcap.BackupSchedules().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("backupschedule controller: register BackupSchedule handler: %w", err)
	}
	owner := func(ns, name string) (types.UID, error) {
		bs, err := deps.BackupScheduleLister.BackupSchedules(ns).Get(name)
		if err != nil {
			return "", err
		}
		return bs.UID, nil
	}
	_, err = pingcap.Backups().Informer().AddEventHandler(controller.EnqueueOwnerHandler(c.worker, "BackupSchedule", owner))
	if err != nil {
		return nil, fmt.Errorf("backupschedule controller: register Backup handler: %w", err)
	}
	_, err = pingcap.CompactBackups().Informer().AddEventHandler(controller.EnqueueOwnerHandler(c.worker, "BackupSchedule", owner))
	if err != nil {
		return nil, fmt.Errorf("backupschedule controller: register CompactBackup handler: %w", err)
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

// sync reconciles the schedule named by key ("namespace/name") and re-adds
// the key for the time Control.Sync asks. A deleted schedule ends the sync
// (its Backups go with it through their owner references); an invalid one
// returns an IgnoreError; API errors are returned wrapped and retried.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.schedules.BackupSchedules(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.control.reports.forget(ns, name, ReasonFailedValidation, ReasonUnsupported)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get BackupSchedule %s: %w", key, err)
	}
	res, err := c.control.Sync(ctx, cached.DeepCopy())
	if res.RequeueAfter > 0 {
		klog.FromContext(ctx).V(4).Info("next sync", "after", res.RequeueAfter)
		c.worker.EnqueueAfter(key, res.RequeueAfter)
	}
	if err != nil {
		return fmt.Errorf("sync BackupSchedule %s: %w", key, err)
	}
	return nil
}
