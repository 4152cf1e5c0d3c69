#!/usr/bin/env bash
# Runs golangci-lint (pinned, built once into the cache) with .golangci.yml.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VERSION=v2.15.0
DIR="${KUBETIDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubetidb}/tools/golangci-lint-${VERSION}"
if [[ ! -x "$DIR/golangci-lint" ]]; then
  echo "building golangci-lint ${VERSION} into $DIR (a few minutes, once)..." >&2
  mkdir -p "$DIR"
  (cd "$DIR" && GOBIN="$DIR" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${VERSION}") || {
    echo "error: failed to build github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${VERSION}" >&2
    exit 1
  }
fi
"$DIR/golangci-lint" run --allow-parallel-runners ./...
