package names

import "testing"

func TestNames(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		Member("basic", PD):                                  "basic-pd",
		Peer("basic", TiKV):                                  "basic-tikv-peer",
		DiscoveryName("basic"):                               "basic-discovery",
		Pod("basic", TiDB, 1):                                "basic-tidb-1",
		PVC("pd", "basic", PD, 2):                            "pd-basic-pd-2",
		ConfigMapWithHash("basic", TiKV, "6d3f2a1"):          "basic-tikv-6d3f2a1",
		PodFQDN("basic-pd-0", "basic-pd-peer", "ns", ""):     "basic-pd-0.basic-pd-peer.ns.svc",
		PodFQDN("basic-pd-0", "basic-pd-peer", "ns", "c.lo"): "basic-pd-0.basic-pd-peer.ns.svc.c.lo",
		ServiceHost("basic-pd", "ns", ""):                    "basic-pd.ns",
		ServiceHost("basic-pd", "ns", "cluster.local"):       "basic-pd.ns.svc.cluster.local",
		ClusterClientSecret("basic"):                         "basic-cluster-client-secret",
		ClusterSecret("basic", PD):                           "basic-pd-cluster-secret",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]int32{"basic-pd-0": 0, "a-b-tikv-12": 12} {
		if got, err := Ordinal(name); err != nil || got != want {
			t.Errorf("Ordinal(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	for _, bad := range []string{"basic", "basic-pd-x", "basic-pd-", ""} {
		if _, err := Ordinal(bad); err == nil {
			t.Errorf("Ordinal(%q) should fail", bad)
		}
	}
}
