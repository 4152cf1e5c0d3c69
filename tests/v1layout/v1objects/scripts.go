package v1objects

// v1Preamble is how v1.6's start scripts open (spec §3.5): source the pod's
// annotations, idle in debug mode, default POD_NAME to the host name.
const v1Preamble = `#!/bin/sh
# Start script in the layout of the TiDB Operator v1 (written for the takeover test).
set -uo pipefail
PODINFO="/etc/podinfo/annotations"
if [[ ! -f "${PODINFO}" ]]
then
    echo "${PODINFO} is missing"
    exit 1
fi
source ${PODINFO} 2>/dev/null
runmode=${runmode:-normal}
if [[ X${runmode} == Xdebug ]]
then
    echo "debug mode: idling"
    tail -f /dev/null
fi
POD_NAME=${POD_NAME:-$HOSTNAME}
`

// v1StartScripts are start scripts laid out as v1.6 renders them for
// examples/basic: the same server command lines as ours, in other words.
var v1StartScripts = map[string]string{
	"pd": v1Preamble + `cluster=` + "`echo ${PEER_SERVICE_NAME} | sed 's/-pd-peer//'`" + `
domain="${POD_NAME}.${PEER_SERVICE_NAME}.${NAMESPACE}.svc"
disc="${cluster}-discovery.${NAMESPACE}.svc:10261"
encoded=` + "`echo ${domain}:2380 | base64 | tr \"\\n\" \" \" | sed \"s/ //g\"`" + `
waited=0
while true; do
sleep 1
waited=$(( waited+1 ))
if [[ ${waited} -ge 30 ]]
then
echo "${domain} did not resolve" >&2
exit 1
fi
if nslookup ${domain} 2>/dev/null
then
break
fi
done

ARGS="--data-dir=/var/lib/pd \
--name=${POD_NAME} \
--peer-urls=http://0.0.0.0:2380 \
--advertise-peer-urls=http://${domain}:2380 \
--client-urls=http://0.0.0.0:2379 \
--advertise-client-urls=http://${domain}:2379 \
--config=/etc/pd/pd.toml \
"

if [[ -f /var/lib/pd/join ]]
then
join=` + "`cat /var/lib/pd/join | tr \",\" \"\\n\" | awk -F'=' '{print $2}' | tr \"\\n\" \",\"`" + `
join=${join%,}
ARGS="${ARGS} --join=${join}"
elif [[ ! -d /var/lib/pd/member/wal ]]
then
until result=$(wget -qO- -T 3 http://${disc}/new/${encoded} 2>/dev/null); do
echo "discovery has no answer yet"
sleep $((RANDOM % 5))
done
ARGS="${ARGS}${result}"
fi

sleep $((RANDOM % 10))
echo "/pd-server ${ARGS}"
exec /pd-server ${ARGS}
`,
	"tikv": v1Preamble + `
ARGS="--pd=http://${CLUSTER_NAME}-pd:2379 \
--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:20160 \
--addr=0.0.0.0:20160 \
--status-addr=0.0.0.0:20180 \
--advertise-status-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:20180 \
--data-dir=/var/lib/tikv \
--capacity=${CAPACITY} \
--config=/etc/tikv/tikv.toml
"

if [ ! -z "${STORE_LABELS:-}" ]; then
  LABELS=" --labels ${STORE_LABELS} "
  ARGS="${ARGS}${LABELS}"
fi

echo "/tikv-server ${ARGS}"
exec /tikv-server ${ARGS}
`,
	"tidb": v1Preamble + `
ARGS="--store=tikv \
--advertise-address=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc \
--host=0.0.0.0 \
--path=${CLUSTER_NAME}-pd:2379 \
--config=/etc/tidb/tidb.toml
"

if [[ X${BINLOG_ENABLED:-} == Xtrue ]]
then
    ARGS="${ARGS} --enable-binlog=true"
fi

SLOW_LOG_FILE=${SLOW_LOG_FILE:-""}
if [[ ! -z "${SLOW_LOG_FILE}" ]]
then
    ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE:-}"
fi

echo "/tidb-server ${ARGS}"
exec /tidb-server ${ARGS}
`,
	// v1.6 renders the namespace into TiProxy's advertised address.
	"tiproxy": v1Preamble + `TIPROXY_POD_NAME=${POD_NAME:-$HOSTNAME}
ARGS="--config=/etc/proxy/proxy.toml"
if [[ "$(/bin/tiproxy --help)" == *"advertise-addr"* ]]; then
  ARGS="${ARGS} --advertise-addr=${TIPROXY_POD_NAME}.basic-tiproxy-peer.{{namespace}}.svc"
fi

echo "starting: tiproxy ${ARGS}"
exec /bin/tiproxy ${ARGS}
`,
}
