package pump

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// Pump's paths and names, as the TiDB Operator lays them out.
const (
	// ConfigKey is the ConfigMap key of Pump's TOML config, mounted as ConfigDir/ConfigFile.
	ConfigKey = "pump-config"
	// ConfigDir holds pump.toml.
	ConfigDir = "/etc/pump"
	// ConfigFile is the config file's name under ConfigDir.
	ConfigFile = "pump.toml"
	// DataVolume is the volume claim template of Pump's binlog, mounted at DataDir (PVC
	// data-<tc>-pump-<ordinal>).
	DataVolume = "data"
	// DataDir is where Pump keeps its binlog and its node ID.
	DataDir = "/data"
	// TLSDir holds Pump's cluster certificate (Secret <tc>-pump-cluster-secret).
	TLSDir = "/var/lib/pump-tls"

	containerPump   = "pump"
	portName        = "pump"
	tlsVolume       = "pump-tls"
	keyLogLevel     = "log-level"
	defaultLogLevel = "info"
	pdClientPort    = 2379
	discoveryPort   = 10261
)

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// newServices returns the headless Service <tc>-pump (port pump 8250), which also governs the
// StatefulSet: Pump has no client Service.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	return []*corev1.Service{component.HeadlessService(tc, names.Pump, names.Member(tc.Name, names.Pump),
		component.Port(portName, pumpapi.Port))}
}

// newConfigData returns the ConfigMap data: pump-config, spec.pump.config with the operator's settings
// over it. The TiDB Operator's only settings are the TLS paths when TLS between components is on
// (security.ssl-ca, ssl-cert, ssl-key under TLSDir); the ConfigMap exists even without a config, as
// the TiDB Operator's does, because the start script always passes -config.
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	var forced map[string]any
	if tlsEnabled(tc) {
		forced = map[string]any{
			"security.ssl-ca":   TLSDir + "/" + corev1.ServiceAccountRootCAKey,
			"security.ssl-cert": TLSDir + "/" + corev1.TLSCertKey,
			"security.ssl-key":  TLSDir + "/" + corev1.TLSPrivateKeyKey,
		}
	}
	text, err := component.RenderConfig(tc.Spec.Pump.Config, forced)
	if err != nil {
		return nil, fmt.Errorf("spec.pump.config: %w", err)
	}
	return map[string]string{ConfigKey: text}, nil
}

// logLevel is Pump's -L: log-level of spec.pump.config, else info.
func logLevel(tc *v1alpha1.TidbCluster) string {
	if cfg := tc.Spec.Pump.Config; cfg != nil {
		if s, ok := cfg.Items[keyLogLevel].(string); ok && s != "" {
			return s
		}
	}
	return defaultLogLevel
}

// pdURLs is Pump's -pd-urls: the cluster's own PD Service, or for a cluster without PD the PD it
// joins (the referenced cluster's, or spec.pdAddresses).
func pdURLs(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.PD == nil && (tc.Spec.Cluster != nil && tc.Spec.Cluster.Name != "" || len(tc.Spec.PDAddresses) > 0) {
		return tikv.PDAddress(tc)
	}
	return fmt.Sprintf("%s://%s:%d", names.Scheme(tlsEnabled(tc)), names.Member(tc.Name, names.PD), pdClientPort)
}

// advertiseHost is what follows the pod name in the address a pump advertises (and the registry
// records): "<tc>-pump", qualified with ".<ns>.svc[.<domain>]" when the cluster has a cluster domain
// or spans Kubernetes clusters, as the TiDB Operator's start script does.
func advertiseHost(tc *v1alpha1.TidbCluster) string {
	host := names.Member(tc.Name, names.Pump)
	switch {
	case tc.Spec.ClusterDomain != "":
		host += "." + tc.Namespace + ".svc." + tc.Spec.ClusterDomain
	case tc.Spec.AcrossK8s:
		host += "." + tc.Namespace + ".svc"
	}
	return host
}

// AdvertiseAddr returns the address the pump of pod podName advertises and the binlog registry
// records as its host: "<pod>.<tc>-pump[.<ns>.svc[.<domain>]]:8250".
func AdvertiseAddr(tc *v1alpha1.TidbCluster, podName string) string {
	return podName + "." + advertiseHost(tc) + ":" + strconv.Itoa(pumpapi.Port)
}

// newStartScript returns the script the pump container runs with /bin/sh -c: pump with the TiDB
// Operator's flags, advertising "${HOSTNAME}.<tc>-pump…:8250" (HOSTNAME is the pod name; with
// hostNetwork the StatefulSet sets it so). The shell is the container's first process, so it passes
// the pod's termination on to pump (which then pauses itself in the registry) and exits with pump.
// Pump exits cleanly only once it went offline; the script then idles instead of exiting, so that the
// container is not restarted and the pump does not register itself online again before its pod is
// removed. Free-form values from the spec are single-quoted. Across Kubernetes clusters the PD
// endpoints are the ones discovery verifies.
func newStartScript(tc *v1alpha1.TidbCluster) string {
	var b strings.Builder
	b.WriteString(component.ScriptPreamble("pump", "Pump"))
	pd := shellQuote(pdURLs(tc))
	if tc.Spec.AcrossK8s {
		domain := ""
		if d := tc.Spec.ClusterDomain; d != "" {
			domain = "." + d
		}
		discovery := fmt.Sprintf("%s.%s.svc%s:%d", names.DiscoveryName(tc.Name), tc.Namespace, domain, discoveryPort)
		b.WriteString("# Across Kubernetes clusters, discovery answers the PD endpoints to use.\n")
		fmt.Fprintf(&b, "encoded=$(printf '%%s' %s | base64 | tr -d '\\n')\n", pd)
		fmt.Fprintf(&b, "until pd=$(wget -qO- -T 3 \"http://%s/verify/${encoded}\"); do\n", discovery)
		b.WriteString("  echo \"waiting for discovery to verify the PD endpoints\"\n  sleep 2\ndone\n")
		pd = `"${pd}"`
	}
	args := []string{
		"-pd-urls=" + pd,
		"-L=" + shellQuote(logLevel(tc)),
		"-advertise-addr=${HOSTNAME}." + advertiseHost(tc) + ":" + strconv.Itoa(pumpapi.Port),
		"-config=" + ConfigDir + "/" + ConfigFile,
		"-data-dir=" + DataDir,
		"-log-file=",
	}
	b.WriteString("term=\n/pump \\\n  " + strings.Join(args, " \\\n  ") + " &\n")
	b.WriteString(`pump=$!
# Pass the pod's termination on to pump, which then marks itself paused in the registry.
trap 'term=1; kill -TERM "$pump" 2>/dev/null' TERM INT
wait "$pump"
status=$?
while [ -n "$term" ] && kill -0 "$pump" 2>/dev/null; do
  wait "$pump"
  status=$?
done
if [ -n "$term" ] || [ "$status" -ne 0 ]; then
  exit "$status"
fi
# pump exits cleanly only once it went offline: idle, so that no restart registers it again.
echo "$(date -u '+[%Y/%m/%d %H:%M:%S %z]') pump offline, please delete my pod"
exec tail -f /dev/null
`)
	return b.String()
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
