#!/usr/bin/env bash
# Real object-storage servers for the backup tests, cached by version outside the repo (like
# hack/local-cluster.sh's Kubernetes binaries) and installed only when missing:
# - S3: the Versity S3 Gateway (versitygw) with its POSIX backend, built from the Go module proxy
#   (about 5-10 minutes cold on 2 shared cores, once);
# - Azure Blob: Azure's official emulator Azurite, installed from the npm registry with the machine's
#   Node.js (about a minute, once);
# - GCS: fake-gcs-server, built from the Go module proxy (a few minutes cold, once).
#
# Usage: hack/s3-server.sh <command>
#   build          build versitygw into the cache when missing, print its path
#   bin-path       print versitygw's cached path (built or not)
#   build-azurite  install Azurite into the cache when missing, print the path of azurite-blob
#   build-gcs      build fake-gcs-server into the cache when missing, print its path
#   gcs-bin-path   print fake-gcs-server's cached path (built or not)
#
# Environment: KUBETIDB_CACHE_DIR [${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb]
# The tests (tests/backup) start it themselves on 127.0.0.1 with a private root directory:
#   versitygw --port 127.0.0.1:<port> --access <key> --secret <secret> posix <dir>
#   fake-gcs-server -scheme http -host 127.0.0.1 -port <port> -backend memory
set -euo pipefail

VERSITYGW_VERSION="v1.8.0"
CACHE_DIR="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/kubetidb}"
BIN_DIR="${CACHE_DIR}/bin/versitygw-${VERSITYGW_VERSION}"
BIN="${BIN_DIR}/versitygw"
AZURITE_VERSION="3.37.0"
AZURITE_DIR="${CACHE_DIR}/bin/azurite-${AZURITE_VERSION}"
AZURITE_BIN="${AZURITE_DIR}/node_modules/.bin/azurite-blob"
FAKE_GCS_VERSION="v1.56.1"
FAKE_GCS_DIR="${CACHE_DIR}/bin/fake-gcs-server-${FAKE_GCS_VERSION}"
FAKE_GCS_BIN="${FAKE_GCS_DIR}/fake-gcs-server"

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

# build_azurite installs Azurite with npm into a temporary prefix, renamed into place on success.
build_azurite() {
  if [[ -x "${AZURITE_BIN}" ]]; then
    echo "${AZURITE_BIN}"
    return
  fi
  command -v npm >/dev/null 2>&1 || die "npm is not on PATH: Azurite installs from the npm registry with Node.js"
  mkdir -p "$(dirname "${AZURITE_DIR}")" "${CACHE_DIR}/logs"
  local log="${CACHE_DIR}/logs/install-azurite-${AZURITE_VERSION}.log" start=${SECONDS} tmp
  log_info "installing azurite ${AZURITE_VERSION} into ${AZURITE_DIR} (about a minute, once)..."
  tmp="$(mktemp -d "${AZURITE_DIR}.tmp.XXXXXX")"
  if ! npm install --no-audit --no-fund --prefix "${tmp}" "azurite@${AZURITE_VERSION}" >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2 || true
    rm -rf "${tmp}"
    die "installing azurite ${AZURITE_VERSION} failed (full log: ${log})"
  fi
  rm -rf "${AZURITE_DIR}"
  mv "${tmp}" "${AZURITE_DIR}"
  log_info "installed azurite ${AZURITE_VERSION} in $((SECONDS - start))s"
  echo "${AZURITE_BIN}"
}

# build_gcs builds fake-gcs-server like build does versitygw: into a temporary GOBIN, then renamed.
build_gcs() {
  if [[ -x "${FAKE_GCS_BIN}" ]]; then
    echo "${FAKE_GCS_BIN}"
    return
  fi
  mkdir -p "${FAKE_GCS_DIR}" "${CACHE_DIR}/logs"
  local log="${CACHE_DIR}/logs/build-fake-gcs-server-${FAKE_GCS_VERSION}.log" start=${SECONDS} tmp
  log_info "building fake-gcs-server ${FAKE_GCS_VERSION} into ${FAKE_GCS_DIR} (a few minutes, once)..."
  tmp="$(mktemp -d "${FAKE_GCS_DIR}/.build.XXXXXX")"
  if ! (cd / && GOWORK=off GOFLAGS='' CGO_ENABLED=0 GOBIN="${tmp}" \
    go install -trimpath "github.com/fsouza/fake-gcs-server@${FAKE_GCS_VERSION}") >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2 || true
    rm -rf "${tmp}"
    die "building fake-gcs-server ${FAKE_GCS_VERSION} failed (full log: ${log})"
  fi
  mv "${tmp}/fake-gcs-server" "${FAKE_GCS_BIN}"
  rm -rf "${tmp}"
  log_info "built fake-gcs-server ${FAKE_GCS_VERSION} in $((SECONDS - start))s"
  echo "${FAKE_GCS_BIN}"
}

case "${1:-}" in
  build) build ;;
  bin-path) echo "${BIN}" ;;
  build-azurite) build_azurite ;;
  build-gcs) build_gcs ;;
  gcs-bin-path) echo "${FAKE_GCS_BIN}" ;;
  *) die "usage: $0 build|bin-path|build-azurite|build-gcs|gcs-bin-path" ;;
esac
