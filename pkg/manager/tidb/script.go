package tidb

import (
	"bytes"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
)

// startScript starts tidb-server against the cluster's PD (verified by the
// discovery service when the cluster spans Kubernetes clusters), with
// binlog, the slow-query log and plugins as the pod's env and spec say.
var startScript = template.Must(template.New("tidb").Parse(component.ScriptPreamble("tidb-server", "TiDB") + `
POD_NAME=${POD_NAME:-$HOSTNAME}
PD={{.PD}}
{{- if .Verify}}
# Across Kubernetes clusters, discovery answers the PD endpoints to use.
encoded=$(printf '%s' "${PD}" | base64 | tr -d '\n')
until PD=$(wget -qO- -T 3 "http://${CLUSTER_NAME}-discovery.${NAMESPACE}{{.DomainSuffix}}:10261/verify/${encoded}"); do
  echo "waiting for discovery to verify the PD endpoints"
  sleep 2
done
{{- end}}

ARGS="--store=tikv \
--advertise-address=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}{{.DomainSuffix}} \
--host={{.Host}} \
--path=${PD} \
--config=/etc/tidb/tidb.toml"

if [ "${BINLOG_ENABLED:-false}" = "true" ]; then
  ARGS="${ARGS} --enable-binlog=true"
fi
if [ -n "${SLOW_LOG_FILE:-}" ]; then
  ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE}"
fi

echo "starting tidb-server ${ARGS}"{{.Arguments}}
exec /tidb-server ${ARGS}{{.Arguments}}
`))

type scriptParams struct {
	DomainSuffix, PD, Host, Arguments string
	Verify                            bool
}

// newStartScript renders the start script for tc. The plugin flags and
// spec.tidb.arguments are appended after the operator's flags, each
// single-quoted so that the shell passes it to tidb-server as one word and
// expands nothing in it.
func newStartScript(tc *v1alpha1.TidbCluster) (string, error) {
	db := tc.Spec.TiDB
	p := scriptParams{
		DomainSuffix: ".svc",
		PD:           component.DoubleQuoteClusterName(pdPath(tc)),
		Host:         "0.0.0.0",
		Verify:       tc.Spec.AcrossK8s,
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
	}
	if tc.Spec.PreferIPv6 {
		p.Host = "::"
	}
	var args []string
	if len(db.Plugins) > 0 {
		args = append(args, "--plugin-dir="+pluginDir, "--plugin-load="+strings.Join(db.Plugins, ","))
	}
	for _, a := range append(args, db.Arguments...) {
		p.Arguments += " " + shellQuote(a)
	}
	var buf bytes.Buffer
	if err := startScript.Execute(&buf, p); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// pdPath is TiDB's --path: TiKV's PD endpoints (tikv.PDAddress) without
// their scheme, because tidb-server takes host:port pairs.
func pdPath(tc *v1alpha1.TidbCluster) string {
	addrs := strings.Split(tikv.PDAddress(tc), ",")
	for i, a := range addrs {
		if _, rest, ok := strings.Cut(a, "://"); ok {
			addrs[i] = rest
		}
	}
	return strings.Join(addrs, ",")
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
