#!/usr/bin/env bash
# Measures what full schemas for the embedded Kubernetes types would cost
# (docs/design/pass-through-schemas.md): on a scratch copy of HEAD, drops the
# pass-through markers (Schemaless, PreserveUnknownFields, Type) above every
# field of a k8s.io/api core or networking type, generates the CRDs with and
# without descriptions, finishes them with hack/crdtool (its size budget
# lifted) and prints each CRD's size as compact JSON next to today's.
# Nothing in the working tree changes. Usage: hack/measure-full-schemas.sh [keep-dir]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONTROLLER_GEN_VERSION=v0.23.0
CONTROLLER_GEN="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb}/tools/controller-gen-${CONTROLLER_GEN_VERSION}/controller-gen"
[[ -x "$CONTROLLER_GEN" ]] || "$ROOT/hack/update-crds.sh" "$(mktemp -d)" >/dev/null # builds it once
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK/src" "$WORK/full" "$WORK/nodesc"
git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
cd "$WORK/src"

for f in pkg/apis/pingcap/v1alpha1/*_types.go; do
  awk '
    /^[ \t]*\/\// { buf[n++] = $0; next }
    {
      k8s = ($0 ~ /(corev1|networkingv1)\.[A-Z]/)
      for (i = 0; i < n; i++) {
        if (k8s && buf[i] ~ /\+kubebuilder:(validation:Schemaless|pruning:PreserveUnknownFields|validation:Type=)/) continue
        print buf[i]
      }
      n = 0
      print
    }
    END { for (i = 0; i < n; i++) print buf[i] }' "$f" >"$f.new"
  mv "$f.new" "$f"
done
sed -i 's/^const maxCRDBytes = .*/const maxCRDBytes = 1 << 30/' hack/crdtool/main.go
"$CONTROLLER_GEN" crd:allowDangerousTypes=true paths=./pkg/apis/... output:crd:artifacts:config="$WORK/full"
"$CONTROLLER_GEN" crd:allowDangerousTypes=true,maxDescLen=0 paths=./pkg/apis/... output:crd:artifacts:config="$WORK/nodesc"
go run ./hack/crdtool -dir "$WORK/full" -out "$WORK/full.yaml"
go run ./hack/crdtool -dir "$WORK/nodesc" -out "$WORK/nodesc.yaml"

mkdir -p hack/jsonsize
cat >hack/jsonsize/main.go <<'GO'
// Command jsonsize prints the size of each YAML file as compact JSON.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	for _, f := range os.Args[1:] {
		raw, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			panic(err)
		}
		fmt.Print(len(js), " ")
	}
	fmt.Println()
}
GO
printf '%-36s %10s %12s %16s\n' CRD today full full-no-descriptions
for f in "$ROOT"/manifests/crd/*.yaml; do
  b=$(basename "$f")
  read -r today full nodesc < <(go run ./hack/jsonsize "$f" "$WORK/full/$b" "$WORK/nodesc/$b")
  printf '%-36s %10d %12d %16d\n' "$b" "$today" "$full" "$nodesc"
done
echo "CRDs with full schemas in $WORK/full (all: $WORK/full.yaml), without descriptions in $WORK/nodesc"
