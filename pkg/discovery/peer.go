package discovery

import (
	"fmt"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// pdPeerServiceSuffix ends the name of the PD peer Service, <tc>-pd-peer.
const pdPeerServiceSuffix = "-pd-peer"

// pdClientPort is the port of PD's client URLs.
const pdClientPort = "2379"

// advertisePeer is a parsed advertise peer URL,
// "<pod>.<tc>-pd-peer.<ns>.svc[.<domain>]:2380".
type advertisePeer struct {
	url       string // as received, without scheme: host[:port]
	host      string // the part before the port
	pod       string
	tcName    string
	namespace string
}

// parseAdvertisePeerURL checks the shape of a PD advertise peer URL: at least
// four dot-separated host labels, the fourth being "svc" and the second the
// PD peer Service. Any other shape is an ErrInvalidRequest.
func parseAdvertisePeerURL(s string) (advertisePeer, error) {
	if s == "" {
		return advertisePeer{}, fmt.Errorf("%w: advertise peer URL is empty", ErrInvalidRequest)
	}
	host, port, hasPort := strings.Cut(s, ":")
	labels := strings.Split(host, ".")
	if len(labels) < 4 || labels[3] != "svc" || labels[0] == "" || labels[2] == "" {
		return advertisePeer{}, fmt.Errorf("%w: advertise peer URL %q is not <pod>.<tc>-pd-peer.<namespace>.svc[.<domain>]:2380",
			ErrInvalidRequest, s)
	}
	if hasPort && !isPort(port) {
		return advertisePeer{}, fmt.Errorf("%w: advertise peer URL %q has an invalid port %q", ErrInvalidRequest, s, port)
	}
	tcName, ok := strings.CutSuffix(labels[1], pdPeerServiceSuffix)
	if !ok || tcName == "" {
		return advertisePeer{}, fmt.Errorf("%w: advertise peer URL %q: service %q is not a <tc>%s Service",
			ErrInvalidRequest, s, labels[1], pdPeerServiceSuffix)
	}
	return advertisePeer{url: s, host: host, pod: labels[0], tcName: tcName, namespace: labels[2]}, nil
}

// isPort reports whether s is a decimal port number.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// memberName is the PD member name the peer starts with: its full host when
// the cluster spans Kubernetes clusters (acrossK8s or clusterDomain), because
// pod names alone may collide there, else the pod name. It mirrors the
// --name the PD start script passes (spec §3.5).
func (p advertisePeer) memberName(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.AcrossK8s || tc.Spec.ClusterDomain != "" {
		return p.host
	}
	return p.pod
}

// scheme is https when the cluster runs mutual TLS between components.
func scheme(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled {
		return "https"
	}
	return "http"
}

// pdDesiredReplicas is the replica count of the PD StatefulSet (spec §3.4):
// spec.pd.replicas, plus one per failure member already deleted from PD
// (failover adds a pod for each), plus the spare pods of an in-progress
// volume replacement. Zero when the cluster has no PD of its own.
func pdDesiredReplicas(tc *v1alpha1.TidbCluster) int {
	pd := tc.Spec.PD
	if pd == nil {
		return 0
	}
	n := int(pd.Replicas)
	for _, m := range tc.Status.PD.FailureMembers {
		if m.MemberDeleted {
			n++
		}
	}
	if tc.Status.PD.VolReplaceInProgress {
		spare := 1
		if pd.SpareVolReplaceReplicas != nil {
			spare = int(*pd.SpareVolReplaceReplicas)
		}
		n += spare
	}
	return n
}

// pdServiceURL is the client URL of the PD Service of cluster name in
// namespace: "<scheme>://<name>-pd.<ns>:2379", or with the full
// ".svc.<domain>" suffix when the cluster lives under another domain.
func pdServiceURL(scheme, name, namespace, clusterDomain string) string {
	host := name + "-pd." + namespace
	if clusterDomain != "" {
		host += ".svc." + clusterDomain
	}
	return scheme + "://" + host + ":" + pdClientPort
}

// pdCandidateURLs are the PD client URLs to ask for members, in order: the
// cluster's own PD Service (only when it has a PD, because otherwise the
// Service does not exist), the PD of the cluster it joins (spec.cluster), and
// every PD member of other clusters sharing the PD cluster, sorted by name.
// Duplicates and empty URLs are dropped.
func pdCandidateURLs(tc *v1alpha1.TidbCluster) []string {
	s := scheme(tc)
	var urls []string
	seen := map[string]bool{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	if tc.Spec.PD != nil {
		add(pdServiceURL(s, tc.Name, tc.Namespace, tc.Spec.ClusterDomain))
	}
	if ref := tc.Spec.Cluster; ref != nil && ref.Name != "" {
		add(pdServiceURL(s, ref.Name, refNamespace(tc), ref.ClusterDomain))
	}
	for _, name := range sortedKeys(tc.Status.PD.PeerMembers) {
		add(tc.Status.PD.PeerMembers[name].ClientURL)
	}
	return urls
}

// refNamespace is the namespace of the cluster spec.cluster names; its own
// namespace when the reference leaves it empty.
func refNamespace(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.Cluster.Namespace != "" {
		return tc.Spec.Cluster.Namespace
	}
	return tc.Namespace
}
