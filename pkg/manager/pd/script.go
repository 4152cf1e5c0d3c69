package pd

import (
	"bytes"
	"strings"
	"text/template"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// startScript starts pd-server: it waits until the pod's DNS name resolves,
// then starts from existing data, from a recorded join list, or asks the
// cluster's discovery service whether to bootstrap or join.
var startScript = template.Must(template.New("pd").Parse(component.ScriptPreamble("pd-server", "PD") + `
POD_NAME=${POD_NAME:-$HOSTNAME}
CLUSTER_NAME=${PEER_SERVICE_NAME%-pd-peer}
FQDN="${POD_NAME}.${PEER_SERVICE_NAME}.${NAMESPACE}{{.DomainSuffix}}"

elapsed=0
until {{.Resolver}} "$FQDN" >/dev/null 2>&1; do
  elapsed=$((elapsed + 1))
  if [ "$elapsed" -gt {{.StartTimeout}} ]; then
    echo "$FQDN did not resolve within {{.StartTimeout}}s" >&2
    exit 1
  fi
  sleep 1
done

DATA_DIR={{.DataDir}}
ARGS="--data-dir=${DATA_DIR} \
--name={{.MemberName}} \
--peer-urls={{.Scheme}}://0.0.0.0:2380 \
--advertise-peer-urls={{.Scheme}}://${FQDN}:2380 \
--client-urls={{.Scheme}}://0.0.0.0:2379 \
--advertise-client-urls={{.Scheme}}://${FQDN}:2379 \
--config=/etc/pd/pd.toml"

if [ -f "${DATA_DIR}/join" ]; then
  # A member that joined before restarts with the list it recorded.
  join=$(tr ',' '\n' < "${DATA_DIR}/join" | sed 's/^[^=]*=//' | paste -sd, -)
  ARGS="${ARGS} --join=${join}"
elif [ ! -d "${DATA_DIR}/member/wal" ]; then
  # A new member asks discovery: bootstrap (the last of the first batch) or join.
  encoded=$(printf '%s' "${FQDN}:2380" | base64 | tr -d '\n')
  until result=$(wget -qO- -T 3 "http://${CLUSTER_NAME}-discovery.${NAMESPACE}.svc{{.DomainTail}}:10261/new/${encoded}"); do
    echo "waiting for discovery to answer"
    sleep 2
  done
  ARGS="${ARGS} ${result}"
fi

echo "starting pd-server ${ARGS}"
exec /pd-server ${ARGS}
`))

type scriptParams struct {
	DomainSuffix, DomainTail, Resolver, DataDir, MemberName, Scheme string
	StartTimeout                                                    int
}

// newStartScript renders the start script for tc.
func newStartScript(tc *v1alpha1.TidbCluster) (string, error) {
	pd := tc.Spec.PD
	p := scriptParams{
		DomainSuffix: ".svc",
		Resolver:     "nslookup",
		DataDir:      dataDir(pd),
		MemberName:   "${POD_NAME}",
		Scheme:       names.Scheme(tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled),
		StartTimeout: pd.StartTimeout,
	}
	if p.StartTimeout <= 0 {
		p.StartTimeout = 30
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix, p.DomainTail = ".svc."+d, "."+d
	}
	if tc.Spec.AcrossK8s || tc.Spec.ClusterDomain != "" {
		p.MemberName = "${FQDN}"
	}
	if pd.StartUpScriptVersion == "v1" {
		p.Resolver = "dig +short"
	}
	var buf bytes.Buffer
	if err := startScript.Execute(&buf, p); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func dataDir(pd *v1alpha1.PDSpec) string {
	if pd.DataSubDir == "" {
		return pdDataDir
	}
	return pdDataDir + "/" + strings.Trim(pd.DataSubDir, "/")
}
