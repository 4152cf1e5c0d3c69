#!/usr/bin/env bash
# Installs or builds, only when missing, everything `make test` needs besides Go, so that a fresh
# Debian machine needs nothing but `git clone … && make test` (`make tools` runs this script; the
# test targets depend on it, SKIP_TOOLS=1 skips it):
# - the Debian packages of the system tools below and Prometheus, with apt-get as root or through
#   sudo (hack/install-prometheus.sh, which starts no services); otherwise it fails naming them;
# - etcd, Kubernetes, KWOK and helm for the local control plane (hack/local-cluster.sh build-helm);
# - versitygw, Azurite and fake-gcs-server, the object stores of tests/backup (hack/s3-server.sh).
# Builds are cached by version in ${KUBETIDB_CACHE_DIR:-~/.cache/kubetidb}. With everything present it
# prints nothing and takes well under a second; cold it takes about 19 minutes (fake-gcs-server adds 3.5) on 2 idle cores and up
# to 9 GB of disk, most of it Go's caches (docs/development.md).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# tool:package pairs: openssl for the cluster PKI, curl for readiness probes, make for the entry
# points, git for `make fmt`/verify, flock+setsid (util-linux) for build locking and detaching,
# node+npm for Azure's Blob emulator (Azurite) in tests/backup, MariaDB (mariadbd in /usr/sbin, so
# its /usr/bin installer is the probe) as the MySQL-protocol server of tests/sql and pkg/tidbsql.
TOOLS=(openssl:openssl curl:curl make:make git:git flock:util-linux setsid:util-linux
  base64:coreutils tac:coreutils awk:gawk node:nodejs npm:npm mariadb-install-db:mariadb-server)

have() { command -v "$1" >/dev/null 2>&1; }

# missing_packages prints the Debian package of each tool that is not on PATH, once each.
missing_packages() {
  local t
  for t in "${TOOLS[@]}"; do
    have "${t%%:*}" || echo "${t#*:}"
  done | sort -u
}

main() {
  local -a pkgs
  mapfile -t pkgs < <(missing_packages)
  if ((${#pkgs[@]} > 0)) || ! have prometheus || ! have promtool; then
    hack/install-prometheus.sh "${pkgs[@]}"
    mapfile -t pkgs < <(missing_packages)
    if ((${#pkgs[@]} > 0)); then
      echo "error: still missing after the install: ${pkgs[*]}" >&2
      exit 1
    fi
  fi
  hack/local-cluster.sh build-helm
  hack/s3-server.sh build >/dev/null
  hack/s3-server.sh build-azurite >/dev/null
  hack/s3-server.sh build-gcs >/dev/null
}

main "$@"
