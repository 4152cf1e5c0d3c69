package ticdc

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// TiCDC's paths and names, as the TiDB Operator lays them out.
const (
	// ConfigDir holds ticdc.toml when the cluster has a ConfigMap.
	ConfigDir = "/etc/ticdc"
	// ConfigFile is the config file's name under ConfigDir.
	ConfigFile = "ticdc.toml"
	// TLSDir holds TiCDC's cluster certificate (Secret <tc>-ticdc-cluster-secret).
	TLSDir = "/var/lib/ticdc-tls"
	// ClientTLSDir holds the operator's client certificate (Secret <tc>-cluster-client-secret).
	ClientTLSDir = "/var/lib/cluster-client-tls"
	// SinkTLSDir holds one directory per spec.ticdc.tlsClientSecretNames Secret, named like it, for the
	// TLS of changefeeds to their sinks.
	SinkTLSDir = "/var/lib/sink-tls"

	containerTiCDC  = "ticdc"
	portName        = "ticdc"
	tlsVolume       = "ticdc-tls"
	clientTLSVolume = "cluster-client-tls"
	pdClientPort    = 2379
	discoveryPort   = 10261
)

// The settings of spec.ticdc.config the TiDB Operator reads itself, as flags and the TZ variable. A
// config of only these ("legacy items") gets no ConfigMap and no --config, as in the TiDB Operator.
const (
	keyTimezone = "tz"
	keyGCTTL    = "gc-ttl"
	keyLogLevel = "log-level"
	keyLogFile  = "log-file"
)

// Their defaults: a day of GC safe point TTL, logs to the container's stderr at info.
const (
	defaultGCTTL    = 86400
	defaultLogFile  = "/dev/stderr"
	defaultLogLevel = "info"
)

// LegacyConfigKeys are the keys of spec.ticdc.config the operator turns into flags and the TZ variable
// (and which alone need no config file).
var LegacyConfigKeys = []string{keyTimezone, keyGCTTL, keyLogLevel, keyLogFile}

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// newServices returns the headless <tc>-ticdc-peer; TiCDC has no client Service.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	return []*corev1.Service{component.HeadlessService(tc, names.TiCDC, names.Peer(tc.Name, names.TiCDC),
		component.Port(portName, ticdcapi.Port))}
}

// hasConfigFile reports whether tc's TiCDC needs a config file: its config has an item other than the
// legacy ones the start flags carry.
func hasConfigFile(tc *v1alpha1.TidbCluster) bool {
	cfg := tc.Spec.TiCDC.Config
	if cfg == nil {
		return false
	}
	for k := range cfg.Items {
		if !slices.Contains(LegacyConfigKeys, k) {
			return true
		}
	}
	return false
}

// newConfigData returns the ConfigMap data, config-file only, or nil when hasConfigFile is false. The
// whole config is rendered, legacy items included: TiCDC's server config knows them too.
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	if !hasConfigFile(tc) {
		return nil, nil
	}
	text, err := component.RenderConfig(tc.Spec.TiCDC.Config, nil)
	if err != nil {
		return nil, fmt.Errorf("spec.ticdc.config: %w", err)
	}
	return map[string]string{component.ConfigFileKey: text}, nil
}

// configString returns the string at key of spec.ticdc.config, or def when it is absent or not a
// string (validation refuses that).
func configString(tc *v1alpha1.TidbCluster, key, def string) string {
	if cfg := tc.Spec.TiCDC.Config; cfg != nil {
		if s, ok := cfg.Items[key].(string); ok {
			return s
		}
	}
	return def
}

// gcTTL returns gc-ttl of spec.ticdc.config (seconds), else 86400.
func gcTTL(tc *v1alpha1.TidbCluster) int64 {
	cfg := tc.Spec.TiCDC.Config
	if cfg == nil {
		return defaultGCTTL
	}
	switch v := cfg.Items[keyGCTTL].(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
	case int64:
		return v
	}
	return defaultGCTTL
}

// timezone is TiCDC's TZ: tz of spec.ticdc.config, else the cluster's timezone, else UTC.
func timezone(tc *v1alpha1.TidbCluster) string {
	def := tc.Spec.Timezone
	if def == "" {
		def = "UTC"
	}
	return configString(tc, keyTimezone, def)
}

// pdAddress is TiCDC's --pd: the cluster's own PD Service, or for a cluster without PD the PD it joins
// (the referenced cluster's, or spec.pdAddresses).
func pdAddress(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.PD == nil && (tc.Spec.Cluster != nil && tc.Spec.Cluster.Name != "" || len(tc.Spec.PDAddresses) > 0) {
		return tikv.PDAddress(tc)
	}
	return fmt.Sprintf("%s://%s:%d", names.Scheme(tlsEnabled(tc)), names.Member(tc.Name, names.PD), pdClientPort)
}

// newStartScript returns the script the ticdc container runs with /bin/sh -c: `exec /cdc server` with
// the TiDB Operator's flags. The capture advertises "<pod>.<tc>-ticdc-peer.<ns>.svc[.<domain>]:8301",
// which the operator reads back to tell which pod a capture runs on (ticdcapi.CapturePod). Free-form
// values from the spec are single-quoted, so the shell expands nothing in them (the cluster domain and
// namespace are DNS names). Across Kubernetes clusters the PD endpoints are the ones discovery verifies.
func newStartScript(tc *v1alpha1.TidbCluster) string {
	domain := ""
	if d := tc.Spec.ClusterDomain; d != "" {
		domain = "." + d
	}
	bind := "0.0.0.0"
	if tc.Spec.PreferIPv6 {
		bind = "[::]"
	}
	var b strings.Builder
	pd := shellQuote(pdAddress(tc))
	if tc.Spec.AcrossK8s {
		discovery := fmt.Sprintf("%s.%s.svc%s:%d", names.DiscoveryName(tc.Name), tc.Namespace, domain, discoveryPort)
		b.WriteString("# Across Kubernetes clusters, discovery answers the PD endpoints to use.\n")
		fmt.Fprintf(&b, "encoded=$(printf '%%s' %s | base64 | tr -d '\\n')\n", pd)
		fmt.Fprintf(&b, "until pd=$(wget -qO- -T 3 \"http://%s/verify/${encoded}\"); do\n", discovery)
		b.WriteString("  echo \"waiting for discovery to verify the PD endpoints\"\n  sleep 2\ndone\n")
		pd = `"${pd}"`
	}
	args := []string{
		"--addr=" + bind + ":" + strconv.Itoa(ticdcapi.Port),
		"--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc" + domain + ":" + strconv.Itoa(ticdcapi.Port),
		"--gc-ttl=" + strconv.FormatInt(gcTTL(tc), 10),
		"--log-file=" + shellQuote(configString(tc, keyLogFile, defaultLogFile)),
		"--log-level=" + shellQuote(configString(tc, keyLogLevel, defaultLogLevel)),
		"--pd=" + pd,
	}
	if tlsEnabled(tc) {
		args = append(args, "--ca="+TLSDir+"/ca.crt", "--cert="+TLSDir+"/tls.crt", "--key="+TLSDir+"/tls.key")
	}
	if hasConfigFile(tc) {
		args = append(args, "--config="+ConfigDir+"/"+ConfigFile)
	}
	b.WriteString("exec /cdc server \\\n  " + strings.Join(args, " \\\n  ") + "\n")
	return b.String()
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
