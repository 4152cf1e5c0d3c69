// Package tiproxy is the TiProxy member manager: pure builders for
// TiProxy's Services, ConfigMap and StatefulSet as the TiDB Operator lays
// them out, the observation of each proxy's health through its API port,
// its gate on PD, and its restart step — the next proxy restarts only once
// the restarted one has been Ready for the cluster's min-ready-seconds and
// answers healthy. TiProxy keeps no data: a proxy is removed without
// preparation, and drains its own clients when it stops. The component
// skeleton does every write.
package tiproxy

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// TiProxy's ports, as the TiDB Operator exposes them.
const (
	// ServerPort serves the MySQL protocol to clients (proxy.addr).
	ServerPort = 6000
	// StatusPort serves TiProxy's API: health, config, metrics (api.addr).
	StatusPort = 3080
	// PeerPort is where proxies reach each other.
	PeerPort = 3081

	pdClientPort = 2379
)

// Port names of the Services and the container.
const (
	portAPI    = "tiproxy-api"
	portPeer   = "tiproxy-peer"
	portSQL    = "tiproxy-sql"
	portServer = "tiproxy"
)

// CertLayoutV1 is spec.tiproxy.certLayout's "v1": TiProxy's own cluster
// certificate for its API and peers, TiDB's server certificate for clients
// and its CA to verify TiDB. Any other value ("") is the legacy layout.
const CertLayoutV1 = "v1"

// Where TiProxy's files are, as the TiDB Operator lays them out.
const (
	configDir     = "/etc/proxy"
	configFile    = "proxy.toml"
	scriptFile    = "start.sh"
	workDir       = "/var/lib/tiproxy/work"
	containerName = "tiproxy"
	metricsPath   = "/api/metrics"

	// clusterClientDir holds <tc>-cluster-client-secret (legacy: TiProxy's
	// client certificate for PD and TiDB's status port).
	clusterClientDir    = "/var/lib/cluster-client-tls"
	clusterClientVolume = "cluster-client-tls"
	// clusterDir holds <tc>-tiproxy-cluster-secret in the v1 layout.
	clusterDir = "/var/lib/tiproxy-tls"
	// httpServerDir holds <tc>-tiproxy-cluster-secret in the legacy layout,
	// served on the API port.
	httpServerDir = "/var/lib/tiproxy-http-server-tls"
	clusterVolume = "tiproxy-tls"
	// serverDir holds <tc>-tidb-server-secret, the certificate TiProxy shows
	// MySQL clients, as TiDB does.
	serverDir    = "/var/lib/tiproxy-server-tls"
	serverVolume = "tidb-server-tls"
	// sqlDir holds the client certificate TiProxy shows TiDB (legacy layout).
	sqlDir    = "/var/lib/tiproxy-sql-tls"
	sqlVolume = "tidb-client-tls"
)

// tlsCluster reports spec.tlsCluster.enabled: TLS between components, and
// on TiProxy's API port.
func tlsCluster(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// tlsTiDB reports whether TiDB serves MySQL clients over TLS
// (spec.tidb.tlsClient.enabled); TiProxy then does too.
func tlsTiDB(tc *v1alpha1.TidbCluster) bool {
	db := tc.Spec.TiDB
	return db != nil && db.TLSClient != nil && db.TLSClient.Enabled
}

// sqlTLS reports whether TiProxy connects to TiDB over TLS: when TiDB
// serves it, unless the cluster's clients skip it
// (AnnSkipTLSWhenConnectTiDB) and spec.tiproxy.sslEnableTiDB does not ask
// for it anyway.
func sqlTLS(tc *v1alpha1.TidbCluster) bool {
	_, skip := tc.Annotations[label.AnnSkipTLSWhenConnectTiDB]
	return tlsTiDB(tc) && (tc.Spec.TiProxy.SSLEnableTiDB || !skip)
}

func certLayoutV1(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiProxy.CertLayout == CertLayoutV1 }

// sqlClientSecret is the client certificate TiProxy shows TiDB in the
// legacy layout: spec.tiproxy.tlsClientSecretName, else <tc>-tidb-client-secret.
func sqlClientSecret(tc *v1alpha1.TidbCluster) string {
	if s := tc.Spec.TiProxy.TLSClientSecretName; s != nil && *s != "" {
		return *s
	}
	return names.Member(tc.Name, names.TiDB) + "-client-secret"
}

// tidbServerSecret is <tc>-tidb-server-secret, TiDB's MySQL certificate.
func tidbServerSecret(tc *v1alpha1.TidbCluster) string {
	return names.Member(tc.Name, names.TiDB) + "-server-secret"
}

// newServices returns the client Service <tc>-tiproxy (API and SQL ports)
// and the headless <tc>-tiproxy-peer (API and peer ports), in the TiDB
// Operator's order. The client Service is a NodePort Service, as the TiDB
// Operator makes it, unless the deprecated spec.services names another type
// for tiproxy. Unlike the TiDB Operator's, it does not publish not-ready
// addresses, because TiProxy's readiness turns false as it starts shutting
// down: new clients must then go to the other proxies.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	client := component.ClientService(tc, names.TiProxy, names.Member(tc.Name, names.TiProxy), nil,
		component.Port(portAPI, StatusPort), component.Port(portSQL, ServerPort))
	if !legacyServiceType(tc) {
		client.Spec.Type = corev1.ServiceTypeNodePort
	}
	peer := component.HeadlessService(tc, names.TiProxy, names.Peer(tc.Name, names.TiProxy),
		component.Port(portAPI, StatusPort), component.Port(portPeer, PeerPort))
	return []*corev1.Service{client, peer}
}

// legacyServiceType reports whether the deprecated spec.services names a
// type for tiproxy.
func legacyServiceType(tc *v1alpha1.TidbCluster) bool {
	for _, s := range tc.Spec.Services {
		if s.Name == names.TiProxy && s.Type != "" {
			return true
		}
	}
	return false
}
