#!/usr/bin/env bash
# Runs the integration tests (./tests/..., build tag `integration`) against a private local control
# plane: builds the binaries if missing, starts a cluster on free non-default ports with its own
# state dir, runs `go test`, always stops the cluster, and exits with go test's exit code.
#
# Environment:
#   KUBETIDB_LOCAL_DIR  state dir of the test cluster [_output/test-cluster-<pid>]
#   TEST_PKGS           packages to test [./tests/... but tests/privilege, which then runs last and
#                       checks what the operator's ServiceAccounts sent, from the API server's audit log]
#   TEST_ARGS, GO_TEST_FLAGS  extra `go test` flags, e.g. TEST_ARGS='-run TestJobCompletes -v'
#   KUBETIDB_TEST_KEEP_CLUSTER=1  leave the cluster running afterwards (prints how to stop it)
# On failure the cluster's logs are kept in _output/test-logs/.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}"
CLUSTER="${REPO_ROOT}/hack/local-cluster.sh"

log() { echo "[test-integration $(date +%H:%M:%S)] $*" >&2; }

# A per-run state dir, so two runs in the same checkout (e.g. two developers, or a run next to
# `make local-up`) never share or stop each other's clusters.
export KUBETIDB_LOCAL_DIR="${KUBETIDB_LOCAL_DIR:-${REPO_ROOT}/_output/test-cluster-$$}"

# port_free succeeds when nothing accepts connections on 127.0.0.1:<port>.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_ports exports a block of 6 consecutive free ports in 20000-29999 for the test cluster, away
# from the defaults (6443, 2379-2383) that `make local-up` uses.
pick_ports() {
  local base p ok attempt
  for ((attempt = 0; attempt < 50; attempt++)); do
    base=$((20000 + ((RANDOM * 32768 + RANDOM + $$) % 1600) * 6))
    ok=1
    for ((p = base; p < base + 6; p++)); do
      port_free "${p}" || ok=0
    done
    if ((ok)); then
      export KUBETIDB_APISERVER_PORT="${base}" KUBETIDB_ETCD_PORT=$((base + 1))
      export KUBETIDB_ETCD_PEER_PORT=$((base + 2)) KUBETIDB_KCM_PORT=$((base + 3))
      export KUBETIDB_SCHEDULER_PORT=$((base + 4)) KUBETIDB_KWOK_PORT=$((base + 5))
      return 0
    fi
  done
  log "error: found no 6 free consecutive ports in 20000-29999"
  return 1
}

status=0
# cleanup runs from the EXIT trap: keep logs of a failed run, then stop the cluster.
# shellcheck disable=SC2317
cleanup() {
  if ((status != 0)) && [[ -d "${KUBETIDB_LOCAL_DIR}/logs" ]]; then
    rm -rf "${REPO_ROOT}/_output/test-logs"
    mkdir -p "${REPO_ROOT}/_output"
    cp -r "${KUBETIDB_LOCAL_DIR}/logs" "${REPO_ROOT}/_output/test-logs"
    log "control-plane logs kept in _output/test-logs/"
  fi
  if [[ "${KUBETIDB_TEST_KEEP_CLUSTER:-0}" == 1 ]]; then
    log "keeping the cluster: KUBECONFIG=${KUBETIDB_LOCAL_DIR}/kubeconfig; stop it with KUBETIDB_LOCAL_DIR=${KUBETIDB_LOCAL_DIR} ${CLUSTER} down"
  else
    "${CLUSTER}" down || log "warning: stopping the test cluster failed"
  fi
}

# least_privilege runs tests/privilege against the audit log the suite left: every request the
# operator sent as the chart's ServiceAccount was granted by the chart, and every rule the chart
# grants was used or is named with the feature that needs it.
least_privilege() {
  log "go test -count=1 -tags integration ./tests/privilege (audit log ${KUBETIDB_LOCAL_DIR}/audit.log)"
  go test -count=1 -tags integration ./tests/privilege
}

main() {
  "${CLUSTER}" build-helm # the tests render the chart's RBAC and run the operator with it
  # Every ServiceAccount's requests are audited (tests/privilege); a state dir kept from an
  # earlier run keeps its own policy.
  export KUBETIDB_AUDIT_POLICY="${KUBETIDB_AUDIT_POLICY:-${REPO_ROOT}/tests/privilege/audit-policy.yaml}"
  # Ports of an existing state dir are reused by local-cluster.sh, so only pick them for a new one.
  [[ -f "${KUBETIDB_LOCAL_DIR}/config.env" ]] || pick_ports
  trap 'status=$?; cleanup; exit "${status}"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  local start=${SECONDS}
  "${CLUSTER}" up >/dev/null
  export KUBETIDB_KUBECONFIG="${KUBETIDB_LOCAL_DIR}/kubeconfig"
  log "cluster up in $((SECONDS - start))s (apiserver 127.0.0.1:${KUBETIDB_APISERVER_PORT:-?}, state ${KUBETIDB_LOCAL_DIR})"

  local -a extra
  read -r -a extra <<<"${GO_TEST_FLAGS:-} ${TEST_ARGS:-}"
  local -a pkgs
  local whole=0
  if [[ -n "${TEST_PKGS:-}" ]]; then
    read -r -a pkgs <<<"${TEST_PKGS}"
  else
    whole=1
    mapfile -t pkgs < <(go list -tags integration ./tests/... | grep -v '/tests/privilege$')
  fi
  start=${SECONDS}
  log "go test -count=1 -tags integration -p 1 -timeout 30m ${extra[*]} ${TEST_PKGS:-./tests/... (tests/privilege last)}"
  set +e
  go test -count=1 -tags integration -p 1 -timeout 30m "${extra[@]}" "${pkgs[@]}"
  status=$?
  if ((status == 0 && whole)) && [[ -z "${TEST_ARGS:-}" ]]; then
    least_privilege
    status=$?
  fi
  set -e
  log "go test exited ${status} after $((SECONDS - start))s"
  exit "${status}"
}

main "$@"
