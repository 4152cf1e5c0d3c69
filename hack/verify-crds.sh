#!/usr/bin/env bash
# Fails when manifests/ does not match what hack/update-crds.sh generates from pkg/apis.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$ROOT/hack/update-crds.sh" "$TMP" >/dev/null
if ! diff -ru "$ROOT/manifests/crd" "$TMP/crd" || ! diff -u "$ROOT/manifests/crd.yaml" "$TMP/crd.yaml"; then
  echo "error: CRDs are stale: run 'make crds'" >&2
  exit 1
fi
echo "CRDs up to date"
