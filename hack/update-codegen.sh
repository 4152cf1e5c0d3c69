#!/usr/bin/env bash
# Regenerates deepcopy functions, the typed clientset (with watch), listers and
# informers for pkg/apis with k8s.io/code-generator's kube_codegen.sh, at the
# code-generator version pinned in go.mod. Generated code lands in
# pkg/apis/**/zz_generated.*.go and pkg/client/; never edit those by hand.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MODULE=github.com/kubetidb/tidb-operator
CODEGEN_DIR=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ -z "$CODEGEN_DIR" || ! -f "$CODEGEN_DIR/kube_codegen.sh" ]]; then
  go mod download k8s.io/code-generator
  CODEGEN_DIR=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
fi
CODEGEN_VERSION=$(go list -m -f '{{.Version}}' k8s.io/code-generator)
# Install the generators outside the repo and outside the user's GOBIN, keyed by version.
export GOBIN="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb}/tools/code-generator-${CODEGEN_VERSION}"
mkdir -p "$GOBIN"
export PATH="$GOBIN:$PATH"

# shellcheck source=/dev/null
source "$CODEGEN_DIR/kube_codegen.sh"

kube::codegen::gen_helpers \
  --boilerplate "$ROOT/hack/boilerplate.go.txt" \
  "$ROOT/pkg/apis"

kube::codegen::gen_client \
  --with-watch \
  --output-dir "$ROOT/pkg/client" \
  --output-pkg "$MODULE/pkg/client" \
  --boilerplate "$ROOT/hack/boilerplate.go.txt" \
  "$ROOT/pkg/apis"
