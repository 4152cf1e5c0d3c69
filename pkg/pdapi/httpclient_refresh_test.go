package pdapi

import (
	"crypto/tls"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestHTTPClientCacheRefreshesTLSClients checks that a rotated client certificate is picked up after
// DefaultTLSRefresh, and that a failed reload keeps the previous client.
func TestHTTPClientCacheRefreshesTLSClients(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		loads   int
		loadErr error
	)
	cache := NewHTTPClientCache(func(_, _ string) (*tls.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		loads++
		return &tls.Config{MinVersion: tls.VersionTLS12}, loadErr
	})
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cache.now = func() time.Time { return clock }
	get := func() any {
		t.Helper()
		c, err := cache.Get("ns", "basic", true)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		return c
	}

	first := get()
	clock = clock.Add(DefaultTLSRefresh - time.Second)
	if get() != first {
		t.Error("a TLS client must be reused before the refresh period")
	}
	if other, _ := cache.Get("ns", "other", true); other == first {
		t.Error("another cluster must get its own TLS client")
	}
	clock = clock.Add(2 * time.Second)
	second := get()
	if second == first {
		t.Error("a TLS client must be rebuilt after the refresh period")
	}

	clock = clock.Add(DefaultTLSRefresh)
	mu.Lock()
	loadErr = errors.New("secret gone")
	mu.Unlock()
	for range 2 {
		if get() != second {
			t.Error("a failed reload must keep the previous client")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if loads != 5 {
		t.Errorf("TLS config loaded %d times, want 5 (reload retried while failing)", loads)
	}
	plain, err := cache.Get("ns", "basic", false)
	if err != nil || plain != cache.plain {
		t.Errorf("plain Get = %v, %v; want the shared plain client", plain, err)
	}
}
