package pdapi

import "sync"

// fakeKey identifies a FakeClient of a FakeControl: TLS and cluster domain do not matter to a fake.
type fakeKey struct {
	namespace, tcName, member, clientURL string
}

// FakeControl is a Control for unit tests that returns one FakeClient per TidbCluster (and one per
// member and per verbatim client URL), creating an empty one (NewFakeClient) on first use. It records the
// options of every GetPDClient call. Safe for concurrent use.
type FakeControl struct {
	mu       sync.Mutex
	clients  map[fakeKey]*FakeClient
	requests []ClusterOptions
}

var _ Control = &FakeControl{}

// NewFakeControl returns a FakeControl without clients.
func NewFakeControl() *FakeControl {
	return &FakeControl{clients: map[fakeKey]*FakeClient{}}
}

// GetPDClient implements Control.
func (c *FakeControl) GetPDClient(namespace, tcName string, opts ClusterOptions) Client {
	c.mu.Lock()
	c.requests = append(c.requests, opts)
	c.mu.Unlock()
	return c.ClientFor(namespace, tcName, opts)
}

// ClientFor returns the FakeClient that GetPDClient returns for the same arguments, so a test can seed
// it before the code under test asks for it.
func (c *FakeControl) ClientFor(namespace, tcName string, opts ClusterOptions) *FakeClient {
	key := fakeKey{namespace: namespace, tcName: tcName, member: opts.Member, clientURL: opts.ClientURL}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clients == nil {
		c.clients = map[fakeKey]*FakeClient{}
	}
	client, ok := c.clients[key]
	if !ok {
		client = NewFakeClient()
		c.clients[key] = client
	}
	return client
}

// ClusterClient returns the FakeClient of TidbCluster namespace/tcName addressed through its Service.
func (c *FakeControl) ClusterClient(namespace, tcName string) *FakeClient {
	return c.ClientFor(namespace, tcName, ClusterOptions{})
}

// MemberClient returns the FakeClient of one PD member of TidbCluster namespace/tcName.
func (c *FakeControl) MemberClient(namespace, tcName, member string) *FakeClient {
	return c.ClientFor(namespace, tcName, ClusterOptions{Member: member})
}

// Requests returns the options of every GetPDClient call so far, oldest first.
func (c *FakeControl) Requests() []ClusterOptions {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ClusterOptions(nil), c.requests...)
}
