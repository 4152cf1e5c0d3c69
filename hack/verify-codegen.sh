#!/usr/bin/env bash
# Fails when the generated deepcopy functions or pkg/client differ from what
# hack/update-codegen.sh produces from pkg/apis.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/before"
cp -a pkg/client "$TMP/before/client"
find pkg/apis -name 'zz_generated.*.go' -exec cp --parents {} "$TMP/before" \;
restore() {
  rm -rf pkg/client && cp -a "$TMP/before/client" pkg/client
  (cd "$TMP/before" && find pkg -name 'zz_generated.*.go' -exec cp --parents {} "$ROOT" \;)
}
hack/update-codegen.sh >/dev/null
status=0
diff -ru "$TMP/before/client" pkg/client >/dev/null || status=1
while IFS= read -r f; do
  diff -u "$TMP/before/$f" "$f" >/dev/null || status=1
done < <(find pkg/apis -name 'zz_generated.*.go')
if [[ $status -ne 0 ]]; then
  echo "error: generated code is stale: run 'make codegen'" >&2
  git --no-pager diff --stat -- pkg/client pkg/apis || true
  restore
  exit 1
fi
echo "generated code up to date"
