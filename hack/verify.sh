#!/usr/bin/env bash
# make verify: formatting, vet (with and without the integration tag), lint,
# generated code and CRDs up to date. Every check runs; the script fails if
# any failed and names which.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
failed=()
run() {
  local name=$1; shift
  echo "--- verify: $name"
  if ! "$@"; then failed+=("$name"); fi
}

check_gofmt() {
  local files
  files=$(git ls-files --cached --others --exclude-standard '*.go' | grep -v '^pkg/client/' | xargs -r gofmt -s -l)
  if [[ -n "$files" ]]; then
    echo "not gofmt -s formatted (run 'make fmt'):"; echo "$files"
    return 1
  fi
}

run gofmt check_gofmt
run "go vet" go vet ./...
run "go vet (integration)" go vet -tags integration ./tests/...
run lint hack/lint.sh
run codegen hack/verify-codegen.sh
run crds hack/verify-crds.sh
run "chart crds" hack/verify-chart-crds.sh

if ((${#failed[@]} > 0)); then
  echo "verify FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "verify passed"
