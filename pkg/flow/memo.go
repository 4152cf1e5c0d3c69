package flow

import (
	"context"
	"sync"
)

type memoKey struct{}

// Memo holds answers read once per sync and shared by the components of
// that sync (PD's store list serves TiKV and TiFlash alike). A Memo is safe
// for concurrent use; errors are remembered too, so a PD that did not
// answer is not asked again in the same sync.
type Memo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
}

type memoEntry struct {
	value any
	err   error
}

// WithMemo returns ctx carrying an empty Memo for one sync.
func WithMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &Memo{entries: map[string]memoEntry{}})
}

// Remember returns the answer remembered under key in ctx's Memo, or calls
// read, remembers and returns its answer. Without a Memo in ctx it always
// calls read.
func Remember[T any](ctx context.Context, key string, read func() (T, error)) (T, error) {
	m, ok := ctx.Value(memoKey{}).(*Memo)
	if !ok {
		return read()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, seen := m.entries[key]; seen {
		v, _ := e.value.(T)
		return v, e.err
	}
	v, err := read()
	m.entries[key] = memoEntry{value: v, err: err}
	return v, err
}

// Forget drops what ctx's Memo remembers under key, after a write that
// changed it (a store deleted in PD).
func Forget(ctx context.Context, key string) {
	if m, ok := ctx.Value(memoKey{}).(*Memo); ok {
		m.mu.Lock()
		delete(m.entries, key)
		m.mu.Unlock()
	}
}
