#!/usr/bin/env bash
# The try-out: a local control plane of its own (state dir and ports apart from `make local-up` and
# `make test`), the CRDs, tidb-controller-manager and the PD/TiKV/TiDB simulator running in the
# background, and examples/basic/tidb-cluster.yaml converging to Ready in namespace demo. The operator
# and the simulator watch every namespace, as the chart's default (cluster-scoped) install does, so a
# cluster applied to any other namespace is driven too.
#
# Usage: hack/demo.sh <command>
#   up      build, start everything (idempotent), apply examples/basic, follow it to Ready
#   tls     (after up) generate per-cluster certificate Secrets of a fresh CA for examples/tls, apply
#           it and follow it to Ready over HTTPS (the simulator serves each component with its Secret)
#   down    stop the demo's operator and simulator (by recorded PID) and the demo cluster
#   status  which demo processes run, and the cluster's objects
#   env     print 'export KUBECONFIG=...' for the demo cluster
#
# Environment (defaults in brackets):
#   KUBETIDB_DEMO_DIR [_output/demo]   logs/, pids/ and the cluster's state in cluster/
#   DEMO_APISERVER_PORT [7443]  DEMO_ETCD_PORT [3379] (and the 4 ports after it)
#   DEMO_SIM_PORT [8479]  DEMO_METRICS_PORT [6460]  DEMO_HEALTH_PORT [6461]  DEMO_TIMEOUT [600] seconds
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="${REPO_ROOT}/hack/demo.sh"
CLUSTER="${REPO_ROOT}/hack/local-cluster.sh"
DEMO_DIR="${KUBETIDB_DEMO_DIR:-${REPO_ROOT}/_output/demo}"
mkdir -p "${DEMO_DIR}"
DEMO_DIR="$(cd "${DEMO_DIR}" && pwd)"
NS=demo
SIM_PORT="${DEMO_SIM_PORT:-8479}"
METRICS_PORT="${DEMO_METRICS_PORT:-6460}"
HEALTH_PORT="${DEMO_HEALTH_PORT:-6461}"
TIMEOUT="${DEMO_TIMEOUT:-600}"
BIN_DIR="${REPO_ROOT}/_output/bin"
# The demo cluster: its own state dir and ports, so it never meets `make local-up` or `make test`.
export KUBETIDB_LOCAL_DIR="${DEMO_DIR}/cluster"
export KUBETIDB_APISERVER_PORT="${DEMO_APISERVER_PORT:-7443}"
export KUBETIDB_ETCD_PORT="${DEMO_ETCD_PORT:-3379}"
KUBECONFIG_FILE="${KUBETIDB_LOCAL_DIR}/kubeconfig"
unset KUBECONFIG

log_info() { echo "[demo $(date +%H:%M:%S)] $*" >&2; }
die() {
  echo "[demo] error: $*" >&2
  exit 1
}

# Process bookkeeping shared with the local cluster: pid files in ${STATE_DIR}/pids hold the PID,
# the binary and a string of the command line, so `down` never signals a reused PID.
STATE_DIR="${DEMO_DIR}"
# shellcheck source=hack/lib/local-procs.sh
source "${REPO_ROOT}/hack/lib/local-procs.sh"

kube() { "$("${CLUSTER}" bin-path kubectl)" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }

# start_proc runs a binary in its own session with a clean environment (plus extra VAR=value pairs)
# and records its PID. No-op when it already runs. Args: <name> <port> <env...> -- <binary> <args...>
start_proc() {
  local name="$1" port="$2" bin pid
  shift 2
  local -a envs=()
  while [[ "$1" != "--" ]]; do
    envs+=("$1")
    shift
  done
  shift
  bin="$(readlink -f "$1")"
  shift
  if is_running "${name}"; then
    log_info "${name} already runs (pid $(recorded_pid "${name}"))"
    return 0
  fi
  if port_in_use "${port}"; then
    die "port ${port} (${name}) is in use; pick another with the DEMO_*_PORT variables (ss -ltnp 'sport = :${port}')"
  fi
  setsid env -i PATH="/usr/local/bin:/usr/bin:/bin" HOME="${HOME}" "${envs[@]}" "${bin}" "$@" \
    >>"${DEMO_DIR}/logs/${name}.log" 2>&1 </dev/null &
  pid=$!
  printf '%s\n%s\n%s\n' "${pid}" "${bin}" "${DEMO_DIR}/" >"$(pid_file "${name}")"
  wait_exec "${name}" "${pid}" "${bin}"
  log_info "started ${name} (pid ${pid}, log ${DEMO_DIR#"${REPO_ROOT}"/}/logs/${name}.log)"
}

# die_exited fails with the tail of <name>'s log.
die_exited() {
  tail -n 20 "${DEMO_DIR}/logs/$1.log" >&2 || true
  die "$1 exited (log: ${DEMO_DIR}/logs/$1.log)"
}

# wait_exec waits, up to 10s, until <pid> runs <binary>. Right after `setsid env … <binary> &` the
# PID still runs bash, setsid or env until the last exec, so is_running (which compares
# /proc/<pid>/exe with the binary) must not be read as "exited" before then: only a PID that is
# gone or a zombie has exited. Args: <name> <pid> <binary>
wait_exec() {
  local name="$1" pid="$2" bin="$3" deadline=$((SECONDS + 10))
  until is_running "${name}"; do
    is_alive "${pid}" || die_exited "${name}"
    ((SECONDS < deadline)) || die "${name} (pid ${pid}) did not exec ${bin} within 10s; it runs $(readlink "/proc/${pid}/exe" 2>/dev/null || echo '?')"
    sleep 0.1
  done
}

# wait_http waits until a loopback URL answers 200, failing with the log's tail if <name> exits.
wait_http() {
  local name="$1" url="$2" deadline=$((SECONDS + 60))
  until curl -sf --max-time 2 --noproxy '*' "${url}" >/dev/null 2>&1; do
    # start_proc waited for the exec, so here a failing is_running means the process exited.
    is_running "${name}" || die_exited "${name}"
    ((SECONDS < deadline)) || die "${name} did not answer ${url} within 60s (log: ${DEMO_DIR}/logs/${name}.log)"
    sleep 0.5
  done
}

# wait_crds waits until the four CRDs are Established (kubectl wait fails while a fresh CRD has no
# conditions yet, so poll).
wait_crds() {
  local crd deadline=$((SECONDS + 60))
  for crd in tidbclusters backups restores backupschedules; do
    until [[ "$(kube get crd "${crd}.pingcap.com" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" == True ]]; do
      ((SECONDS < deadline)) || die "CRD ${crd}.pingcap.com not Established after 60s"
      sleep 0.5
    done
  done
}

# ready_line prints the Ready condition (status, reason, message) and the member counts of TidbCluster
# <name> [basic], with a leading "*" while the operator has not yet observed the latest generation.
ready_line() {
  local out gen seen
  out="$(kube -n "${NS}" get tc "${1:-basic}" -o jsonpath='{.metadata.generation} {.status.observedGeneration} {range .status.conditions[?(@.type=="Ready")]}{.status} {.reason}: {.message}{end} | PD {.status.pd.statefulSet.readyReplicas}/{.spec.pd.replicas} TiKV {.status.tikv.statefulSet.readyReplicas}/{.spec.tikv.replicas} TiDB {.status.tidb.statefulSet.readyReplicas}/{.spec.tidb.replicas}' 2>/dev/null)" || return 0
  read -r gen seen _ <<<"${out}"
  out="${out#* }"
  out="${out#* }"
  if [[ "${gen}" != "${seen}" ]]; then out="*${out}"; fi
  echo "${out}"
}

# follow_until_ready prints the Ready condition of TidbCluster <name> [basic] as it changes until it is True.
follow_until_ready() {
  local tc="${1:-basic}" line last="" start=${SECONDS}
  log_info "waiting for ${tc} to become Ready (up to ${TIMEOUT}s); the Ready condition as it changes:"
  while :; do
    line="$(ready_line "${tc}")"
    if [[ -n "${line}" && "${line}" != "${last}" ]]; then
      printf '  %4ds  %s\n' "$((SECONDS - start))" "${line}"
      last="${line}"
    fi
    [[ "${line}" == True* ]] && break
    if ((SECONDS - start > TIMEOUT)); then
      kube -n "${NS}" describe tc "${tc}" | tail -n 20 >&2 || true
      die "${tc} is not Ready after ${TIMEOUT}s; see ${DEMO_DIR}/logs/tidb-controller-manager.log"
    fi
    sleep 1
  done
  log_info "${tc} is Ready after $((SECONDS - start))s"
}

cmd_up() {
  local start=${SECONDS}
  mkdir -p "${DEMO_DIR}/logs" "${DEMO_DIR}/pids"
  log_info "building the binaries (make build)"
  make -s -C "${REPO_ROOT}" build >/dev/null
  log_info "starting the demo control plane (state ${KUBETIDB_LOCAL_DIR#"${REPO_ROOT}"/}, apiserver port ${KUBETIDB_APISERVER_PORT})"
  "${CLUSTER}" up >/dev/null
  kube apply -f "${REPO_ROOT}/manifests/crd.yaml" >/dev/null
  wait_crds
  kube create namespace "${NS}" --dry-run=client -o yaml | kube apply -f - >/dev/null

  # Both watch every namespace (cluster-scoped, the chart's default): `kubectl create ns x` and
  # applying examples/basic there works as in namespace demo. --namespace is the operator's own.
  start_proc tidb-simulator "${SIM_PORT}" -- "${BIN_DIR}/tidb-simulator" \
    --listen "127.0.0.1:${SIM_PORT}" --kubeconfig "${KUBECONFIG_FILE}"
  wait_http tidb-simulator "http://127.0.0.1:${SIM_PORT}/sim/v1/healthz"
  # The operator reaches PD, TiKV and TiDB through the simulator, its HTTP proxy, for https:// too
  # (CONNECT; TLS clusters are served with their own cert Secrets, see `hack/demo.sh tls`).
  start_proc tidb-controller-manager "${METRICS_PORT}" \
    HTTP_PROXY="http://127.0.0.1:${SIM_PORT}" HTTPS_PROXY="http://127.0.0.1:${SIM_PORT}" \
    NO_PROXY=127.0.0.1,localhost TZ=UTC -- \
    "${BIN_DIR}/tidb-controller-manager" --kubeconfig "${KUBECONFIG_FILE}" --namespace "${NS}" \
    --cluster-scoped=true --leader-elect=false --resync-duration=10s \
    --metrics-addr "127.0.0.1:${METRICS_PORT}" --health-addr "127.0.0.1:${HEALTH_PORT}" -v=2
  wait_http tidb-controller-manager "http://127.0.0.1:${HEALTH_PORT}/readyz"

  # Applied once: a second `make demo` must not revert the user's scaling or upgrade.
  if kube -n "${NS}" get tc basic >/dev/null 2>&1; then
    log_info "tidbcluster basic exists; not applying examples/basic again"
  else
    kube -n "${NS}" apply -f "${REPO_ROOT}/examples/basic/tidb-cluster.yaml"
  fi
  follow_until_ready
  echo
  kube -n "${NS}" get tc,sts,svc,pods
  print_next_steps "$((SECONDS - start))"
}

print_next_steps() {
  local rel_kc="${KUBECONFIG_FILE#"${REPO_ROOT}"/}"
  cat <<EOF

Demo up in ${1}s. Pods are KWOK fakes; PD, TiKV and TiDB are answered by the simulator.
  export KUBECONFIG=\$PWD/${rel_kc} && alias kubectl=\$(hack/local-cluster.sh bin-path kubectl)
  kubectl -n ${NS} describe tc basic                       # events and the Ready/Progressing/Degraded conditions
  kubectl -n ${NS} patch tc basic --type merge -p '{"spec":{"tikv":{"replicas":5}}}'   # scale TiKV out
  kubectl -n ${NS} patch tc basic --type merge -p '{"spec":{"version":"v8.5.1"}}'     # rolling upgrade
  kubectl -n ${NS} wait --for=condition=Ready tc/basic --timeout=5m
  kubectl create ns other && kubectl -n other apply -f examples/basic/tidb-cluster.yaml   # every namespace is watched
  curl -s http://127.0.0.1:${METRICS_PORT}/metrics | grep tidb_operator_             # operator metrics
  curl -s http://127.0.0.1:${SIM_PORT}/sim/v1/clusters/${NS}/basic                   # what the simulator plays
  logs: ${DEMO_DIR#"${REPO_ROOT}"/}/logs/          stop everything: make demo-down
EOF
}

# cmd_tls applies examples/tls with cert Secrets of a CA of its own (hack/tools/tls-secrets), created
# once, and follows it to Ready: the operator calls its PD over HTTPS with tls-cluster-client-secret and
# the simulator answers with tls-pd-cluster-secret and checks the client against its ca.crt.
cmd_tls() {
  if ! is_running tidb-controller-manager || ! is_running tidb-simulator; then
    die "the demo does not run; start it with: make demo"
  fi
  if kube -n "${NS}" get secret tls-cluster-client-secret >/dev/null 2>&1; then
    log_info "the Secrets of tls exist; not generating them again"
  else
    log_info "generating the cert Secrets of tls, signed by a fresh CA of its own"
    (cd "${REPO_ROOT}" && go run ./hack/tools/tls-secrets -namespace "${NS}" -cluster tls -components pd,tikv,tidb) |
      kube apply -f - >/dev/null
  fi
  kube -n "${NS}" apply -f "${REPO_ROOT}/examples/tls/tidb-cluster.yaml"
  follow_until_ready tls
  kube -n "${NS}" get tc tls
  log_info "requests the simulator served tls over HTTPS (by component), and plain ones it refused:"
  curl -s --noproxy '*' "http://127.0.0.1:${SIM_PORT}/sim/v1/clusters/${NS}/tls" | sed -n '/^  "tls": {/,/^  }/p' || true
}

cmd_down() {
  stop_component tidb-controller-manager
  stop_component tidb-simulator
  "${CLUSTER}" down
  rm -rf "${DEMO_DIR}/pids"
  log_info "demo stopped; logs kept in ${DEMO_DIR}/logs"
}

cmd_status() {
  local p rc=0
  for p in tidb-simulator tidb-controller-manager; do
    if is_running "${p}"; then
      printf '%-24s running (pid %s)\n' "${p}" "$(recorded_pid "${p}")"
    else
      printf '%-24s stopped\n' "${p}"
      rc=1
    fi
  done
  "${CLUSTER}" status || rc=1
  if [[ -f "${KUBECONFIG_FILE}" ]]; then kube get tc --all-namespaces 2>/dev/null || true; fi
  return "${rc}"
}

case "${1:-}" in
  up) cmd_up ;;
  tls) cmd_tls ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) echo "export KUBECONFIG=${KUBECONFIG_FILE}" ;;
  *)
    sed -n '2,/^set -euo/p' "${SELF}" | grep '^#' | sed 's/^# \{0,1\}//' >&2
    [[ -z "${1:-}" || "${1}" == help || "${1}" == -h ]] || die "unknown command '${1}'"
    ;;
esac
