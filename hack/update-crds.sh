#!/usr/bin/env bash
# Regenerates the CRDs from pkg/apis with a pinned controller-gen (built once
# into the cache), finishes them with hack/crdtool, and writes
# manifests/crd/*.yaml plus the single manifests/crd.yaml.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CONTROLLER_GEN_VERSION=v0.23.0
TOOLS="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb}/tools/controller-gen-${CONTROLLER_GEN_VERSION}"
CONTROLLER_GEN="$TOOLS/controller-gen"
if [[ ! -x "$CONTROLLER_GEN" ]]; then
  echo "building controller-gen ${CONTROLLER_GEN_VERSION} into $TOOLS (about a minute, once)..." >&2
  mkdir -p "$TOOLS"
  (cd "$TOOLS" && GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}") || {
    echo "error: failed to build sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}" >&2
    exit 1
  }
fi
OUT="${1:-$ROOT/manifests}"
mkdir -p "$OUT/crd"
rm -f "$OUT"/crd/*.yaml
"$CONTROLLER_GEN" crd:allowDangerousTypes=true paths=./pkg/apis/... output:crd:artifacts:config="$OUT/crd"
go run ./hack/crdtool -dir "$OUT/crd" -out "$OUT/crd.yaml"
# The Helm chart ships the same CRDs; keep its copies in step (not for a scratch output dir).
if [[ "$OUT" == "$ROOT/manifests" ]]; then
  "$ROOT/hack/update-chart-crds.sh"
fi
