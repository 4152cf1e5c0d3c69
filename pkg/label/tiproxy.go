package label

// Annotations the TiProxy component reads from the TidbCluster, with the
// TiDB Operator's keys.
const (
	// AnnTiProxyMinReadySeconds on the TidbCluster is how many seconds a
	// restarted TiProxy pod must have been Ready before the rollout restarts
	// the next one (an integer; the TiDB Operator's own key, whose domain
	// differs from the other annotations').
	AnnTiProxyMinReadySeconds = "tiproxy.pingcap.com/tiproxy-min-ready-seconds"
	// AnnSkipTLSWhenConnectTiDB on the TidbCluster (any value) says clients
	// of the cluster connect to TiDB without TLS even when TiDB's MySQL port
	// serves it; TiProxy then connects to TiDB in plain text unless
	// spec.tiproxy.sslEnableTiDB asks for TLS.
	AnnSkipTLSWhenConnectTiDB = "tidb.tidb.pingcap.com/skip-tls-when-connect-tidb"
)
