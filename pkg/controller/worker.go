package controller

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// DefaultWaitDelay is how soon a sync that waits (a RequeueError without
// its own delay) runs again.
const DefaultWaitDelay = 5 * time.Second

// SyncFunc reconciles the object named by key ("namespace/name"). It returns
// nil when done, a RequeueError when waiting, an IgnoreError when retrying
// cannot help, and any other error to be retried with backoff.
type SyncFunc func(ctx context.Context, key string) error

// Worker drains one controller's rate-limited workqueue with a number of
// goroutines, calling its SyncFunc once per key at a time.
type Worker struct {
	name    string
	queue   workqueue.TypedRateLimitingInterface[string]
	sync    SyncFunc
	metrics *metrics.Metrics
}

// NewRateLimiter returns the queue rate limiter of every controller: the
// larger of a per-item exponential backoff (1s to 100s) and a global token
// bucket (10 qps, burst 100), as the TiDB Operator uses.
func NewRateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 100*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// NewWorker creates the named queue and a worker that drains it with sync.
// m may be nil in unit tests.
func NewWorker(name string, sync SyncFunc, m *metrics.Metrics) *Worker {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(NewRateLimiter(),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	return &Worker{name: name, queue: q, sync: sync, metrics: m}
}

// Name is the controller's name, used for the queue, logs and metric labels.
func (w *Worker) Name() string { return w.name }

// Enqueue adds the key of obj (a typed object or a DeletedFinalStateUnknown).
func (w *Worker) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("%s: cannot get key of %T: %w", w.name, obj, err))
		return
	}
	w.queue.Add(key)
}

// EnqueueKey adds a "namespace/name" key.
func (w *Worker) EnqueueKey(key string) { w.queue.Add(key) }

// EnqueueAfter adds a key after a delay (periodic status refresh).
func (w *Worker) EnqueueAfter(key string, d time.Duration) { w.queue.AddAfter(key, d) }

// Len returns the number of keys waiting (for tests and debugging).
func (w *Worker) Len() int { return w.queue.Len() }

// Run starts workers goroutines and blocks until ctx is done, then shuts the
// queue down. Caches must be synced before Run is called.
func (w *Worker) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrash()
	defer w.queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", w.name)
	logger.Info("starting workers", "count", workers)
	if w.metrics != nil {
		w.metrics.SetWorkers(w.name, workers)
	}
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, w.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("stopping workers")
}

func (w *Worker) runWorker(ctx context.Context) {
	for w.ProcessNextWorkItem(ctx) {
	}
}

// ProcessNextWorkItem syncs one key and files it as done, waiting or failed.
// It returns false once the queue is shut down.
func (w *Worker) ProcessNextWorkItem(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	if w.metrics != nil {
		w.metrics.WorkerStarted(w.name)
		defer w.metrics.WorkerDone(w.name)
	}
	logger := klog.FromContext(ctx).WithValues("controller", w.name, "key", key)
	start := time.Now()
	err := w.sync(klog.NewContext(ctx, logger), key)
	w.handleResult(logger, key, err, time.Since(start))
	return true
}

func (w *Worker) handleResult(logger klog.Logger, key string, err error, took time.Duration) {
	result := metrics.ResultSuccess
	switch re, waiting := flow.AsRequeue(err); {
	case err == nil:
		w.queue.Forget(key)
	case waiting:
		// Waiting is not failing: poll at a steady pace instead of backing
		// off exponentially, because what is awaited (a pod Ready, a store
		// Tombstone) is progress; events of the owned objects also wake us.
		result = metrics.ResultRequeue
		logger.V(2).Info("waiting", "reason", re.Reason)
		after := re.After
		if after <= 0 {
			after = DefaultWaitDelay
		}
		w.queue.Forget(key)
		w.queue.AddAfter(key, after)
	case flow.IsIgnore(err):
		result = metrics.ResultError
		logger.Info("not retrying", "err", err)
		w.queue.Forget(key)
	default:
		result = metrics.ResultError
		utilruntime.HandleErrorWithContext(klog.NewContext(context.Background(), logger), err, "sync failed, will retry")
		w.queue.AddRateLimited(key)
	}
	if w.metrics != nil {
		w.metrics.ObserveReconcile(w.name, result, took)
	}
}
