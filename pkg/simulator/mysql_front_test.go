package simulator

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/simulator/socks5"
)

func TestParseTiDBHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		host string
		want tidbTarget
		ok   bool
	}{
		{"basic-tidb.ns.svc", tidbTarget{namespace: "ns", cluster: "basic", service: "basic-tidb"}, true},
		{"basic-tidb.ns", tidbTarget{namespace: "ns", cluster: "basic", service: "basic-tidb"}, true},
		{"basic-tidb.ns.svc.cluster.local.", tidbTarget{namespace: "ns", cluster: "basic", service: "basic-tidb"}, true},
		{"basic-tidb-peer.ns.svc", tidbTarget{namespace: "ns", cluster: "basic", service: "basic-tidb-peer", peer: true}, true},
		{"basic-tidb-1.basic-tidb-peer.ns.svc",
			tidbTarget{namespace: "ns", cluster: "basic", service: "basic-tidb-peer", pod: "basic-tidb-1", peer: true}, true},
		{"basic-pd.ns.svc", tidbTarget{}, false},
		{"basic-tikv-0.basic-tidb-peer.ns.svc", tidbTarget{}, false},
		{"basic-tidb-0.basic-tidb.ns.svc", tidbTarget{}, false},
		{"-tidb.ns.svc", tidbTarget{}, false},
		{"127.0.0.1", tidbTarget{}, false},
		{"basic-tidb.ns.svcx", tidbTarget{}, false},
	}
	for _, tc := range cases {
		got, ok := parseTiDBHost(tc.host)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %+v %v, want %+v %v", tc.host, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRouteChecksTheAPI: the client Service's MySQL port (3306 → 4000), the
// peer Service and a pod on 4000 go to the backend; a missing object, the
// status port or another port is refused.
func TestRouteChecksTheAPI(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb", Namespace: "ns"}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{
				{Name: "mysql-client", Port: 3306, TargetPort: intstr.FromInt32(4000)},
				{Name: "status", Port: 10080, TargetPort: intstr.FromInt32(10080)},
			}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb-peer", Namespace: "ns"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb-0", Namespace: "ns"}},
	)
	f := &mysqlFront{kube: kube, backend: "127.0.0.1:13306", log: klog.Background(),
		bootstrap: newBootstrapRunner(kube, "", "127.0.0.1:13306", klog.Background())}
	for _, tc := range []struct {
		host string
		port int
		ok   bool
	}{
		{"basic-tidb.ns.svc", 3306, true},
		{"basic-tidb-peer.ns.svc", 4000, true},
		{"basic-tidb-0.basic-tidb-peer.ns.svc", 4000, true},
		{"basic-tidb.ns.svc", 10080, false},
		{"basic-tidb.ns.svc", 4000, false},
		{"basic-tidb-peer.ns.svc", 10080, false},
		{"basic-tidb-1.basic-tidb-peer.ns.svc", 4000, false},
		{"other-tidb.ns.svc", 4000, false},
		{"basic-pd.ns.svc", 2379, false},
	} {
		to, err := f.route(tc.host, tc.port)
		if tc.ok && (err != nil || to != "127.0.0.1:13306") {
			t.Errorf("%s:%d: %q %v, want the backend", tc.host, tc.port, to, err)
		}
		if !tc.ok && !errors.Is(err, socks5.ErrRefused) {
			t.Errorf("%s:%d: %q %v, want a refusal", tc.host, tc.port, to, err)
		}
	}
}

// TestRouteWaitsForBootstrap: a connection to a cluster whose bootstrap is
// running is held until it ends, and fails when its context ends first.
func TestRouteWaitsForBootstrap(t *testing.T) {
	t.Parallel()
	b := newBootstrapRunner(kubefake.NewClientset(), "", "", klog.Background())
	ch := make(chan struct{})
	b.running["ns/basic"] = ch
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx, "ns", "basic"); err == nil {
		t.Error("a canceled wait on a running bootstrap returned nil")
	}
	if err := b.wait(ctx, "ns", "other"); err != nil {
		t.Errorf("a cluster without a running bootstrap: %v", err)
	}
	close(ch)
	if err := b.wait(ctx, "ns", "basic"); err != nil {
		t.Errorf("after the run ended: %v", err)
	}
}
