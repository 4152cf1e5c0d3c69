package tikv

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// startScripts are TiKV's start scripts; spec.startScriptVersion picks one.
var startScripts = component.StartScripts{V1: newStartScript, V2: newStartScriptV2}

// startScriptV2 is the v2 generation of TiKV's script: the cluster's names
// are written into it, PD is named without a scheme, and with
// WaitForDnsNameIpMatch it first waits until the pod's own name resolves to
// one of its addresses.
var startScriptV2 = template.Must(template.New("tikv-v2").Parse(`{{.Preamble}}
POD_NAME=${POD_NAME:-$HOSTNAME}
FQDN="${POD_NAME}.{{.PeerService}}.{{.Namespace}}{{.DomainSuffix}}"
{{.Wait}}
PD={{.PD}}
{{- if .Verify}}
# Across Kubernetes clusters, discovery answers the PD endpoints to use.
encoded=$(printf '%s' "${PD}" | base64 | tr -d '\n')
until PD=$(wget -qO- -T 3 "http://{{.Discovery}}:10261/verify/${encoded}" | sed 's#[a-z]*://##g'); do
  echo "waiting for discovery to verify the PD endpoints"
  sleep 2
done
{{- end}}

ARGS="--pd=${PD} \
--advertise-addr=${FQDN}:20160 \
--addr={{.Bind}}:20160 \
--status-addr={{.Bind}}:20180 \
{{- if .AdvertiseStatus}}
--advertise-status-addr=${FQDN}:20180 \
{{- end}}
--data-dir={{.DataDir}} \
--capacity=${CAPACITY} \
--config=/etc/tikv/tikv.toml"

if [ -n "${STORE_LABELS:-}" ]; then
  ARGS="${ARGS} --labels ${STORE_LABELS}"
fi

echo "starting tikv-server ${ARGS}"
exec /tikv-server ${ARGS}
`))

type scriptV2Params struct {
	Preamble, Wait, PeerService, Namespace, DomainSuffix, Discovery string
	PD, Bind, DataDir                                               string
	Verify, AdvertiseStatus                                         bool
}

// newStartScriptV2 renders TiKV's v2 start script for tc.
func newStartScriptV2(tc *v1alpha1.TidbCluster, opts component.ScriptV2) (string, error) {
	p := scriptV2Params{
		Preamble:        opts.Preamble("tikv-server", "TiKV"),
		PeerService:     names.Peer(tc.Name, names.TiKV),
		Namespace:       tc.Namespace,
		DomainSuffix:    ".svc",
		Discovery:       names.DiscoveryName(tc.Name) + "." + tc.Namespace + ".svc",
		PD:              component.DoubleQuoteClusterName(PDHostPorts(tc)),
		Bind:            "0.0.0.0",
		DataDir:         component.EscapeInDoubleQuotes(dataDir(tc.Spec.TiKV)),
		Verify:          tc.Spec.AcrossK8s,
		AdvertiseStatus: tc.Spec.EnableDynamicConfiguration != nil && *tc.Spec.EnableDynamicConfiguration,
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
		p.Discovery += "." + d
	}
	if tc.Spec.PreferIPv6 {
		p.Bind = "[::]"
	}
	p.Wait = opts.WaitFor(`"${FQDN}"`, component.LookupGetent, 30, true)
	var buf bytes.Buffer
	if err := startScriptV2.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("render TiKV's v2 start script: %w", err)
	}
	return buf.String(), nil
}

// PDHostPorts is PDAddress as the v2 scripts write it: host:port pairs
// without a scheme, with the cluster's own name in place of
// ${CLUSTER_NAME}.
func PDHostPorts(tc *v1alpha1.TidbCluster) string {
	addrs := strings.Split(PDAddress(tc), ",")
	for i, a := range addrs {
		if _, rest, ok := strings.Cut(a, "://"); ok {
			a = rest
		}
		addrs[i] = strings.ReplaceAll(a, "${CLUSTER_NAME}", tc.Name)
	}
	return strings.Join(addrs, ",")
}
