package apply

import (
	"sync"
	"time"
)

// cacheLagLimit is how long a create waits for the cache to show the
// object before apply creates it again (and, answered AlreadyExists, reads
// it from the API as for an object whose label was changed).
const cacheLagLimit = 10 * time.Second

// recentCreates remembers the objects an Applier created that its caches
// have not shown yet. A sync that follows the one that created an object
// (the write's own events bring it at once) may find the cache behind the
// API by tens of milliseconds under load; without this it would create the
// object again, be answered 409 AlreadyExists and read it back: two wasted
// requests. It holds one key and one time per create in flight, and
// forgets them when the cache shows the object or after cacheLagLimit.
type recentCreates struct {
	mu    sync.Mutex
	at    map[string]time.Time
	swept time.Time
	now   func() time.Time
}

func createdKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// created records that key was created now.
func (r *recentCreates) created(key string) {
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

// pending returns how long ago key was created when the cache may still be
// catching up with that create; ok is false once it is older than
// cacheLagLimit (or was never made).
func (r *recentCreates) pending(key string) (ago time.Duration, ok bool) {
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

// seen forgets key: the cache shows the object.
func (r *recentCreates) seen(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.at, key)
}

func (r *recentCreates) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}
