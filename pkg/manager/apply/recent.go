package apply

import (
	"sync"
	"time"
)

// cacheLagLimit is how long a write waits for the cache to show it before
// it is made again: a create (answered AlreadyExists, apply then reads the
// object from the API as for one whose label was changed) or a PV patch.
const cacheLagLimit = 10 * time.Second

// recentWrites remembers the writes of an Applier that its caches have not
// shown yet: creates, and PV patches (a PV enters the label-filtered cache
// only with the operator's patch). A sync that follows the one that wrote
// (the write's own events bring it at once) may find the cache behind the
// API by tens of milliseconds under load; without this it would create the
// object again (a 409 AlreadyExists and a read) or patch the PV again. It
// holds a time per key: one key per create, forgotten when the cache shows
// the object; one per field of a PV patch, named with the PV version the
// cache showed (a cache that moved no longer matches them). Every key is
// forgotten after cacheLagLimit.
type recentWrites struct {
	mu    sync.Mutex
	at    map[string]time.Time
	swept time.Time
	now   func() time.Time
}

// writeKey names an object of kind.
func writeKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// wrote records that key was written now.
func (r *recentWrites) wrote(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	if r.at == nil {
		r.at = map[string]time.Time{}
	}
	r.at[key] = now
	if now.Sub(r.swept) < cacheLagLimit {
		return
	}
	r.swept = now
	for k, t := range r.at {
		if now.Sub(t) >= cacheLagLimit {
			delete(r.at, k)
		}
	}
}

// pending returns how long ago key was written when the cache may still be
// catching up with that write; ok is false once it is older than
// cacheLagLimit (or was never made).
func (r *recentWrites) pending(key string) (ago time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[key]
	if !ok {
		return 0, false
	}
	if ago = r.clock().Sub(t); ago >= cacheLagLimit {
		delete(r.at, key)
		return 0, false
	}
	return ago, true
}

// allPending reports whether keys is not empty and every key is pending.
func (r *recentWrites) allPending(keys []string) bool {
	for _, k := range keys {
		if _, ok := r.pending(k); !ok {
			return false
		}
	}
	return len(keys) > 0
}

// empty reports whether nothing is remembered.
func (r *recentWrites) empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at) == 0
}

// seen forgets key: the cache shows the object.
func (r *recentWrites) seen(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.at, key)
}

func (r *recentWrites) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}
