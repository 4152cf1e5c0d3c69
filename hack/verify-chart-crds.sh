#!/usr/bin/env bash
# Fails when charts/tidb-operator/crds/ differs from manifests/crd/ (the generated CRDs), naming
# the fix: run hack/update-chart-crds.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT
"${ROOT}/hack/update-chart-crds.sh" "${TMP}" >/dev/null
if ! diff -ru "${TMP}" "${ROOT}/charts/tidb-operator/crds"; then
  echo "error: charts/tidb-operator/crds is out of date: run 'hack/update-chart-crds.sh'" >&2
  exit 1
fi
echo "chart CRDs up to date"
