#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy into a cache outside the repo,
# keyed by version, only when they are missing. Sourced by hack/local-cluster.sh, which sets
# CACHE_DIR, K8S_VERSION, ETCD_VERSION, KWOK_VERSION and HELM_VERSION.
#
# Kubernetes commands cannot be `go install`ed (k8s.io/kubernetes replaces its staging modules with
# local paths), so they are built from a throwaway wrapper module in the cache that requires
# k8s.io/kubernetes and maps every staging module to its published v0.x version. etcd's server module
# has replace directives too and gets the same treatment. Wrappers are built with -mod=mod, never
# `go mod tidy`, because tidy pulls test-only modules the filtered module proxy does not serve.

# MIN_FREE_KB is the free space a cold build needs across the binary cache and the Go build cache.
MIN_FREE_KB=$((4 * 1024 * 1024))

k8s_bin_dir() { echo "${CACHE_DIR}/bin/k8s-${K8S_VERSION}"; }
etcd_bin_dir() { echo "${CACHE_DIR}/bin/etcd-${ETCD_VERSION}"; }
kwok_bin_dir() { echo "${CACHE_DIR}/bin/kwok-${KWOK_VERSION}"; }
helm_bin_dir() { echo "${CACHE_DIR}/bin/helm-${HELM_VERSION}"; }

# bin_path prints the cached path of one binary by name (kubectl, etcd, kwok, helm, kube-*).
bin_path() {
  case "$1" in
    etcd) echo "$(etcd_bin_dir)/etcd" ;;
    kwok) echo "$(kwok_bin_dir)/kwok" ;;
    helm) echo "$(helm_bin_dir)/helm" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl) echo "$(k8s_bin_dir)/$1" ;;
    *) die "unknown binary '$1' (want etcd, kwok, helm, kubectl, kube-apiserver, kube-controller-manager, kube-scheduler)" ;;
  esac
}

# check_disk fails unless the filesystem holding dir has MIN_FREE_KB free.
check_disk() {
  local dir="$1" free_kb
  mkdir -p "${dir}"
  free_kb="$(df -Pk "${dir}" | awk 'NR==2 {print $4}')"
  if ((free_kb < MIN_FREE_KB)); then
    die "not enough disk space to build: ${dir} has $((free_kb / 1024)) MiB free, a cold build needs $((MIN_FREE_KB / 1024)) MiB.
  Free space (e.g. 'go clean -cache', or remove old versions under ${CACHE_DIR}/bin), or point KUBETIDB_CACHE_DIR / GOCACHE elsewhere."
  fi
}

# run_build runs a build command with its output in a log; on failure it names what failed and exits.
# Args: <binary name> <module@version> <command...>
run_build() {
  local name="$1" what="$2" log start
  shift 2
  mkdir -p "${CACHE_DIR}/logs"
  log="${CACHE_DIR}/logs/build-${name}-${what##*@}.log"
  start=${SECONDS}
  if ! "$@" >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2 || true
    die "building ${name} from module ${what} failed (full log: ${log})"
  fi
  log_info "built ${name} ${what##*@} in $((SECONDS - start))s"
}

# module_file downloads <module>@<version> and prints one path field of `go mod download -json`
# (GoMod or Dir); it exits with the proxy's error when the version is not served.
module_file() {
  local json
  if ! json="$(cd / && GOWORK=off GOFLAGS='' go mod download -json "$1@$2" 2>&1)"; then
    die "downloading module $1@$2 failed: $(echo "${json}" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' | sed -n 1,3p)"
  fi
  echo "${json}" | sed -n 's/^[[:space:]]*"'"$3"'": "\(.*\)",$/\1/p'
}

# go_build_in builds <pkg> inside the wrapper module <dir> into <out> (renamed into place only on
# success, so an interrupted build never leaves a half-written binary). Static, no workspace, -mod=mod.
go_build_in() {
  local dir="$1" out="$2" pkg="$3" ldflags="$4"
  (cd "${dir}" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod go build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "${pkg}") &&
    mv "${out}.tmp" "${out}"
}

# write_k8s_wrapper writes ${dir}/go.mod: require k8s.io/kubernetes, copy its go/godebug lines and
# replace each staging module with its published v0.<minor>.<patch> version.
write_k8s_wrapper() {
  local dir="$1" gomod staging
  staging="v0.${K8S_VERSION#v1.}"
  gomod="$(module_file k8s.io/kubernetes "${K8S_VERSION}" GoMod)"
  [[ -f "${gomod}" ]] || die "go mod download gave no go.mod for k8s.io/kubernetes@${K8S_VERSION}"
  mkdir -p "${dir}"
  {
    echo "module kubetidb.local/k8s-wrapper"
    echo
    grep -E '^go [0-9]' "${gomod}"
    awk '/^godebug \(/ {blk=1} blk {print} blk && /^\)/ {blk=0; next} /^godebug [^(]/ {print}' "${gomod}"
    echo
    echo "require k8s.io/kubernetes ${K8S_VERSION}"
    echo
    echo "replace ("
    sed -n 's|^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*$|\t\1 => \1 '"${staging}"'|p' "${gomod}"
    echo ")"
  } >"${dir}/go.mod.new"
  mv "${dir}/go.mod.new" "${dir}/go.mod"
  touch "${dir}/go.sum"
}

# k8s_ldflags sets the version variables so binaries report ${K8S_VERSION}, not v0.0.0-master.
k8s_ldflags() {
  local minor major flags="-s -w" pkg
  major="${K8S_VERSION#v}"
  major="${major%%.*}"
  minor="$(echo "${K8S_VERSION}" | cut -d. -f2)"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${K8S_VERSION} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  echo "${flags}"
}

# build_k8s builds the missing kube-apiserver, kube-controller-manager, kube-scheduler and kubectl.
build_k8s() {
  local dir out cmd
  dir="${CACHE_DIR}/src/k8s-${K8S_VERSION}"
  out="$(k8s_bin_dir)"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [[ -x "${out}/${cmd}" ]] && continue
    [[ -f "${dir}/go.mod" ]] || write_k8s_wrapper "${dir}"
    case "${cmd}" in
      kube-apiserver) log_info "building kube-apiserver ${K8S_VERSION} (3-12 min cold on 2 cores, ~2.5 GB RAM)..." ;;
      kube-controller-manager) log_info "building kube-controller-manager ${K8S_VERSION} (1-2 min after kube-apiserver)..." ;;
      *) log_info "building ${cmd} ${K8S_VERSION} (under a minute after kube-apiserver)..." ;;
    esac
    mkdir -p "${out}"
    run_build "${cmd}" "k8s.io/kubernetes@${K8S_VERSION}" \
      go_build_in "${dir}" "${out}/${cmd}" "k8s.io/kubernetes/cmd/${cmd}" "$(k8s_ldflags)"
  done
}

# build_etcd builds etcd from a wrapper module pinning every etcd module at ${ETCD_VERSION}.
build_etcd() {
  local dir out v="${ETCD_VERSION}"
  out="$(etcd_bin_dir)"
  [[ -x "${out}/etcd" ]] && return 0
  dir="${CACHE_DIR}/src/etcd-${v}"
  mkdir -p "${dir}" "${out}"
  cat >"${dir}/go.mod" <<EOF
module kubetidb.local/etcd-wrapper

go 1.23

require (
	go.etcd.io/etcd/api/v3 ${v}
	go.etcd.io/etcd/client/pkg/v3 ${v}
	go.etcd.io/etcd/client/v2 v2.305.${v##*.}
	go.etcd.io/etcd/client/v3 ${v}
	go.etcd.io/etcd/pkg/v3 ${v}
	go.etcd.io/etcd/raft/v3 ${v}
	go.etcd.io/etcd/server/v3 ${v}
)
EOF
  touch "${dir}/go.sum"
  log_info "building etcd ${v} (1-3 min cold)..."
  run_build etcd "go.etcd.io/etcd/server/v3@${v}" \
    go_build_in "${dir}" "${out}/etcd" go.etcd.io/etcd/server/v3 "-s -w"
}

# build_go_install builds a command that `go install` accepts directly, into a versioned GOBIN.
# Args: <name> <package@version> <bin dir> <extra ldflags>
build_go_install() {
  local name="$1" pkg="$2" out="$3" ldflags="$4"
  [[ -x "${out}/${name}" ]] && return 0
  mkdir -p "${out}"
  log_info "building ${name} ${pkg##*@} (1-2 min cold)..."
  run_build "${name}" "${pkg}" \
    env CGO_ENABLED=0 GOWORK=off GOBIN="${out}" go install -trimpath -ldflags "-s -w ${ldflags}" "${pkg}"
}

build_kwok() {
  build_go_install kwok "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" "$(kwok_bin_dir)" \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
}

build_helm() {
  build_go_install helm "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" "$(helm_bin_dir)" \
    "-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION} -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
}

# all_built reports whether every binary `up` needs is in the cache.
all_built() {
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [[ -x "$(bin_path "${b}")" ]] || return 1
  done
  if [[ "${KUBETIDB_WITH_HELM:-0}" == 1 ]]; then
    [[ -x "$(bin_path helm)" ]] || return 1
  fi
}

# build_all builds whatever is missing, holding a lock so concurrent callers build each binary once.
build_all() {
  all_built && return 0
  command -v go >/dev/null || die "go is not on PATH; install Go >= 1.26"
  check_disk "${CACHE_DIR}"
  check_disk "$(go env GOCACHE)"
  mkdir -p "${CACHE_DIR}"
  exec 9>"${CACHE_DIR}/build.lock"
  if ! flock -n 9; then
    log_info "another build holds ${CACHE_DIR}/build.lock; waiting for it..."
    flock 9
  fi
  local start=${SECONDS}
  build_etcd
  build_k8s
  build_kwok
  if [[ "${KUBETIDB_WITH_HELM:-0}" == 1 ]]; then build_helm; fi
  # Close the lock so no cluster process started later inherits (and holds) it.
  exec 9>&-
  log_info "binaries ready in ${CACHE_DIR}/bin (build step took $((SECONDS - start))s)"
}
