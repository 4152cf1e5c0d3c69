#!/usr/bin/env bash
# A real S3 server for the backup tests: the Versity S3 Gateway (versitygw) with its POSIX backend, built from
# the Go module proxy into a versioned cache outside the repo (like hack/local-cluster.sh's Kubernetes binaries),
# only when missing. A cold build takes about 5-10 minutes on 2 shared cores; later runs reuse the binary.
#
# Usage: hack/s3-server.sh <command>
#   build       build versitygw into the cache when missing, print its path
#   bin-path    print the cached path (built or not)
#
# Environment: KUBETIDB_CACHE_DIR [${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb]
# The tests (tests/backup) start it themselves on 127.0.0.1 with a private root directory:
#   versitygw --port 127.0.0.1:<port> --access <key> --secret <secret> posix <dir>
set -euo pipefail

VERSITYGW_VERSION="v1.8.0"
CACHE_DIR="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/kubetidb}"
BIN_DIR="${CACHE_DIR}/bin/versitygw-${VERSITYGW_VERSION}"
BIN="${BIN_DIR}/versitygw"

log_info() { echo "[s3-server $(date +%H:%M:%S)] $*" >&2; }
die() {
  echo "[s3-server] error: $*" >&2
  exit 1
}

build() {
  if [[ -x "${BIN}" ]]; then
    echo "${BIN}"
    return
  fi
  mkdir -p "${BIN_DIR}" "${CACHE_DIR}/logs"
  local log="${CACHE_DIR}/logs/build-versitygw-${VERSITYGW_VERSION}.log" start=${SECONDS}
  log_info "building versitygw ${VERSITYGW_VERSION} into ${BIN_DIR} (several minutes, once)..."
  # go install into a temporary GOBIN, renamed into place only on success.
  local tmp
  tmp="$(mktemp -d "${BIN_DIR}/.build.XXXXXX")"
  if ! (cd / && GOWORK=off GOFLAGS='' CGO_ENABLED=0 GOBIN="${tmp}" \
    go install -trimpath "github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}") >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2 || true
    rm -rf "${tmp}"
    die "building versitygw ${VERSITYGW_VERSION} failed (full log: ${log})"
  fi
  mv "${tmp}/versitygw" "${BIN}"
  rm -rf "${tmp}"
  log_info "built versitygw ${VERSITYGW_VERSION} in $((SECONDS - start))s"
  echo "${BIN}"
}

case "${1:-}" in
  build) build ;;
  bin-path) echo "${BIN}" ;;
  *) die "usage: $0 build|bin-path" ;;
esac
