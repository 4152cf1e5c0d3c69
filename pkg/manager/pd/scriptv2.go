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

// renderStartScript is PD's start script for tc: in micro-service mode
// always the v2 script, whose DNS wait then matches the pod's own address
// unless NoWaitDNS (as the TiDB Operator does); else the one
// spec.startScriptVersion picks.
func renderStartScript(tc *v1alpha1.TidbCluster) (string, error) {
	if !MicroServices(tc) {
		return startScripts.Render(tc)
	}
	opts := component.NewScriptV2(tc)
	if opts.Wait != component.WaitNone {
		opts.Wait = component.WaitIPMatch
	}
	return newStartScriptV2(tc, opts)
}

// MicroServices reports whether tc runs PD in micro-service mode: PD with
// spec.pd.mode "ms" and spec.pdms set, the TiDB Operator's condition. With
// only one of them PD runs as one service (and the Unsupported condition
// names the one that is set).
func MicroServices(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.PD != nil && tc.Spec.PD.Mode == ModeMicroServices && tc.Spec.PDMS != nil
}

// TSOAvailable returns "" when TiKV may start: PD runs as one service, or
// it runs its micro-services and the tso service, when spec.pdms has one,
// answered its health check (status.pdms.tso.healthy), as the TiDB Operator
// waits; else why TiKV waits.
func TSOAvailable(tc *v1alpha1.TidbCluster) string {
	if !MicroServices(tc) {
		return ""
	}
	for _, ms := range tc.Spec.PDMS {
		if ms == nil || ms.Name != names.TSO {
			continue
		}
		if st := tc.Status.PDMS[names.TSO]; st == nil || !st.Healthy {
			return "waiting for PD's tso micro-service to answer its health check"
		}
	}
	return ""
}

// ModeMicroServices is spec.pd.mode's micro-service mode.
const ModeMicroServices = "ms"

// startScriptV2 is the v2 generation of PD's script: the cluster's names
// are written into it, the DNS wait follows the feature flags, and with
// PreferPDAddressesOverDiscovery and spec.pdAddresses a new member joins
// those addresses instead of asking discovery.
var startScriptV2 = template.Must(template.New("pd-v2").Parse(`{{.Preamble}}
POD_NAME=${POD_NAME:-$HOSTNAME}
FQDN="${POD_NAME}.{{.PeerService}}.{{.Namespace}}{{.DomainSuffix}}"
{{.Wait}}
DATA_DIR={{.DataDir}}
ARGS="{{.Services}}--data-dir=${DATA_DIR} \
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
	Preamble, Wait, PeerService, Namespace, DomainSuffix, Services string
	DataDir, MemberName, Scheme, Join, Discovery                   string
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
	if MicroServices(tc) {
		// PD as the API service of its micro-services (spec pd-microservices §4).
		p.Services = "services api "
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
// pod's name to resolve to its own address (WaitForDnsNameIpMatch, and PD
// in micro-service mode unless NoWaitDNS):
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
