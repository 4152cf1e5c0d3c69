package discovery

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// testNamespace is the discovery's own namespace in every test.
const testNamespace = "ns"

// fakeClusters is a ClusterGetter over an in-memory set of TidbClusters. It
// returns copies, as the API server does, and NotFound for unknown names.
type fakeClusters struct {
	mu  sync.Mutex
	tcs map[string]*v1alpha1.TidbCluster
}

func newFakeClusters(tcs ...*v1alpha1.TidbCluster) *fakeClusters {
	f := &fakeClusters{tcs: map[string]*v1alpha1.TidbCluster{}}
	for _, tc := range tcs {
		f.set(tc)
	}
	return f
}

func (f *fakeClusters) set(tc *v1alpha1.TidbCluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tcs[tc.Namespace+"/"+tc.Name] = tc.DeepCopy()
}

// update applies mutate to the stored cluster and bumps its resourceVersion.
func (f *fakeClusters) update(namespace, name string, mutate func(*v1alpha1.TidbCluster)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tc := f.tcs[namespace+"/"+name]
	mutate(tc)
	var rv int
	_, _ = fmt.Sscan(tc.ResourceVersion, &rv)
	tc.ResourceVersion = fmt.Sprint(rv + 1)
}

func (f *fakeClusters) GetTidbCluster(_ context.Context, namespace, name string) (*v1alpha1.TidbCluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tc, ok := f.tcs[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(v1alpha1.Resource("tidbclusters"), name)
	}
	return tc.DeepCopy(), nil
}

// fakePD serves GET members per PD URL. A URL without members configured
// fails like a PD that does not run yet.
type fakePD struct {
	mu      sync.Mutex
	members map[string][]*pdapi.Member
	asked   []string
}

func newFakePD() *fakePD {
	return &fakePD{members: map[string][]*pdapi.Member{}}
}

// setMembers makes url answer with members (possibly none).
func (f *fakePD) setMembers(url string, members ...*pdapi.Member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members[url] = members
}

// addMember appends a member to what url answers.
func (f *fakePD) addMember(url string, m *pdapi.Member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members[url] = append(f.members[url], m)
}

func (f *fakePD) client(url string) MembersGetter {
	return fakePDClient{pd: f, url: url}
}

type fakePDClient struct {
	pd  *fakePD
	url string
}

var errConnRefused = errors.New("dial tcp: connection refused")

func (c fakePDClient) GetMembers(context.Context) (*pdapi.MembersInfo, error) {
	c.pd.mu.Lock()
	defer c.pd.mu.Unlock()
	c.pd.asked = append(c.pd.asked, c.url)
	members, ok := c.pd.members[c.url]
	if !ok {
		return nil, errConnRefused
	}
	return &pdapi.MembersInfo{Members: append([]*pdapi.Member(nil), members...)}, nil
}

// newTC returns a TidbCluster in testNamespace with a PD of replicas.
func newTC(name string, replicas int32) *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, ResourceVersion: "1"},
		Spec:       v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: replicas}},
	}
}

// peerHost is the peer host of PD pod ordinal i of cluster tc in testNamespace.
func peerHost(tc string, i int) string {
	return fmt.Sprintf("%s-pd-%d.%s-pd-peer.%s.svc", tc, i, tc, testNamespace)
}

// pdMember is a PD member named name advertising host.
func pdMember(name, scheme, host string) *pdapi.Member {
	return &pdapi.Member{
		Name:       name,
		PeerUrls:   []string{scheme + "://" + host + ":2380"},
		ClientUrls: []string{scheme + "://" + host + ":2379"},
	}
}

// podMember is PD pod i of cluster tc as a member named by its pod name.
func podMember(tc string, i int) *pdapi.Member {
	return pdMember(fmt.Sprintf("%s-pd-%d", tc, i), "http", peerHost(tc, i))
}
