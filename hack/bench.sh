#!/usr/bin/env bash
# The operator's benchmarks (issue #8; method and latest figures in docs/performance.md).
#
# Usage: hack/bench.sh [all|micro|scale]     (make bench runs all)
#   micro  Go micro-benchmarks: building one cluster's objects, one converged sync over fakes, the planner
#   scale  N TidbClusters on a dedicated local control plane per N (own state dir, free ports, audit log
#          of the operator's requests), with the simulator and the controller-manager as processes
#   all    micro, scale, then the TiFlash shape at a small N (BENCH_TIFLASH_N) on a control plane of its own
#
# Environment (defaults in brackets), read by tests/bench:
#   BENCH_N [100]        comma-separated cluster counts, one fresh control plane each, e.g. 1,10,50,100
#   BENCH_SHAPE [basic]  basic = PD/TiKV/TiDB 1/1/1, ha = 3/3/2, tiflash = 1/1/1 + 1 TiFlash, ticdc = 1/1/1 + 1 TiCDC,
#                        big = PD/TiKV/TiDB/TiFlash/TiCDC 5/100/20/10/4 (run it with BENCH_N=1)
#                        (tests/bench/testdata/<shape>.yaml); comma-separated, each N runs every shape back
#                        to back and the table compares the others with basic per pod, e.g. basic,tiflash
#   BENCH_BIG_PD, BENCH_BIG_TIKV, BENCH_BIG_TIDB, BENCH_BIG_TIFLASH, BENCH_BIG_TICDC [5, 100, 20, 10, 4]
#                        the big shape's replicas, to scale it down for a quick run, e.g. BENCH_BIG_TIKV=10
#   BENCH_IDLE [5m]      idle window after convergence    BENCH_SETTLE [40s]  quiet time before it
#   BENCH_K [10]         clusters scaled out one by one to time the reaction
#   BENCH_RAW [1]        0 skips the raw API baseline
#   BENCH_OPERATOR_FLAGS extra controller-manager flags, e.g. '-kube-client-qps=200 -kube-client-burst=400'
#   BENCH_OPERATOR_ENV   extra controller-manager environment, e.g. 'GOGC=50 GOMEMLIMIT=48MiB'
#   BENCH_MICRO_FLAGS [-benchtime=1s -count=1]  extra go test flags of the micro-benchmarks
#   BENCH_TIFLASH_N [10], BENCH_TIFLASH_IDLE [1m]  the TiFlash round of `all` (0 skips it)
# Results: _output/bench/<timestamp>.json and .txt (the table); logs and audit log in _output/bench/<timestamp>/.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}"
OUT="${BENCH_OUT:-${REPO_ROOT}/_output/bench}"
BIN="${BENCH_BIN_DIR:-${OUT}/bin}"
MICRO_PKGS=(./pkg/manager/component/ ./pkg/manager/planner/ ./pkg/manager/pd/ ./pkg/controller/)

log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

# build compiles the operator, simulator and harness into the bench's own bin dir, so a concurrent
# `make build` elsewhere in the tree never swaps a binary under a running bench.
build() {
  mkdir -p "${BIN}"
  make --no-print-directory build BIN_DIR="${BIN}" >/dev/null
  go build -tags bench -o "${BIN}/kubetidb-bench" ./tests/bench
  hack/local-cluster.sh build >/dev/null
}

micro() {
  local out flags
  mkdir -p "${OUT}"
  out="${OUT}/micro-$(date -u +%Y%m%d-%H%M%S).txt"
  read -r -a flags <<<"${BENCH_MICRO_FLAGS:--benchtime=1s -count=1}"
  log "micro-benchmarks (${MICRO_PKGS[*]}) → ${out}"
  go test -run '^$' -bench . -benchmem "${flags[@]}" "${MICRO_PKGS[@]}" | tee "${out}"
}

scale() {
  log "scale bench: N=${BENCH_N:-100} shape=${BENCH_SHAPE:-basic} idle=${BENCH_IDLE:-5m}"
  BENCH_OUT="${OUT}" BENCH_BIN_DIR="${BIN}" "${BIN}/kubetidb-bench"
}

# scale_tiflash runs the TiFlash shape at a small N with a short idle window, so that `make bench` covers
# it for about 2.5 minutes more; its per-pod figures are compared with basic by
# BENCH_SHAPE=basic,tiflash at one N (docs/performance.md).
scale_tiflash() {
  local n="${BENCH_TIFLASH_N:-10}"
  if [[ "${n}" == 0 ]]; then
    return
  fi
  BENCH_SHAPE=tiflash BENCH_N="${n}" BENCH_IDLE="${BENCH_TIFLASH_IDLE:-1m}" scale
}

main() {
  case "${1:-all}" in
    all)
      build
      micro
      scale
      scale_tiflash
      ;;
    micro) micro ;;
    scale)
      build
      scale
      ;;
    *)
      sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
}

main "$@"
