package dmmaster

import (
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// ScriptPreamble is how every DM start script begins: the downward-API
// annotations must exist and are sourced, and runmode=debug keeps the
// container idle instead of starting the server named what.
func ScriptPreamble(what string) string {
	return `#!/bin/sh
# Start script of ` + what + `, written by the operator into the component's ConfigMap.
set -uo pipefail

ANNOTATIONS="/etc/podinfo/annotations"
if [ ! -f "${ANNOTATIONS}" ]; then
    echo "${ANNOTATIONS} is missing; exiting"
    exit 1
fi
. "${ANNOTATIONS}" 2>/dev/null
if [ "${runmode:-normal}" = "debug" ]; then
    echo "runmode=debug: not starting ` + what + `"
    tail -f /dev/null
fi

POD_NAME=${POD_NAME:-$HOSTNAME}
`
}

// startUpWait is how long the script waits for the pod's own name to resolve.
const startUpWaitSeconds = "30"

// newStartScript is dm-master's start script (spec dm.md §4): wait for the
// pod's peer name to resolve (nslookup, or dig with startUpScriptVersion
// v1), then start with the join list of a previous run's join file, the
// discovery's answer on a first start, or nothing on existing data.
func newStartScript(dc *v1alpha1.DMCluster) string {
	ms := &dc.Spec.Master
	lookup := `nslookup "${DOMAIN}" >/dev/null 2>&1`
	if ms.StartUpScriptVersion == "v1" {
		lookup = `[ -n "$(dig "${DOMAIN}" A "${DOMAIN}" AAAA +search +short)" ]`
	}
	data := dataDir
	if ms.DataSubDir != "" {
		data += "/" + ms.DataSubDir
	}
	scheme := names.Scheme(TLSEnabled(dc))
	r := strings.NewReplacer("{{lookup}}", lookup, "{{data}}", data, "{{scheme}}", scheme,
		"{{wait}}", startUpWaitSeconds, "{{config}}", configDir+"/"+configFile)
	return ScriptPreamble("dm-master") + r.Replace(masterScript)
}

const masterScript = `CLUSTER_NAME=${PEER_SERVICE_NAME%-dm-master-peer}
DOMAIN="${POD_NAME}.${PEER_SERVICE_NAME}"
DISCOVERY_URL="${CLUSTER_NAME}-dm-discovery.${NAMESPACE}:10261"
ENCODED_DOMAIN=$(printf '%s' "${DOMAIN}:8291" | base64 | tr -d '\n')

elapsed=0
until {{lookup}}; do
    elapsed=$((elapsed + 1))
    if [ "${elapsed}" -ge {{wait}} ]; then
        echo "waiting for dm-master cluster ready timeout"
        exit 1
    fi
    echo "waiting for ${DOMAIN} to resolve (${elapsed}s)"
    sleep 1
done

DATA_DIR={{data}}
ARGS="--data-dir=${DATA_DIR} \
--name=${POD_NAME} \
--peer-urls={{scheme}}://0.0.0.0:8291 \
--advertise-peer-urls={{scheme}}://${DOMAIN}:8291 \
--master-addr=:8261 \
--advertise-addr=${DOMAIN}:8261 \
--config={{config}}"

if [ -f "${DATA_DIR}/join" ]; then
    # name=peerURL,... of a previous run, joined through the members' client ports.
    JOIN=$(sed -e 's/8291/8261/g' "${DATA_DIR}/join" | awk -F, '{for (i = 1; i <= NF; i++) {split($i, kv, "="); printf "%s%s", (i > 1 ? "," : ""), kv[2]}}')
    ARGS="${ARGS} --join=${JOIN}"
elif [ ! -d "${DATA_DIR}/member/wal" ]; then
    until RESULT=$(wget -qO- -T 3 "http://${DISCOVERY_URL}/new/${ENCODED_DOMAIN}/dm" 2>/dev/null); do
        echo "waiting for the discovery service to answer"
        sleep $((RANDOM % 5))
    done
    ARGS="${ARGS} ${RESULT}"
fi

sleep $((RANDOM % 10))
echo "starting dm-master ${ARGS}"
exec /dm-master ${ARGS}
`
