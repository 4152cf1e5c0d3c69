package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// fakeBucket is an in-memory storage.Bucket that records its calls and can
// fail a key's deletions a number of times.
type fakeBucket struct {
	mu         sync.Mutex
	objects    map[string]int64
	batches    [][]string
	singles    []string
	failDelete map[string]int
	inFlight   int
	maxFlight  int
}

func newFakeBucket(objs map[string]int64) *fakeBucket {
	return &fakeBucket{objects: objs, failDelete: map[string]int{}}
}

// ListPage lists keys in order; the token is the last key returned.
func (f *fakeBucket) ListPage(_ context.Context, prefix string, token []byte, pageSize int) ([]storage.Object, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for k := range f.objects {
		if strings.HasPrefix(k, prefix) && k > string(token) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var next []byte
	if len(keys) > pageSize {
		keys = keys[:pageSize]
		next = []byte(keys[pageSize-1])
	}
	out := make([]storage.Object, len(keys))
	for i, k := range keys {
		out[i] = storage.Object{Key: k, Size: f.objects[k]}
	}
	return out, next, nil
}

func (f *fakeBucket) enter() {
	f.mu.Lock()
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	f.mu.Unlock()
}

func (f *fakeBucket) leave() {
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
}

// deleteLocked deletes key unless it is set to fail.
func (f *fakeBucket) deleteLocked(key string) error {
	if f.failDelete[key] != 0 {
		if f.failDelete[key] > 0 {
			f.failDelete[key]--
		}
		return fmt.Errorf("injected failure deleting %s", key)
	}
	delete(f.objects, key)
	return nil
}

func (f *fakeBucket) DeleteBatch(_ context.Context, keys []string) error {
	f.enter()
	defer f.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, slices.Clone(keys))
	var errs []string
	for _, k := range keys {
		if err := f.deleteLocked(k); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (f *fakeBucket) Delete(_ context.Context, key string) error {
	f.enter()
	defer f.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.singles = append(f.singles, key)
	return f.deleteLocked(key)
}

func (f *fakeBucket) Put(_ context.Context, key string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[key] = int64(len(data))
	return nil
}

func (f *fakeBucket) Close() error { return nil }
