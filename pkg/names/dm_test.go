package names

import "testing"

func TestDMNames(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		DMMaster("basic"):                               "basic-dm-master",
		DMMasterPeer("basic"):                           "basic-dm-master-peer",
		DMWorker("basic"):                               "basic-dm-worker",
		DMWorkerPeer("basic"):                           "basic-dm-worker-peer",
		DMDiscovery("basic"):                            "basic-dm-discovery",
		DMMasterPod("basic", 2):                         "basic-dm-master-2",
		DMWorkerPod("basic", 0):                         "basic-dm-worker-0",
		DMClientSecret("basic"):                         "basic-dm-client-secret",
		DMClusterSecret("basic", DMMasterComponent):     "basic-dm-master-cluster-secret",
		PVC("dm-master", "basic", DMMasterComponent, 1): "dm-master-basic-dm-master-1",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
