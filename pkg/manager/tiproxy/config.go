package tiproxy

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// newConfigData returns the ConfigMap data: proxy.toml (config-file) and
// the start script. TiProxy always has a ConfigMap, as in the TiDB
// Operator: the user's spec.tiproxy.config (possibly empty) with the
// operator's keys set over it.
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	cfg, err := component.RenderConfig(tc.Spec.TiProxy.Config, forcedConfig(tc))
	if err != nil {
		return nil, err
	}
	script, err := newStartScript(tc)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: cfg, component.StartScriptKey: script}, nil
}

// forcedConfig is what the operator sets over the user's config: the work
// directory, the PD to discover TiDB from, the addresses the Services and
// probes expect (TiProxy's defaults, set so a user value cannot move a
// port the Services point at), no TLS required from TiDB unless the user
// asks for it, and the TLS paths of the certificate layout.
func forcedConfig(tc *v1alpha1.TidbCluster) map[string]any {
	user := tc.Spec.TiProxy.Config
	host := "0.0.0.0"
	if tc.Spec.PreferIPv6 {
		host = "[::]"
	}
	forced := map[string]any{
		"workdir":        workDir,
		"proxy.pd-addrs": pdAddrs(tc),
		"proxy.addr":     fmt.Sprintf("%s:%d", host, ServerPort),
		"api.addr":       fmt.Sprintf("%s:%d", host, StatusPort),
	}
	if !userSet(user, "proxy.require-backend-tls") {
		forced["proxy.require-backend-tls"] = false
	}
	if certLayoutV1(tc) {
		setTLSV1(tc, forced)
	} else {
		setTLSLegacy(tc, forced)
	}
	return forced
}

// setTLSLegacy sets the TLS paths of the legacy layout: the cluster client
// certificate for PD and TiDB's status port; with TiDB's client TLS,
// TiDB's server certificate for MySQL clients (clients unverified unless
// the user sets server-tls.skip-ca) and, to reach TiDB over TLS, the client
// certificate spec.tiproxy.tlsClientSecretName names (verifying TiDB with
// its CA unless spec.tidb.tlsClient.skipInternalClientCA; no certificate
// shown with disableClientAuthn).
func setTLSLegacy(tc *v1alpha1.TidbCluster, forced map[string]any) {
	user := tc.Spec.TiProxy.Config
	if tlsCluster(tc) {
		setCertPaths(forced, "security.cluster-tls", clusterClientDir, true)
		setHTTPServerTLS(forced, httpServerDir)
	}
	if !tlsTiDB(tc) {
		return
	}
	setCertPaths(forced, "security.server-tls", serverDir, true)
	if !userSet(user, "security.server-tls.skip-ca") {
		forced["security.server-tls.skip-ca"] = true
	}
	if !sqlTLS(tc) {
		return
	}
	client := tc.Spec.TiDB.TLSClient
	if !userSet(user, "security.sql-tls.skip-ca") && client.SkipInternalClientCA {
		forced["security.sql-tls.skip-ca"] = true
	} else {
		forced["security.sql-tls.ca"] = path.Join(sqlDir, "ca.crt")
	}
	if !client.DisableClientAuthn {
		setCertPaths(forced, "security.sql-tls", sqlDir, false)
	}
}

// setTLSV1 sets the TLS paths of the v1 layout: TiProxy's own cluster
// certificate for PD and TiDB's status port and for its API; with TiDB's
// client TLS, TiDB's server certificate for MySQL clients and its CA to
// verify TiDB (unless spec.tidb.tlsClient.skipInternalClientCA); TiProxy
// shows TiDB no client certificate.
func setTLSV1(tc *v1alpha1.TidbCluster, forced map[string]any) {
	user := tc.Spec.TiProxy.Config
	if tlsCluster(tc) {
		setCertPaths(forced, "security.cluster-tls", clusterDir, true)
		setHTTPServerTLS(forced, clusterDir)
	}
	if !tlsTiDB(tc) {
		return
	}
	setCertPaths(forced, "security.server-tls", serverDir, false)
	if !userSet(user, "security.server-tls.skip-ca") {
		forced["security.server-tls.skip-ca"] = true
	}
	if !sqlTLS(tc) {
		return
	}
	if !userSet(user, "security.sql-tls.skip-ca") && tc.Spec.TiDB.TLSClient.SkipInternalClientCA {
		forced["security.sql-tls.skip-ca"] = true
	} else {
		forced["security.sql-tls.ca"] = path.Join(serverDir, "ca.crt")
	}
}

// setHTTPServerTLS serves TiProxy's API over TLS with TiProxy's cluster
// certificate in dir, without asking clients (the operator, the kubelet's
// probe) for theirs. Unlike the TiDB Operator it does so only with
// spec.tlsCluster, whose certificates exist and whose client the operator
// holds: the TiDB Operator's v1 layout sets these paths even without
// them, and its legacy layout serves TiDB's server certificate here when
// TiDB's client TLS is on, which the operator cannot verify.
func setHTTPServerTLS(forced map[string]any, dir string) {
	setCertPaths(forced, "security.server-http-tls", dir, true)
	forced["security.server-http-tls.skip-ca"] = true
}

// setCertPaths sets <table>.cert and .key (and .ca with ca) to the files of
// a certificate Secret mounted at dir.
func setCertPaths(forced map[string]any, table, dir string, ca bool) {
	if ca {
		forced[table+".ca"] = path.Join(dir, "ca.crt")
	}
	forced[table+".cert"] = path.Join(dir, "tls.crt")
	forced[table+".key"] = path.Join(dir, "tls.key")
}

// userSet reports whether the user's config sets the dotted key.
func userSet(cfg *v1alpha1.Config, key string) bool {
	if cfg == nil {
		return false
	}
	table := cfg.Items
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := table[p].(map[string]any)
		if !ok {
			return false
		}
		table = next
	}
	_, ok := table[parts[len(parts)-1]]
	return ok
}

// pdAddrs is proxy.pd-addrs, the PD TiProxy discovers TiDB servers from,
// as host:port pairs: the cluster's own PD <tc>-pd:2379, the PD of the
// cluster spec.cluster names, or spec.pdAddresses without their schemes.
func pdAddrs(tc *v1alpha1.TidbCluster) string {
	own := fmt.Sprintf("%s:%d", names.Member(tc.Name, names.PD), pdClientPort)
	switch {
	case tc.Spec.PD != nil:
		return own
	case tc.Spec.Cluster != nil && tc.Spec.Cluster.Name != "":
		ref := tc.Spec.Cluster
		host := names.Member(ref.Name, names.PD)
		if ref.Namespace != "" && ref.Namespace != tc.Namespace || ref.ClusterDomain != "" {
			ns := ref.Namespace
			if ns == "" {
				ns = tc.Namespace
			}
			host = names.ServiceHost(host, ns, ref.ClusterDomain)
		}
		return fmt.Sprintf("%s:%d", host, pdClientPort)
	case len(tc.Spec.PDAddresses) > 0:
		addrs := make([]string, 0, len(tc.Spec.PDAddresses))
		for _, a := range tc.Spec.PDAddresses {
			if _, rest, ok := strings.Cut(a, "://"); ok {
				a = rest
			}
			addrs = append(addrs, strings.TrimSuffix(a, "/"))
		}
		return strings.Join(addrs, ",")
	}
	return own
}

// startScript runs TiProxy on the mounted config. The address it
// advertises to the other proxies and PD is the pod's stable DNS name;
// it is passed as a flag because the config file is a read-only mount, and
// only to a TiProxy whose --help knows the flag (TiProxy before v1.0 does
// not have it).
var startScript = template.Must(template.New("tiproxy").Parse(component.ScriptPreamble("tiproxy", "TiProxy") + `
POD_NAME=${POD_NAME:-$HOSTNAME}
ARGS="--config={{.Config}}"
if /bin/tiproxy --help 2>&1 | grep -q -- "--advertise-addr"; then
  ARGS="${ARGS} --advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}{{.DomainSuffix}}"
fi

echo "starting tiproxy ${ARGS}"
exec /bin/tiproxy ${ARGS}
`))

// newStartScript renders the start script for tc.
func newStartScript(tc *v1alpha1.TidbCluster) (string, error) {
	p := struct{ Config, DomainSuffix string }{Config: path.Join(configDir, configFile), DomainSuffix: ".svc"}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
	}
	var buf bytes.Buffer
	if err := startScript.Execute(&buf, p); err != nil {
		return "", err
	}
	return buf.String(), nil
}
