#!/usr/bin/env bash
# Installs Debian's `prometheus` package (prometheus + promtool) when either binary is missing, for
# tests/prometheus. Needs root (or sudo) and a reachable Debian mirror. Service starts are denied
# during the install (a temporary /usr/sbin/policy-rc.d), so no system-wide Prometheus daemon is
# left running: the test starts its own on 127.0.0.1 with a temp data dir.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  echo "prometheus and promtool present: $(prometheus --version 2>&1 | sed -n 1p)"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || {
  echo "error: prometheus/promtool are missing and apt-get is not available; install Prometheus (>= 2.x) so that 'prometheus' and 'promtool' are on PATH" >&2
  exit 1
}
sudo=""
if ((EUID != 0)); then
  command -v sudo >/dev/null 2>&1 || {
    echo "error: installing prometheus needs root; run 'apt-get install -y prometheus' as root" >&2
    exit 1
  }
  sudo="sudo"
fi

policy=/usr/sbin/policy-rc.d
if [[ ! -e "${policy}" ]]; then
  # Exit code 101 tells invoke-rc.d "action forbidden": the package's service is not started.
  printf '#!/bin/sh\nexit 101\n' | ${sudo} tee "${policy}" >/dev/null
  ${sudo} chmod 755 "${policy}"
  trap '${sudo} rm -f "${policy}"' EXIT
fi

echo "installing Debian's prometheus package (apt-get update first)..."
${sudo} apt-get update
${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  echo "error: the prometheus package installed but prometheus/promtool are not on PATH" >&2
  exit 1
fi
echo "installed: $(prometheus --version 2>&1 | sed -n 1p)"
