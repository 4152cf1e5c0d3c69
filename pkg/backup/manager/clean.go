package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// Clean defaults, as the TiDB Operator's: a listing page of 10000 objects,
// 10 batches or 100 single deletions in flight, 5 retries.
const (
	defaultPageSize           = 10000
	defaultBatchConcurrency   = 10
	defaultRoutineConcurrency = 100
	defaultRetryCount         = 5
	// maxBatch is the most keys one batch deletion names (S3's limit).
	maxBatch = 1000
	// backoffBase is the first retry delay when backoff is enabled; it doubles.
	backoffBase = 100 * time.Millisecond
)

// CleanOptions are a Backup's spec.cleanOption with defaults applied.
type CleanOptions struct {
	// PageSize is how many objects one listing returns.
	PageSize int
	// BatchConcurrency is how many batch deletions run at once.
	BatchConcurrency int
	// RoutineConcurrency is how many single deletions run at once.
	RoutineConcurrency int
	// DisableBatchConcurrency deletes objects one by one.
	DisableBatchConcurrency bool
	// RetryCount is how often a failed deletion is retried.
	RetryCount int
	// BackoffEnabled waits between retries, doubling from BackoffBase.
	BackoffEnabled bool
	// BackoffBase is the first wait between retries.
	BackoffBase time.Duration
	// BatchSize is the most keys one batch deletion names.
	BatchSize int
	// SleepForTest replaces the waits between retries (tests).
	SleepForTest func(time.Duration)
}

// CleanOptionsOf applies the defaults to o (nil for none).
func CleanOptionsOf(o *v1alpha1.CleanOption) CleanOptions {
	out := CleanOptions{PageSize: defaultPageSize, BatchConcurrency: defaultBatchConcurrency,
		RoutineConcurrency: defaultRoutineConcurrency, RetryCount: defaultRetryCount,
		BackoffBase: backoffBase, BatchSize: maxBatch}
	if o == nil {
		return out
	}
	if o.PageSize > 0 {
		out.PageSize = int(min(o.PageSize, 1<<20))
	}
	if o.BatchConcurrency > 0 {
		out.BatchConcurrency = int(o.BatchConcurrency)
	}
	if o.RoutineConcurrency > 0 {
		out.RoutineConcurrency = int(o.RoutineConcurrency)
	}
	if o.RetryCount > 0 {
		out.RetryCount = o.RetryCount
	}
	out.DisableBatchConcurrency = o.DisableBatchConcurrency
	out.BackoffEnabled = o.BackoffEnabled
	return out
}

// Clean runs `clean`: deletes every object under the Backup's backupPath
// (its storage location; never another prefix), then sets Clean True, or
// CleanFailed with the error. A backup with no prefix (a whole bucket) is
// refused. It errors when the CR cannot be read or written, or (wrapping
// ErrFailed) when cleaning failed.
func (m *Manager) Clean(ctx context.Context) error {
	b, err := m.Client.PingcapV1alpha1().Backups(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading backup %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	deleted, err := m.cleanData(ctx, b)
	if err != nil {
		m.logf("cleaning backup %s/%s failed: %v", b.Namespace, b.Name, err)
		if werr := m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupCleanFailed,
			Reason: ReasonCleanFailed, Message: err.Error()}, nil)); werr != nil {
			return errors.Join(fmt.Errorf("%w: %w", ErrFailed, err), werr)
		}
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	m.logf("deleted %d objects of backup %s/%s", deleted, b.Namespace, b.Name)
	return m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupClean}, nil))
}

// cleanData deletes the backup's objects and returns how many.
func (m *Manager) cleanData(ctx context.Context, b *v1alpha1.Backup) (int, error) {
	loc, err := storage.LocationOf(b.Spec.StorageProvider)
	if err != nil {
		return 0, err
	}
	if loc.Prefix == "" {
		return 0, fmt.Errorf("refusing to delete the whole of %s: the backup has no prefix", loc.URL())
	}
	bucket, err := m.open(ctx, loc)
	if err != nil {
		return 0, err
	}
	defer func() { _ = bucket.Close() }()
	return DeleteUnder(ctx, bucket, loc.ObjectPrefix(), CleanOptionsOf(b.Spec.CleanOption))
}

// DeleteUnder deletes every object whose key starts with prefix, a listing
// page at a time: batches of up to opt.BatchSize keys, opt.BatchConcurrency
// in flight, or with DisableBatchConcurrency single deletions,
// opt.RoutineConcurrency in flight; each failed deletion is retried
// opt.RetryCount times (doubling waits from opt.BackoffBase when
// BackoffEnabled). It returns how many objects it deleted and errors with
// the deletions that still failed, or when listing fails.
func DeleteUnder(ctx context.Context, b storage.Bucket, prefix string, opt CleanOptions) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("refusing to delete with an empty prefix")
	}
	deleted := 0
	for {
		objs, _, err := b.ListPage(ctx, prefix, nil, opt.PageSize)
		if err != nil {
			return deleted, err
		}
		if len(objs) == 0 {
			return deleted, nil
		}
		keys := make([]string, len(objs))
		for i, o := range objs {
			keys[i] = o.Key
		}
		if err := deletePage(ctx, b, keys, opt); err != nil {
			return deleted, err
		}
		deleted += len(keys)
	}
}

// deletePage deletes keys in batches or one by one, bounded by the
// options' concurrency.
func deletePage(ctx context.Context, b storage.Bucket, keys []string, opt CleanOptions) error {
	var units [][]string
	workers := opt.RoutineConcurrency
	if opt.DisableBatchConcurrency {
		for _, k := range keys {
			units = append(units, []string{k})
		}
	} else {
		workers = opt.BatchConcurrency
		size := max(opt.BatchSize, 1)
		for len(keys) > 0 {
			n := min(len(keys), size)
			units = append(units, keys[:n])
			keys = keys[n:]
		}
	}
	errs := make([]error, len(units))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, u := range units {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = withRetry(ctx, opt, func() error {
				if opt.DisableBatchConcurrency {
					return b.Delete(ctx, u[0])
				}
				return b.DeleteBatch(ctx, u)
			})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// withRetry runs f, then retries it opt.RetryCount times while it fails.
func withRetry(ctx context.Context, opt CleanOptions, f func() error) error {
	err := f()
	wait := opt.BackoffBase
	for i := 0; err != nil && i < opt.RetryCount; i++ {
		if opt.BackoffEnabled {
			if serr := sleep(ctx, opt, wait); serr != nil {
				return errors.Join(err, serr)
			}
			wait *= 2
		}
		err = f()
	}
	return err
}

// sleep waits d (or calls opt.SleepForTest), or errors when ctx ends first.
func sleep(ctx context.Context, opt CleanOptions, d time.Duration) error {
	if opt.SleepForTest != nil {
		opt.SleepForTest(d)
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
