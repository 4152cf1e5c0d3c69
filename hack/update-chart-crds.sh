#!/usr/bin/env bash
# Copies the generated CRDs (manifests/crd/*.yaml, written by hack/update-crds.sh) into the Helm
# chart's crds/ directory, which `helm install` applies before the templates. The copies are
# byte-identical; hack/verify-chart-crds.sh fails when they drift.
#
# Usage: hack/update-chart-crds.sh [output dir]   (default charts/tidb-operator/crds)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC="${ROOT}/manifests/crd"
OUT="${1:-${ROOT}/charts/tidb-operator/crds}"

shopt -s nullglob
files=("${SRC}"/*.yaml)
if ((${#files[@]} == 0)); then
  echo "error: no CRDs in ${SRC}; run 'make crds' first" >&2
  exit 1
fi
mkdir -p "${OUT}"
rm -f "${OUT}"/*.yaml
cp "${files[@]}" "${OUT}/"
echo "copied ${#files[@]} CRDs to ${OUT#"${ROOT}"/}"
