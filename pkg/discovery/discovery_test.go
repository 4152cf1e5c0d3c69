package discovery

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// testEnv is a Discovery of cluster "basic" in testNamespace with its fakes.
type testEnv struct {
	clusters *fakeClusters
	pd       *fakePD
	d        *Discovery
}

func newTestEnv(tc *v1alpha1.TidbCluster) *testEnv {
	e := &testEnv{clusters: newFakeClusters(tc), pd: newFakePD()}
	e.d = New(testNamespace, tc.Name, e.clusters, e.pd.client)
	return e
}

// ask is one GET /new in a scenario: the answer or error expected, then an
// optional change of the world (PD gains a member, the TidbCluster changes).
type ask struct {
	peer    string // advertise peer URL, without scheme
	want    string // the answer, when wantErr is empty
	wantErr string // a substring of the error
	then    func(e *testEnv)
}

type scenario struct {
	name  string
	tc    *v1alpha1.TidbCluster
	setup func(e *testEnv)
	asks  []ask
}

func runScenarios(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(sc.tc)
			if sc.setup != nil {
				sc.setup(e)
			}
			for i, a := range sc.asks {
				got, err := e.d.Discover(context.Background(), a.peer)
				switch {
				case a.wantErr != "" && err == nil:
					t.Fatalf("ask %d (%s): got %q, want an error containing %q", i, a.peer, got, a.wantErr)
				case a.wantErr != "" && !strings.Contains(err.Error(), a.wantErr):
					t.Fatalf("ask %d (%s): error %q does not contain %q", i, a.peer, err, a.wantErr)
				case a.wantErr == "" && err != nil:
					t.Fatalf("ask %d (%s): unexpected error: %v", i, a.peer, err)
				case a.wantErr == "" && got != a.want:
					t.Fatalf("ask %d (%s):\n got %q\nwant %q", i, a.peer, got, a.want)
				}
				if a.then != nil {
					a.then(e)
				}
			}
		})
	}
}

const ownPD = "http://basic-pd.ns:2379"

func peer(i int) string   { return peerHost("basic", i) + ":2380" }
func client(i int) string { return "http://" + peerHost("basic", i) + ":2379" }
func initial(i int) string {
	return "--initial-cluster=basic-pd-" + strconv.Itoa(i) + "=http://" + peer(i)
}
func join(u ...string) string { return "--join=" + strings.Join(u, ",") }

func withPDMembers(url string, members ...*pdapi.Member) func(*testEnv) {
	return func(e *testEnv) { e.pd.setMembers(url, members...) }
}

func TestDiscoverBootstrapAndJoin(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{{
		name: "three PDs: the last of the batch bootstraps, the first two join it",
		tc:   newTC("basic", 3),
		asks: []ask{
			{peer: peer(0), wantErr: "connection refused"},
			{peer: peer(1), wantErr: "connection refused"},
			{peer: peer(0), wantErr: ownPD}, // asking again does not count twice
			{peer: peer(2), want: initial(2), then: withPDMembers(ownPD, podMember("basic", 2))},
			{peer: peer(0), want: join(client(2)), then: func(e *testEnv) { e.pd.addMember(ownPD, podMember("basic", 0)) }},
			{peer: peer(1), want: join(client(2), client(0))},
		},
	}, {
		name:  "PD without another member keeps the caller waiting",
		tc:    newTC("basic", 3),
		setup: withPDMembers(ownPD, podMember("basic", 0)),
		asks:  []ask{{peer: peer(0), wantErr: "has no member for basic-pd-0 to join"}},
	}, {
		name:  "scale-out pod joins every member",
		tc:    newTC("basic", 4),
		setup: withPDMembers(ownPD, podMember("basic", 0), podMember("basic", 1), podMember("basic", 2)),
		asks:  []ask{{peer: peer(3), want: join(client(0), client(1), client(2))}},
	}, {
		name:  "restarted pod that is still a member is left out of its join list",
		tc:    newTC("basic", 3),
		setup: withPDMembers(ownPD, podMember("basic", 0), podMember("basic", 1), podMember("basic", 2)),
		asks:  []ask{{peer: peer(1), want: join(client(0), client(2))}},
	}, {
		name:  "members without peer URLs are skipped",
		tc:    newTC("basic", 4),
		setup: withPDMembers(ownPD, nil, &pdapi.Member{Name: "no-urls"}, podMember("basic", 0)),
		asks:  []ask{{peer: peer(3), want: join(client(0))}},
	}, {
		name: "a changed resourceVersion restarts the count",
		tc:   newTC("basic", 3),
		asks: []ask{
			{peer: peer(0), wantErr: ownPD},
			{peer: peer(1), wantErr: ownPD, then: func(e *testEnv) {
				e.clusters.update(testNamespace, "basic", func(tc *v1alpha1.TidbCluster) { tc.Labels = map[string]string{"a": "b"} })
			}},
			{peer: peer(2), wantErr: ownPD}, // would have bootstrapped without the reset
			{peer: peer(0), wantErr: ownPD},
			{peer: peer(1), want: initial(1)},
		},
	}})
}

func TestDiscoverDesiredReplicas(t *testing.T) {
	t.Parallel()
	failover := newTC("basic", 2)
	failover.Status.PD.FailureMembers = map[string]v1alpha1.PDFailureMember{
		"basic-pd-0": {PodName: "basic-pd-0", MemberDeleted: true},
		"basic-pd-1": {PodName: "basic-pd-1"}, // not deleted yet: no extra pod
	}
	spare := newTC("basic", 1)
	spare.Status.PD.VolReplaceInProgress = true
	external := newTC("basic", 2)
	external.Spec.PDAddresses = []string{"http://ext-pd-0:2379", "http://ext-pd-1:2379"}
	runScenarios(t, []scenario{{
		name: "deleted failure members add to the desired replicas",
		tc:   failover,
		asks: []ask{
			{peer: peer(0), wantErr: ownPD},
			{peer: peer(1), wantErr: ownPD},
			{peer: peer(2), want: initial(2)},
		},
	}, {
		name: "volume replacement adds its spare pod",
		tc:   spare,
		asks: []ask{{peer: peer(0), wantErr: ownPD}, {peer: peer(1), want: initial(1)}},
	}, {
		name: "pdAddresses: the last of the batch joins the external PD",
		tc:   external,
		asks: []ask{
			{peer: peer(0), wantErr: ownPD},
			{peer: peer(1), want: join("http://ext-pd-0:2379", "http://ext-pd-1:2379")},
		},
	}})
}

func TestDiscoverHeterogeneousAndPeers(t *testing.T) {
	t.Parallel()
	hetero := newTC("basic", 1)
	hetero.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "target"}
	const targetPD = "http://target-pd.ns:2379"

	remote := newTC("basic", 1)
	remote.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "target", Namespace: "other", ClusterDomain: "east.local"}
	const remotePD = "http://target-pd.other.svc.east.local:2379"
	remoteHost := "target-pd-0.target-pd-peer.other.svc.east.local"

	peers := newTC("basic", 3)
	peers.Status.PD.PeerMembers = map[string]v1alpha1.PDMember{
		"b": {Name: "b", ClientURL: "http://other-pd-1.other-pd-peer.ns.svc:2379"},
		"a": {Name: "a", ClientURL: "http://other-pd-0.other-pd-peer.ns.svc:2379"},
	}
	runScenarios(t, []scenario{{
		name: "heterogeneous cluster never bootstraps and joins the target's PD",
		tc:   hetero,
		asks: []ask{
			{peer: peer(0), wantErr: targetPD, then: withPDMembers(targetPD, podMember("target", 0))},
			{peer: peer(0), want: join("http://" + peerHost("target", 0) + ":2379")},
		},
	}, {
		name:  "heterogeneous target in another namespace and domain",
		tc:    remote,
		setup: withPDMembers(remotePD, pdMember(remoteHost, "http", remoteHost)),
		asks:  []ask{{peer: peer(0), want: join("http://" + remoteHost + ":2379")}},
	}, {
		name: "peer members are asked, in name order, when the own PD fails",
		tc:   peers,
		setup: withPDMembers("http://other-pd-1.other-pd-peer.ns.svc:2379",
			pdMember("other-pd-1", "http", "other-pd-1.other-pd-peer.ns.svc")),
		asks: []ask{{peer: peer(0), want: join("http://other-pd-1.other-pd-peer.ns.svc:2379")}},
	}, {
		name: "every failed PD is named in the error",
		tc:   peers,
		asks: []ask{{peer: peer(0), wantErr: "http://other-pd-1.other-pd-peer.ns.svc:2379: dial tcp"}},
	}})
}

func TestDiscoverNamingAndScheme(t *testing.T) {
	t.Parallel()
	domain := newTC("basic", 2)
	domain.Spec.ClusterDomain = "cluster.local"
	const domainPD = "http://basic-pd.ns.svc.cluster.local:2379"
	fqdn := func(i int) string { return peerHost("basic", i) + ".cluster.local" }
	fqdnMember := func(i int) *pdapi.Member { return pdMember(fqdn(i), "http", fqdn(i)) }

	across := newTC("basic", 1)
	across.Spec.AcrossK8s = true

	tls := newTC("basic", 2)
	tls.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	const tlsPD = "https://basic-pd.ns:2379"
	runScenarios(t, []scenario{{
		name: "clusterDomain: members are named by full host and asked through the FQDN Service",
		tc:   domain,
		asks: []ask{
			{peer: fqdn(0) + ":2380", wantErr: domainPD},
			{peer: fqdn(1) + ":2380", want: "--initial-cluster=" + fqdn(1) + "=http://" + fqdn(1) + ":2380",
				then: withPDMembers(domainPD, fqdnMember(1))},
			{peer: fqdn(0) + ":2380", want: join("http://" + fqdn(1) + ":2379"),
				then: func(e *testEnv) { e.pd.addMember(domainPD, fqdnMember(0)) }},
			{peer: fqdn(1) + ":2380", want: join("http://" + fqdn(0) + ":2379")}, // restarted: itself left out
		},
	}, {
		name: "acrossK8s: the member is named by its full host",
		tc:   across,
		asks: []ask{{peer: peer(0), want: "--initial-cluster=" + peerHost("basic", 0) + "=http://" + peer(0)}},
	}, {
		name: "TLS: https everywhere",
		tc:   tls,
		asks: []ask{
			{peer: peer(0), wantErr: tlsPD},
			{peer: peer(1), want: "--initial-cluster=basic-pd-1=https://" + peer(1),
				then: withPDMembers(tlsPD, pdMember("basic-pd-1", "https", peerHost("basic", 1)))},
			{peer: peer(0), want: join("https://" + peerHost("basic", 1) + ":2379")},
		},
	}})
}

func TestParseAdvertisePeerURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, wantErr string
		want        advertisePeer
	}{
		{in: "basic-pd-0.basic-pd-peer.ns.svc:2380",
			want: advertisePeer{url: "basic-pd-0.basic-pd-peer.ns.svc:2380", host: "basic-pd-0.basic-pd-peer.ns.svc",
				pod: "basic-pd-0", tcName: "basic", namespace: "ns"}},
		{in: "p.x-pd-peer.ns.svc.cluster.local",
			want: advertisePeer{url: "p.x-pd-peer.ns.svc.cluster.local", host: "p.x-pd-peer.ns.svc.cluster.local",
				pod: "p", tcName: "x", namespace: "ns"}},
		{in: "", wantErr: "empty"},
		{in: "basic-pd-0.basic-pd-peer.ns:2380", wantErr: "is not <pod>.<tc>-pd-peer"},
		{in: "basic-pd-0.basic-pd-peer.ns.cluster:2380", wantErr: "is not <pod>.<tc>-pd-peer"},
		{in: ".basic-pd-peer.ns.svc:2380", wantErr: "is not <pod>.<tc>-pd-peer"},
		{in: "http://basic-pd-0.basic-pd-peer.ns.svc:2380", wantErr: "is not <pod>.<tc>-pd-peer"},
		{in: "basic-tikv-0.basic-tikv-peer.ns.svc:20160", wantErr: `service "basic-tikv-peer"`},
		{in: "basic-pd-0.-pd-peer.ns.svc:2380", wantErr: `service "-pd-peer"`},
		{in: "basic-pd-0.basic-pd-peer.ns.svc:http", wantErr: "invalid port"},
	}
	for _, c := range cases {
		got, err := parseAdvertisePeerURL(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("parse(%q) error = %v, want one containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}
