package discovery

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
)

// dmFixture is a Discovery serving DMClusters of a fake clientset, whose
// dm-master is a dmapi.FakeClient; clientCalls records the TLS flag of each
// client asked for.
type dmFixture struct {
	d           *Discovery
	pc          versioned.Interface
	dm          *dmapi.FakeClient
	clientCalls []bool
}

func newDMFixture(dcs ...*v1alpha1.DMCluster) *dmFixture {
	f := &dmFixture{dm: dmapi.NewFakeClient()}
	pc := fake.NewSimpleClientset()
	for _, dc := range dcs {
		_, _ = pc.PingcapV1alpha1().DMClusters(dc.Namespace).Create(context.Background(), dc, metav1.CreateOptions{})
	}
	f.pc = pc
	getter := DMClusterGetterFunc(func(ctx context.Context, ns, name string) (*v1alpha1.DMCluster, error) {
		return pc.PingcapV1alpha1().DMClusters(ns).Get(ctx, name, metav1.GetOptions{})
	})
	tcs := ClusterGetterFunc(func(context.Context, string, string) (*v1alpha1.TidbCluster, error) {
		return nil, errors.New("the DM discovery must not read a TidbCluster")
	})
	f.d = New(testNamespace, "basic", tcs, nil).WithDM(getter, func(ns, dc string, tls bool) MastersGetter {
		f.clientCalls = append(f.clientCalls, tls)
		return f.dm
	})
	return f
}

// updateDC bumps the DMCluster's resourceVersion after mutate (the fake
// tracker keeps whatever version it is given).
func (f *dmFixture) updateDC(t *testing.T, name, rv string, mutate func(*v1alpha1.DMCluster)) {
	t.Helper()
	ctx := context.Background()
	dc, err := f.pc.PingcapV1alpha1().DMClusters(testNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(dc)
	dc.ResourceVersion = rv
	if _, err := f.pc.PingcapV1alpha1().DMClusters(testNamespace).Update(ctx, dc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func newDC(name string, replicas int32, tls bool) *v1alpha1.DMCluster {
	dc := &v1alpha1.DMCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, ResourceVersion: "1"}}
	dc.Spec.Master.Replicas = replicas
	if tls {
		dc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	}
	return dc
}

func dmURL(dc string, i string) string {
	return dc + "-dm-master-" + i + "." + dc + "-dm-master-peer:8291"
}

func master(dc, i string, scheme string) dmapi.MasterMember {
	return dmapi.MasterMember{Name: dc + "-dm-master-" + i, Alive: true, PeerURLs: []string{scheme + "://" + dmURL(dc, i)}}
}

// TestDiscoverDMBadURL: anything but "<pod>.<dc>-dm-master-peer[:port]" is
// refused before the DMCluster is read.
func TestDiscoverDMBadURL(t *testing.T) {
	t.Parallel()
	f := newDMFixture(newDC("basic", 3, false))
	for _, u := range []string{
		"basic-dm-master-0",
		"basic-dm-master-0.basic-dm-master-peer.ns:8291",
		"basic-dm-master-0.basic-dm-master-peer.ns.svc:8291",
		".basic-dm-master-peer:8291",
		"basic-dm-master-0.-dm-master-peer:8291",
		"basic-pd-0.basic-pd-peer:2380",
	} {
		if _, err := f.d.DiscoverDM(context.Background(), u); err == nil || !strings.Contains(err.Error(), "format is wrong") {
			t.Errorf("DiscoverDM(%q) = %v, want a format error", u, err)
		}
	}
	if len(f.dm.Calls()) != 0 {
		t.Errorf("dm-master was asked: %v", f.dm.Calls())
	}
}

// TestDiscoverDMNotFound: a missing DMCluster is an error carrying NotFound.
func TestDiscoverDMNotFound(t *testing.T) {
	t.Parallel()
	f := newDMFixture()
	_, err := f.d.DiscoverDM(context.Background(), dmURL("basic", "0"))
	if !apierrors.IsNotFound(err) {
		t.Fatalf("err = %v, want NotFound", err)
	}
}

// TestDiscoverDMInitialBatch: of three dm-masters, the first two wait for a
// member to join (dm-master has none, or does not answer), the third
// completes the peer set and bootstraps; the first two then join it, each
// leaving itself out, with 8291 rewritten to 8261.
func TestDiscoverDMInitialBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newDMFixture(newDC("basic", 3, false))
	f.dm.SetError(dmapi.MethodGetMasters, errors.New("connection refused"))
	if _, err := f.d.DiscoverDM(ctx, dmURL("basic", "0")); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("pod 0: err = %v, want the GetMasters error", err)
	}
	f.dm.SetError(dmapi.MethodGetMasters, nil)
	if _, err := f.d.DiscoverDM(ctx, dmURL("basic", "1")); err == nil {
		t.Fatal("pod 1 got arguments while dm-master has no member")
	}
	got, err := f.d.DiscoverDM(ctx, dmURL("basic", "2"))
	if want := "--initial-cluster=basic-dm-master-2=http://" + dmURL("basic", "2"); err != nil || got != want {
		t.Fatalf("pod 2: %q, %v; want %q", got, err, want)
	}
	f.dm.SetMasters(master("basic", "2", "http"), master("basic", "0", "http"))
	got, err = f.d.DiscoverDM(ctx, dmURL("basic", "0"))
	if want := "--join=http://basic-dm-master-2.basic-dm-master-peer:8261"; err != nil || got != want {
		t.Fatalf("pod 0: %q, %v; want %q", got, err, want)
	}
	// Pod 1 left a waiting entry; with pod 2 and pod 0 served the set holds
	// only pod 1 again, fewer than three: it joins.
	got, err = f.d.DiscoverDM(ctx, dmURL("basic", "1"))
	if want := "--join=http://basic-dm-master-2.basic-dm-master-peer:8261,http://basic-dm-master-0.basic-dm-master-peer:8261"; err != nil || got != want {
		t.Fatalf("pod 1: %q, %v; want %q", got, err, want)
	}
}

// TestDiscoverDMFailureMembersAndReset: failure members raise the count
// that completes the set, and a new resourceVersion empties the set.
func TestDiscoverDMFailureMembersAndReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dc := newDC("basic", 1, false)
	dc.Status.Master.FailureMembers = map[string]v1alpha1.MasterFailureMember{"basic-dm-master-0": {}}
	f := newDMFixture(dc)
	if _, err := f.d.DiscoverDM(ctx, dmURL("basic", "0")); err == nil {
		t.Fatal("one of two desired bootstrapped")
	}
	f.updateDC(t, "basic", "2", func(dc *v1alpha1.DMCluster) { dc.Status.Master.FailureMembers = nil })
	// The set was reset, so pod 1 alone completes the single replica.
	got, err := f.d.DiscoverDM(ctx, dmURL("basic", "1"))
	if want := "--initial-cluster=basic-dm-master-1=http://" + dmURL("basic", "1"); err != nil || got != want {
		t.Fatalf("after reset: %q, %v; want %q", got, err, want)
	}
}

// TestDiscoverDMTLS: with spec.tlsCluster.enabled the bootstrap URL is https
// and dm-master is asked over TLS.
func TestDiscoverDMTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newDMFixture(newDC("basic", 2, true))
	f.dm.SetMasters(master("basic", "1", "https"))
	got, err := f.d.DiscoverDM(ctx, dmURL("basic", "0"))
	if want := "--join=https://basic-dm-master-1.basic-dm-master-peer:8261"; err != nil || got != want {
		t.Fatalf("join: %q, %v; want %q", got, err, want)
	}
	if len(f.clientCalls) != 1 || !f.clientCalls[0] {
		t.Fatalf("client asked with TLS %v, want [true]", f.clientCalls)
	}
	f.dm.SetError(dmapi.MethodGetMasters, errors.New("down"))
	_, _ = f.d.DiscoverDM(ctx, dmURL("basic", "1"))
	got, err = f.d.DiscoverDM(ctx, dmURL("basic", "0"))
	if want := "--initial-cluster=basic-dm-master-0=https://" + dmURL("basic", "0"); err != nil || got != want {
		t.Fatalf("bootstrap: %q, %v; want %q", got, err, want)
	}
}

// TestHandlerDM: /new/{b64}/dm routes to DiscoverDM; its errors and an
// unknown register type answer 500.
func TestHandlerDM(t *testing.T) {
	t.Parallel()
	f := newDMFixture(newDC("solo", 1, false), newDC("pair", 2, false))
	f.dm.SetError(dmapi.MethodGetMasters, errors.New("no leader"))
	runHTTPCases(t, NewHandler(f.d), []httpCase{
		{name: "bootstrap", path: "/new/" + b64(dmURL("solo", "0")) + "/dm", wantStatus: http.StatusOK,
			wantBody: "--initial-cluster=solo-dm-master-0=http://" + dmURL("solo", "0")},
		{name: "dm-master down", path: "/new/" + b64(dmURL("pair", "0")) + "/dm", wantStatus: 500, wantBody: "no leader"},
		{name: "bad format", path: "/new/" + b64("x.y.z:8291") + "/dm", wantStatus: 500, wantBody: "format is wrong"},
		{name: "not found", path: "/new/" + b64(dmURL("gone", "0")) + "/dm", wantStatus: 500, wantBody: "not found"},
		{name: "unknown type", path: "/new/" + b64(dmURL("solo", "0")) + "/ticdc", wantStatus: 500, wantBody: "invalid register-type"},
	})
}
