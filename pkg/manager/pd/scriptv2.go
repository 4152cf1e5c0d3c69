package pd

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// startScripts are PD's start scripts; spec.startScriptVersion picks one.
var startScripts = component.StartScripts{V1: newStartScript, V2: newStartScriptV2}

// startScriptV2 is the v2 generation of PD's script: the cluster's names
// are written into it, the DNS wait follows the feature flags, and with
// PreferPDAddressesOverDiscovery and spec.pdAddresses a new member joins
// those addresses instead of asking discovery.
var startScriptV2 = template.Must(template.New("pd-v2").Parse(`{{.Preamble}}
POD_NAME=${POD_NAME:-$HOSTNAME}
FQDN="${POD_NAME}.{{.PeerService}}.{{.Namespace}}{{.DomainSuffix}}"
{{.Wait}}
DATA_DIR={{.DataDir}}
ARGS="--data-dir=${DATA_DIR} \
--name={{.MemberName}} \
--peer-urls={{.Scheme}}://0.0.0.0:2380 \
--advertise-peer-urls={{.Scheme}}://${FQDN}:2380 \
--client-urls={{.Scheme}}://0.0.0.0:2379 \
--advertise-client-urls={{.Scheme}}://${FQDN}:2379 \
--config=/etc/pd/pd.toml"
{{if .Join}}
# PreferPDAddressesOverDiscovery: join the PD members spec.pdAddresses lists.
ARGS="${ARGS} --join={{.Join}}"
{{- else}}
if [ -f "${DATA_DIR}/join" ]; then
  # A member that joined before restarts with the list it recorded.
  join=$(tr ',' '\n' < "${DATA_DIR}/join" | sed 's/^[^=]*=//' | paste -sd, -)
  ARGS="${ARGS} --join=${join}"
elif [ ! -d "${DATA_DIR}/member/wal" ]; then
  # A new member asks discovery: bootstrap (the last of the first batch) or join.
  encoded=$(printf '%s' "${FQDN}:2380" | base64 | tr -d '\n')
  until result=$(wget -qO- -T 3 "http://{{.Discovery}}:10261/new/${encoded}"); do
    echo "waiting for discovery to answer"
    sleep 2
  done
  ARGS="${ARGS} ${result}"
fi
{{- end}}

echo "starting pd-server ${ARGS}"
exec /pd-server ${ARGS}
`))

type scriptV2Params struct {
	Preamble, Wait, PeerService, Namespace, DomainSuffix string
	DataDir, MemberName, Scheme, Join, Discovery         string
}

// newStartScriptV2 renders PD's v2 start script for tc.
func newStartScriptV2(tc *v1alpha1.TidbCluster, opts component.ScriptV2) (string, error) {
	pd := tc.Spec.PD
	tls := tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
	p := scriptV2Params{
		Preamble:     opts.Preamble("pd-server", "PD"),
		PeerService:  names.Peer(tc.Name, names.PD),
		Namespace:    tc.Namespace,
		DomainSuffix: ".svc",
		DataDir:      dataDir(pd),
		MemberName:   "${POD_NAME}",
		Scheme:       names.Scheme(tls),
		Discovery:    names.DiscoveryName(tc.Name) + "." + tc.Namespace + ".svc",
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
		p.Discovery += "." + d
	}
	if tc.Spec.AcrossK8s || tc.Spec.ClusterDomain != "" {
		p.MemberName = "${FQDN}"
	}
	timeout := pd.StartTimeout
	if timeout <= 0 {
		timeout = 30
	}
	p.Wait = initWait(pd, opts) + opts.WaitFor(`"${FQDN}"`, component.LookupDig, timeout, false)
	if opts.PreferPDAddresses && len(tc.Spec.PDAddresses) > 0 {
		p.Join = joinAddresses(tc.Spec.PDAddresses, p.Scheme)
	}
	var buf bytes.Buffer
	if err := startScriptV2.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("render PD's v2 start script: %w", err)
	}
	return buf.String(), nil
}

// initWait is the pause spec.pd.initWaitTime asks of the wait for the
// pod's name to resolve to its own address (WaitForDnsNameIpMatch; v1.6
// also uses that wait for PD in micro-service mode, which we do not run):
// the TiDB Operator v1.6 renders the seconds into
// that wait only, where its "sleep initWaitTime" never expands them (the
// sleep fails and nothing waits); ours sleeps them, as the field says. ""
// otherwise, so that the script is unchanged without the field.
func initWait(pd *v1alpha1.PDSpec, opts component.ScriptV2) string {
	if pd.InitWaitTime <= 0 || opts.Wait != component.WaitIPMatch {
		return ""
	}
	return fmt.Sprintf("\n# spec.pd.initWaitTime: give the peers time to start first.\nsleep %d\n", pd.InitWaitTime)
}

// joinAddresses turns spec.pdAddresses into PD's --join list as the TiDB
// Operator's v2 script does: each address's host with the cluster's scheme
// and PD's peer port 2380. Characters the shell would read inside double
// quotes are escaped, so that an address cannot inject shell code.
func joinAddresses(addrs []string, scheme string) string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		host := a
		if _, rest, ok := strings.Cut(host, "://"); ok {
			host = rest
		}
		host, _, _ = strings.Cut(host, "/")
		if i := strings.LastIndex(host, ":"); i >= 0 && !strings.HasSuffix(host, "]") {
			host = host[:i]
		}
		out = append(out, fmt.Sprintf("%s://%s:2380", scheme, host))
	}
	return component.EscapeInDoubleQuotes(strings.Join(out, ","))
}
