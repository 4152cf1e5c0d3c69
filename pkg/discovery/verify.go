package discovery

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Verify answers GET /verify for pdURL, the PD address a TiKV start script of
// an across-Kubernetes cluster is about to pass as --pd (such as
// "http://basic-pd:2379" or "basic-pd:2379"). It returns the comma-joined PD
// addresses to use instead: pdURL, or, when the discovery's own cluster has
// no PD and joins spec.cluster, the FQDN of that cluster's PD peer Service;
// followed by the client URL of every healthy PD member of the other clusters
// sharing the PD cluster (status.pd.peerMembers), so TiKV still reaches PD
// when the local PD is down. Addresses keep the shape of pdURL: without a
// scheme when pdURL has none.
//
// On error (the TidbCluster cannot be read) it returns pdURL unchanged with
// the error, and the handler answers pdURL: the script's default is always
// a usable answer.
func (d *Discovery) Verify(ctx context.Context, pdURL string) (string, error) {
	tc, err := d.clusters.GetTidbCluster(ctx, d.namespace, d.tcName)
	if err != nil {
		return pdURL, fmt.Errorf("get TidbCluster %s/%s: %w", d.namespace, d.tcName, err)
	}
	withScheme := strings.Contains(pdURL, "://")
	shape := func(u string) string {
		if withScheme {
			return u
		}
		_, rest, found := strings.Cut(u, "://")
		if !found {
			return u
		}
		return rest
	}

	first := pdURL
	if ref := tc.Spec.Cluster; tc.Spec.PD == nil && ref != nil && ref.Name != "" {
		first = shape(pdPeerServiceURL(scheme(tc), ref.Name, refNamespace(tc), ref.ClusterDomain))
	}
	urls := []string{first}
	seen := map[string]bool{first: true}
	for _, name := range sortedKeys(tc.Status.PD.PeerMembers) {
		m := tc.Status.PD.PeerMembers[name]
		u := shape(m.ClientURL)
		if !m.Health || u == "" || seen[u] {
			continue
		}
		seen[u] = true
		urls = append(urls, u)
	}
	return strings.Join(urls, ","), nil
}

// pdPeerServiceURL is the client URL of the PD peer (headless) Service of
// cluster name: "<scheme>://<name>-pd-peer.<ns>.svc[.<domain>]:2379". Unlike
// the short client Service name it resolves from other Kubernetes clusters.
func pdPeerServiceURL(scheme, name, namespace, clusterDomain string) string {
	host := name + pdPeerServiceSuffix + "." + namespace + ".svc"
	if clusterDomain != "" {
		host += "." + clusterDomain
	}
	return scheme + "://" + host + ":" + pdClientPort
}

// sortedKeys returns the keys of m in order, so answers do not depend on map
// iteration order.
func sortedKeys(m map[string]v1alpha1.PDMember) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
