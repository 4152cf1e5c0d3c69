#!/usr/bin/env bash
# Installs Debian's `prometheus` package (prometheus + promtool) when either binary is missing, for
# tests/prometheus, together with any further Debian packages named as arguments (hack/ensure-tools.sh
# passes the other missing tools, so one apt-get run installs everything). Needs root (or sudo) and a
# reachable Debian mirror. Service starts are denied during the install (a temporary
# /usr/sbin/policy-rc.d), so no system-wide Prometheus or MariaDB daemon is left running: the tests
# start their own on 127.0.0.1 with temp data dirs.
#
# Usage: hack/install-prometheus.sh [debian-package...]
set -euo pipefail

pkgs=("$@")
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  pkgs+=(prometheus)
fi
if ((${#pkgs[@]} == 0)); then
  echo "prometheus and promtool present: $(prometheus --version 2>&1 | sed -n 1p)"
  exit 0
fi
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
command -v apt-get >/dev/null 2>&1 || {
  echo "error: apt-get is not available; install what these Debian packages provide: ${pkgs[*]} (Prometheus >= 2.x: 'prometheus' and 'promtool' on PATH)" >&2
  exit 1
}
sudo=""
if ((EUID != 0)); then
  command -v sudo >/dev/null 2>&1 || {
    echo "error: installing Debian packages needs root; run as root: apt-get update && apt-get install -y --no-install-recommends ${pkgs[*]}" >&2
    exit 1
  }
  sudo="sudo"
fi

policy=/usr/sbin/policy-rc.d
if [[ ! -e "${policy}" ]]; then
  # Exit code 101 tells invoke-rc.d "action forbidden": the packages' services are not started.
  printf '#!/bin/sh\nexit 101\n' | ${sudo} tee "${policy}" >/dev/null
  ${sudo} chmod 755 "${policy}"
  trap '${sudo} rm -f "${policy}"' EXIT
fi

echo "installing Debian packages ${pkgs[*]} (apt-get update first)..."
${sudo} apt-get update
${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}"
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  echo "error: the prometheus package installed but prometheus/promtool are not on PATH" >&2
  exit 1
fi
echo "installed ${pkgs[*]}; $(prometheus --version 2>&1 | sed -n 1p)"
