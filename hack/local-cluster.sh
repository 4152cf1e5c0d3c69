#!/usr/bin/env bash
# A real local Kubernetes control plane for development and integration tests: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and KWOK (fake nodes whose pods go Ready and whose PVCs bind),
# all on 127.0.0.1, built from the Go module proxy into a versioned cache. See docs/development.md.
#
# Usage: hack/local-cluster.sh <command>
#   up          build what is missing, start the cluster (no-op when it already runs), print KUBECONFIG
#   down        stop the processes this state dir started (by recorded PID) and remove the state dir
#   status      which processes run and whether the apiserver is ready (exit 1 when not fully up)
#   env         print 'export KUBECONFIG=...' for a running cluster
#   build       only build the binaries into the cache (CI warms the cache with it)
#   build-helm  build helm too
#   bin-dir     print the directory of the cached Kubernetes binaries (kubectl, kube-apiserver, ...)
#   bin-path X  print the cached path of binary X (kubectl, etcd, kwok, helm, kube-apiserver, ...)
#
# Environment (defaults in brackets):
#   KUBETIDB_LOCAL_DIR [_output/local]   state: pki, pids, logs, etcd data, kubeconfig
#   KUBETIDB_CACHE_DIR [${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb]   built binaries, wrapper modules
#   KUBETIDB_APISERVER_PORT [6443]  KUBETIDB_ETCD_PORT [2379]  and, derived from the etcd port:
#   KUBETIDB_ETCD_PEER_PORT [+1]  KUBETIDB_KCM_PORT [+2]  KUBETIDB_SCHEDULER_PORT [+3]  KUBETIDB_KWOK_PORT [+4]
#   KUBETIDB_NODES [3]  KUBETIDB_NODE_CPU [32]  KUBETIDB_NODE_MEMORY [256Gi]  KUBETIDB_NODE_PODS [1000]
#   KUBETIDB_WITH_HELM [0]  KUBETIDB_K8S_VERSION [v1.36.3]  KUBETIDB_OWNER_PID (stop the cluster when it exits)
#   KUBETIDB_AUDIT_POLICY [unset]  an audit Policy file: kube-apiserver then writes JSON audit events to
#     ${STATE_DIR}/audit.log. The policy is copied into the state dir, so a restarted apiserver keeps it.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="${REPO_ROOT}/hack/local-cluster.sh"
K8S_VERSION="${KUBETIDB_K8S_VERSION:-v1.36.3}"
ETCD_VERSION="v3.5.21"
KWOK_VERSION="v0.8.0"
HELM_VERSION="v3.19.5"
CACHE_DIR="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/kubetidb}"
STATE_DIR="${KUBETIDB_LOCAL_DIR:-${REPO_ROOT}/_output/local}"
mkdir -p "$(dirname "${STATE_DIR}")"
STATE_DIR="$(cd "$(dirname "${STATE_DIR}")" && pwd)/$(basename "${STATE_DIR}")"
KUBECONFIG_FILE="${STATE_DIR}/kubeconfig"
MARKER="${STATE_DIR}/.kubetidb-local-cluster"
# Components in start order; `down` stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# Nothing below may read a user's kubeconfig by accident: every kubectl call names ours.
unset KUBECONFIG

log_info() { echo "[local-cluster $(date +%H:%M:%S)] $*" >&2; }
die() {
  echo "[local-cluster] error: $*" >&2
  exit 1
}

# shellcheck source=hack/lib/local-build.sh
source "${REPO_ROOT}/hack/lib/local-build.sh"
# shellcheck source=hack/lib/local-pki.sh
source "${REPO_ROOT}/hack/lib/local-pki.sh"
# shellcheck source=hack/lib/local-procs.sh
source "${REPO_ROOT}/hack/lib/local-procs.sh"

# load_config fixes ports and node shape: from ${STATE_DIR}/config.env while any process of this state
# dir runs (so status and a second up see the ports in use whatever the caller's environment), else
# from the environment (so a failed start can be retried with other ports).
load_config() {
  if [[ -f "${STATE_DIR}/config.env" ]] && any_running; then
    # shellcheck source=/dev/null
    source "${STATE_DIR}/config.env"
    if [[ "${KUBETIDB_APISERVER_PORT:-${APISERVER_PORT}}" != "${APISERVER_PORT}" || "${KUBETIDB_ETCD_PORT:-${ETCD_PORT}}" != "${ETCD_PORT}" ]]; then
      log_info "note: ${STATE_DIR} already runs on apiserver ${APISERVER_PORT}, etcd ${ETCD_PORT}; 'down' first to change ports"
    fi
    return 0
  fi
  APISERVER_PORT="${KUBETIDB_APISERVER_PORT:-6443}"
  ETCD_PORT="${KUBETIDB_ETCD_PORT:-2379}"
  ETCD_PEER_PORT="${KUBETIDB_ETCD_PEER_PORT:-$((ETCD_PORT + 1))}"
  KCM_PORT="${KUBETIDB_KCM_PORT:-$((ETCD_PORT + 2))}"
  SCHEDULER_PORT="${KUBETIDB_SCHEDULER_PORT:-$((ETCD_PORT + 3))}"
  KWOK_PORT="${KUBETIDB_KWOK_PORT:-$((ETCD_PORT + 4))}"
  NODES="${KUBETIDB_NODES:-3}"
  NODE_CPU="${KUBETIDB_NODE_CPU:-32}"
  NODE_MEMORY="${KUBETIDB_NODE_MEMORY:-256Gi}"
  NODE_PODS="${KUBETIDB_NODE_PODS:-1000}"
}

save_config() {
  local v
  for v in APISERVER_PORT ETCD_PORT ETCD_PEER_PORT KCM_PORT SCHEDULER_PORT KWOK_PORT NODES NODE_CPU NODE_MEMORY NODE_PODS; do
    [[ "${!v}" =~ ^[0-9A-Za-z]+$ ]] || die "${v}='${!v}' is not a plain number/quantity"
    echo "${v}=${!v}"
  done >"${STATE_DIR}/config.env"
}

# preflight_ports checks every port a not-yet-running component needs before anything starts, so a
# conflict never leaves a half-started cluster behind.
preflight_ports() {
  local spec name port var
  for spec in "etcd ${ETCD_PORT} KUBETIDB_ETCD_PORT" "etcd ${ETCD_PEER_PORT} KUBETIDB_ETCD_PEER_PORT" \
    "kube-apiserver ${APISERVER_PORT} KUBETIDB_APISERVER_PORT" "kube-controller-manager ${KCM_PORT} KUBETIDB_KCM_PORT" \
    "kube-scheduler ${SCHEDULER_PORT} KUBETIDB_SCHEDULER_PORT" "kwok ${KWOK_PORT} KUBETIDB_KWOK_PORT"; do
    read -r name port var <<<"${spec}"
    if ! is_running "${name}" && port_in_use "${port}"; then
      die "port ${port} on 127.0.0.1 (${name}) is already in use; set ${var} to a free port, or stop what listens there (ss -ltnp 'sport = :${port}')"
    fi
  done
}

kubectl_local() { "$(bin_path kubectl)" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }

apiserver_ready() {
  curl -sf --max-time 2 --cacert "$(PKI_DIR)/ca.crt" --cert "$(PKI_DIR)/admin.crt" --key "$(PKI_DIR)/admin.key" \
    "https://127.0.0.1:${APISERVER_PORT}/readyz" >/dev/null 2>&1
}

print_env_hint() {
  echo "export KUBECONFIG=${KUBECONFIG_FILE}"
}

start_etcd() {
  start_component etcd "${ETCD_PORT}" KUBETIDB_ETCD_PORT "$(bin_path etcd)" \
    --name=kubetidb --data-dir="${STATE_DIR}/etcd" \
    --listen-client-urls="http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls="http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster="kubetidb=http://127.0.0.1:${ETCD_PEER_PORT}" --unsafe-no-fsync=true \
    --quota-backend-bytes=8589934592 --logger=zap --log-level=warn
  wait_until etcd 30 curl -sf --max-time 2 "http://127.0.0.1:${ETCD_PORT}/health"
}

# setup_audit copies KUBETIDB_AUDIT_POLICY into the state dir; start_apiserver audits when the copy exists.
setup_audit() {
  [[ -n "${KUBETIDB_AUDIT_POLICY:-}" ]] || return 0
  [[ -f "${KUBETIDB_AUDIT_POLICY}" ]] || die "KUBETIDB_AUDIT_POLICY=${KUBETIDB_AUDIT_POLICY} is not a file"
  cp "${KUBETIDB_AUDIT_POLICY}" "${STATE_DIR}/audit-policy.yaml"
}

start_apiserver() {
  local pki audit=()
  pki="$(PKI_DIR)"
  if [[ -f "${STATE_DIR}/audit-policy.yaml" ]]; then
    audit=(--audit-policy-file="${STATE_DIR}/audit-policy.yaml" --audit-log-path="${STATE_DIR}/audit.log" --audit-log-format=json)
  fi
  start_component kube-apiserver "${APISERVER_PORT}" KUBETIDB_APISERVER_PORT "$(bin_path kube-apiserver)" \
    --etcd-servers="http://127.0.0.1:${ETCD_PORT}" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
    --secure-port="${APISERVER_PORT}" --tls-cert-file="${pki}/apiserver.crt" --tls-private-key-file="${pki}/apiserver.key" \
    --client-ca-file="${pki}/ca.crt" --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="${pki}/sa.pub" --service-account-signing-key-file="${pki}/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --allow-privileged=true \
    --enable-admission-plugins=OwnerReferencesPermissionEnforcement \
    --endpoint-reconciler-type=none --requestheader-client-ca-file="${pki}/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="${pki}/front-proxy-client.crt" --proxy-client-key-file="${pki}/front-proxy-client.key" \
    --max-requests-inflight=1000 --max-mutating-requests-inflight=500 --profiling=false "${audit[@]}"
  wait_until kube-apiserver 90 apiserver_ready
}

start_controllers() {
  local pki kc="${KUBECONFIG_FILE}"
  pki="$(PKI_DIR)"
  start_component kube-controller-manager "${KCM_PORT}" KUBETIDB_KCM_PORT "$(bin_path kube-controller-manager)" \
    --kubeconfig="${kc}" --authentication-kubeconfig="${kc}" --authorization-kubeconfig="${kc}" \
    --bind-address=127.0.0.1 --secure-port="${KCM_PORT}" --leader-elect=false --root-ca-file="${pki}/ca.crt" \
    --service-account-private-key-file="${pki}/sa.key" --cluster-signing-cert-file="${pki}/ca.crt" \
    --cluster-signing-key-file="${pki}/ca.key" --kube-api-qps=100 --kube-api-burst=200 --profiling=false
  start_component kube-scheduler "${SCHEDULER_PORT}" KUBETIDB_SCHEDULER_PORT "$(bin_path kube-scheduler)" \
    --kubeconfig="${kc}" --authentication-kubeconfig="${kc}" --authorization-kubeconfig="${kc}" \
    --bind-address=127.0.0.1 --secure-port="${SCHEDULER_PORT}" --leader-elect=false --profiling=false
  start_component kwok "${KWOK_PORT}" KUBETIDB_KWOK_PORT "$(bin_path kwok)" \
    --kubeconfig="${kc}" --config="${STATE_DIR}/kwok.yaml" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-ip=127.0.0.1 \
    --cidr=10.244.0.1/16 --server-address="127.0.0.1:${KWOK_PORT}" --node-lease-duration-seconds=40
  wait_until kube-controller-manager 60 curl -skf --max-time 2 "https://127.0.0.1:${KCM_PORT}/healthz"
  wait_until kube-scheduler 60 curl -skf --max-time 2 "https://127.0.0.1:${SCHEDULER_PORT}/healthz"
  wait_until kwok 60 curl -sf --max-time 2 "http://127.0.0.1:${KWOK_PORT}/healthz"
}

# ready_nodes prints how many nodes report Ready=True.
ready_nodes() {
  kubectl_local get nodes -o jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="Ready")]}{.status}{"\n"}{end}{end}' 2>/dev/null |
    grep -c '^True$' || true
}

# setup_cluster_objects applies the default StorageClass and the fake nodes, then waits until the
# nodes are Ready and the default ServiceAccount exists (pods cannot be created before it does).
setup_cluster_objects() {
  kubectl_local apply -f "${STATE_DIR}/storage-class.yaml" >/dev/null
  nodes_yaml | kubectl_local apply -f - >/dev/null
  wait_until "${NODES} Ready nodes" 60 test_ready_nodes
  wait_until "default ServiceAccount" 60 kubectl_local -n default get serviceaccount default
}
test_ready_nodes() { (($(ready_nodes) >= NODES)); }

cmd_up() {
  local start=${SECONDS}
  mkdir -p "${STATE_DIR}"
  load_config
  if all_running && apiserver_ready; then
    log_info "already up (state ${STATE_DIR})"
    print_env_hint
    return 0
  fi
  # Checked before a possibly long build, not after it.
  command -v curl >/dev/null || die "curl is not installed: run 'apt-get install -y curl'"
  command -v openssl >/dev/null || die "openssl is not installed: run 'apt-get install -y openssl'"
  build_all
  touch "${MARKER}"
  mkdir -p "${STATE_DIR}/logs" "${STATE_DIR}/pids"
  save_config
  preflight_ports
  ensure_pki
  write_kubeconfig
  write_kwok_config
  setup_audit
  start_etcd
  start_apiserver
  start_controllers
  setup_cluster_objects
  if [[ -n "${KUBETIDB_OWNER_PID:-}" ]]; then start_watchdog "${KUBETIDB_OWNER_PID}"; fi
  log_info "up in $((SECONDS - start))s: Kubernetes ${K8S_VERSION}, ${NODES} KWOK nodes, apiserver https://127.0.0.1:${APISERVER_PORT}, logs in ${STATE_DIR}/logs"
  print_env_hint
}

cmd_down() {
  if [[ ! -f "${MARKER}" ]]; then
    log_info "no local cluster state in ${STATE_DIR}; nothing to stop"
    return 0
  fi
  local i
  for i in watchdog $(printf '%s\n' "${COMPONENTS[@]}" | tac); do
    stop_component "${i}"
  done
  # The marker proves the directory is ours, so removing it cannot delete anything else.
  rm -rf "${STATE_DIR}"
  log_info "stopped; removed ${STATE_DIR}"
}

cmd_status() {
  if [[ ! -f "${MARKER}" ]]; then
    echo "no local cluster in ${STATE_DIR}"
    return 1
  fi
  load_config
  local c up=0
  for c in "${COMPONENTS[@]}"; do
    if is_running "${c}"; then
      printf '%-24s running (pid %s)\n' "${c}" "$(recorded_pid "${c}")"
    else
      printf '%-24s stopped\n' "${c}"
      up=1
    fi
  done
  if apiserver_ready; then
    echo "apiserver https://127.0.0.1:${APISERVER_PORT} ready; $(ready_nodes)/${NODES} nodes Ready"
    print_env_hint
  else
    echo "apiserver https://127.0.0.1:${APISERVER_PORT} not ready"
    up=1
  fi
  return "${up}"
}

cmd_env() {
  [[ -f "${KUBECONFIG_FILE}" ]] || die "no local cluster in ${STATE_DIR}; run 'make local-up' first"
  print_env_hint
}

main() {
  local cmd="${1:-}"
  case "${cmd}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) cmd_env ;;
    build) build_all ;;
    build-helm) KUBETIDB_WITH_HELM=1 build_all ;;
    bin-dir) k8s_bin_dir ;;
    bin-path) bin_path "${2:?usage: $0 bin-path <name>}" ;;
    watchdog) run_watchdog "${2:?usage: $0 watchdog <owner pid>}" ;;
    *)
      sed -n '2,/^set -euo/p' "${SELF}" | grep '^#' | sed 's/^# \{0,1\}//' >&2
      [[ -z "${cmd}" || "${cmd}" == help || "${cmd}" == -h ]] || die "unknown command '${cmd}'"
      ;;
  esac
}

main "$@"
