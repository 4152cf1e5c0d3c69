package tidb

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// startScripts are TiDB's start scripts; spec.startScriptVersion picks one.
var startScripts = component.StartScripts{V1: newStartScript, V2: newStartScriptV2}

// startScriptV2 is the v2 generation of TiDB's script: the cluster's names
// are written into it, binlog is decided when it is rendered (not from the
// pod's BINLOG_ENABLED), and, as in the TiDB Operator, it waits for no DNS
// name.
var startScriptV2 = template.Must(template.New("tidb-v2").Parse(`{{.Preamble}}
POD_NAME=${POD_NAME:-$HOSTNAME}
PD={{.PD}}
{{- if .Verify}}
# Across Kubernetes clusters, discovery answers the PD endpoints to use.
encoded=$(printf '%s' "${PD}" | base64 | tr -d '\n')
until PD=$(wget -qO- -T 3 "http://{{.Discovery}}:10261/verify/${encoded}" | sed 's#[a-z]*://##g'); do
  echo "waiting for discovery to verify the PD endpoints"
  sleep 2
done
{{- end}}

ARGS="--store=tikv \
--advertise-address=${POD_NAME}.{{.PeerService}}.{{.Namespace}}{{.DomainSuffix}} \
--host={{.Host}} \
--path=${PD} \
--config=/etc/tidb/tidb.toml"
{{- if .Binlog}}
ARGS="${ARGS} --enable-binlog=true"
{{- end}}

if [ -n "${SLOW_LOG_FILE:-}" ]; then
  ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE}"
fi

echo "starting tidb-server ${ARGS}"{{.Arguments}}
exec /tidb-server ${ARGS}{{.Arguments}}
`))

type scriptV2Params struct {
	Preamble, PeerService, Namespace, DomainSuffix, Discovery string
	PD, Host, Arguments                                       string
	Verify, Binlog                                            bool
}

// newStartScriptV2 renders TiDB's v2 start script for tc; plugins and
// spec.tidb.arguments are passed as in v1 (newStartScript).
func newStartScriptV2(tc *v1alpha1.TidbCluster, opts component.ScriptV2) (string, error) {
	db := tc.Spec.TiDB
	p := scriptV2Params{
		Preamble:     opts.Preamble("tidb-server", "TiDB"),
		PeerService:  names.Peer(tc.Name, names.TiDB),
		Namespace:    tc.Namespace,
		DomainSuffix: ".svc",
		Discovery:    names.DiscoveryName(tc.Name) + "." + tc.Namespace + ".svc",
		PD:           component.DoubleQuoteClusterName(tikv.PDHostPorts(tc)),
		Host:         "0.0.0.0",
		Verify:       tc.Spec.AcrossK8s,
		Binlog:       db.BinlogEnabled != nil && *db.BinlogEnabled,
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
		p.Discovery += "." + d
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
	if err := startScriptV2.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("render TiDB's v2 start script: %w", err)
	}
	return buf.String(), nil
}
