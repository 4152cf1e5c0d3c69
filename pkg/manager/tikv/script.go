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

// startScript starts tikv-server: it finds PD (directly, or verified by the
// discovery service when the cluster spans Kubernetes clusters), then
// execs tikv-server with the pod's advertised address.
var startScript = template.Must(template.New("tikv").Parse(component.ScriptPreamble("tikv-server", "TiKV") + `
POD_NAME=${POD_NAME:-$HOSTNAME}
FQDN="${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}{{.DomainSuffix}}"
PD={{.PD}}
{{- if .Verify}}
# Across Kubernetes clusters, discovery answers the PD endpoints to use.
encoded=$(printf '%s' "${PD}" | base64 | tr -d '\n')
until PD=$(wget -qO- -T 3 "http://${CLUSTER_NAME}-discovery.${NAMESPACE}{{.DomainSuffix}}:10261/verify/${encoded}"); do
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

type scriptParams struct {
	DomainSuffix, PD, Bind, DataDir string
	Verify, AdvertiseStatus         bool
}

// newStartScript renders the start script for tc.
func newStartScript(tc *v1alpha1.TidbCluster) (string, error) {
	p := scriptParams{
		DomainSuffix:    ".svc",
		PD:              component.DoubleQuoteClusterName(PDAddress(tc)),
		Bind:            "0.0.0.0",
		DataDir:         component.EscapeInDoubleQuotes(dataDir(tc.Spec.TiKV)),
		Verify:          tc.Spec.AcrossK8s,
		AdvertiseStatus: tc.Spec.EnableDynamicConfiguration != nil && *tc.Spec.EnableDynamicConfiguration,
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
	}
	if tc.Spec.PreferIPv6 {
		p.Bind = "[::]"
	}
	var buf bytes.Buffer
	if err := startScript.Execute(&buf, p); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// PDAddress returns the PD endpoint(s) tc's TiKV and TiDB start against, as
// a URL list: "<scheme>://${CLUSTER_NAME}-pd:2379" for the cluster's own PD
// (the shell expands CLUSTER_NAME), the referenced cluster's PD Service for
// a heterogeneous cluster without PD, or spec.pdAddresses joined by commas.
func PDAddress(tc *v1alpha1.TidbCluster) string {
	scheme := names.Scheme(tlsEnabled(tc))
	if tc.Spec.PD != nil {
		return fmt.Sprintf("%s://${CLUSTER_NAME}-pd:2379", scheme)
	}
	if ref := tc.Spec.Cluster; ref != nil && ref.Name != "" {
		host := names.Member(ref.Name, names.PD)
		if ref.Namespace != "" && ref.Namespace != tc.Namespace || ref.ClusterDomain != "" {
			ns := ref.Namespace
			if ns == "" {
				ns = tc.Namespace
			}
			host = names.ServiceHost(host, ns, ref.ClusterDomain)
		}
		return fmt.Sprintf("%s://%s:2379", scheme, host)
	}
	if len(tc.Spec.PDAddresses) > 0 {
		return strings.Join(tc.Spec.PDAddresses, ",")
	}
	return fmt.Sprintf("%s://${CLUSTER_NAME}-pd:2379", scheme)
}

func dataDir(kv *v1alpha1.TiKVSpec) string {
	if kv.DataSubDir == "" {
		return dataDirRoot
	}
	return dataDirRoot + "/" + strings.Trim(kv.DataSubDir, "/")
}
