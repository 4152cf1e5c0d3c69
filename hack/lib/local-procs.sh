#!/usr/bin/env bash
# Process bookkeeping for the local control plane. Sourced by hack/local-cluster.sh, which sets
# STATE_DIR, CACHE_DIR and SELF. Each started process gets ${STATE_DIR}/pids/<name>.pid holding its PID,
# the binary it must be running and a string its command line must contain, so that `down` never
# signals a process that merely reused the PID.

pid_file() { echo "${STATE_DIR}/pids/$1.pid"; }

recorded_pid() { head -n 1 "$(pid_file "$1")" 2>/dev/null || true; }

# is_running succeeds when the recorded PID still runs the recorded binary with our state dir in its
# command line (components) or the recorded marker (the watchdog).
is_running() {
  local f pid want match exe cmdline
  f="$(pid_file "$1")"
  [[ -f "${f}" ]] || return 1
  {
    read -r pid
    read -r want
    read -r match || true
  } <"${f}"
  [[ "${pid}" =~ ^[0-9]+$ && -d "/proc/${pid}" ]] || return 1
  exe="$(readlink "/proc/${pid}/exe" 2>/dev/null)" || return 1
  [[ "${exe% (deleted)}" == "${want}" ]] || return 1
  cmdline="$(tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null)" || return 1
  [[ "${cmdline}" == *"${match}"* ]]
}

all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do
    is_running "${c}" || return 1
  done
}

any_running() {
  local c
  for c in "${COMPONENTS[@]}"; do
    if is_running "${c}"; then return 0; fi
  done
  return 1
}

# is_alive is the weaker check used while a process is still exec'ing: it exists and is no zombie.
is_alive() {
  [[ -d "/proc/$1" ]] && ! grep -q '^State:[[:space:]]*[ZX]' "/proc/$1/status" 2>/dev/null
}

# port_in_use succeeds when something accepts TCP connections on 127.0.0.1:<port>.
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_component starts a binary in its own session (a Ctrl-C in the caller's terminal does not
# reach it) with an empty environment plus PATH and HOME: etcd reads every ETCD_* variable as a flag,
# and no component may pick up the caller's KUBECONFIG or proxies. No-op when it already runs.
# Args: <name> <port> <env var that sets the port> <binary> <flags...>
start_component() {
  local name="$1" port="$2" var="$3" bin="$4" log pid
  shift 4
  if is_running "${name}"; then
    return 0
  fi
  [[ -x "${bin}" ]] || die "${bin} is missing; run 'hack/local-cluster.sh build'"
  if port_in_use "${port}"; then
    die "port ${port} on 127.0.0.1 (${name}) is already in use; set ${var} to a free port, or stop what listens there (ss -ltnp 'sport = :${port}')"
  fi
  log="${STATE_DIR}/logs/${name}.log"
  setsid env -i PATH="/usr/local/bin:/usr/bin:/bin" HOME="${HOME}" "${bin}" "$@" >>"${log}" 2>&1 </dev/null &
  pid=$!
  printf '%s\n%s\n%s\n' "${pid}" "${bin}" "${STATE_DIR}/" >"$(pid_file "${name}")"
  log_info "started ${name} (pid ${pid}, port ${port}, log ${log})"
}

# wait_until polls a command until it succeeds; it fails fast, with the log's tail, if the component
# named <desc> exited, and fails after <timeout> seconds otherwise.
# Args: <desc> <timeout seconds> <command...>
wait_until() {
  local desc="$1" timeout="$2" deadline pid log
  shift 2
  deadline=$((SECONDS + timeout))
  log="${STATE_DIR}/logs/${desc}.log"
  until "$@" >/dev/null 2>&1; do
    pid="$(recorded_pid "${desc}")"
    if [[ -n "${pid}" ]] && ! is_alive "${pid}"; then
      tail -n 25 "${log}" >&2 || true
      die "${desc} exited during startup (log: ${log})"
    fi
    if ((SECONDS >= deadline)); then
      if [[ -f "${log}" ]]; then tail -n 25 "${log}" >&2; fi
      die "${desc} not ready after ${timeout}s${pid:+ (log: ${log})}"
    fi
    sleep 0.2
  done
}

# stop_component sends SIGTERM to a process we started, waits up to 20s, then SIGKILLs it.
# A PID that no longer runs our binary is left alone.
stop_component() {
  local name="$1" pid i
  [[ -f "$(pid_file "${name}")" ]] || return 0
  pid="$(recorded_pid "${name}")"
  if [[ "${pid}" == "$$" ]]; then
    rm -f "$(pid_file "${name}")"
    return 0
  fi
  if is_running "${name}"; then
    kill -TERM "${pid}" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      is_running "${name}" || break
      sleep 0.2
    done
    if is_running "${name}"; then
      log_info "${name} (pid ${pid}) ignored SIGTERM for 20s; sending SIGKILL"
      kill -KILL "${pid}" 2>/dev/null || true
      for ((i = 0; i < 25; i++)); do
        is_running "${name}" || break
        sleep 0.2
      done
    fi
    log_info "stopped ${name} (pid ${pid})"
  fi
  rm -f "$(pid_file "${name}")"
}

# start_watchdog runs `local-cluster.sh watchdog <owner>` in the background: when the owner process
# (e.g. a test binary that started this cluster) exits, even by SIGKILL or a test timeout, the
# watchdog runs `down`, so a crashed test run leaks no processes.
start_watchdog() {
  local owner="$1" pid sh
  [[ "${owner}" =~ ^[0-9]+$ ]] || die "KUBETIDB_OWNER_PID='${owner}' is not a PID"
  is_running watchdog && return 0
  sh="$(readlink /proc/$$/exe)"
  setsid env -i PATH="/usr/local/bin:/usr/bin:/bin" HOME="${HOME}" KUBETIDB_LOCAL_DIR="${STATE_DIR}" \
    KUBETIDB_CACHE_DIR="${CACHE_DIR}" KUBETIDB_K8S_VERSION="${K8S_VERSION}" \
    "${sh}" "${SELF}" watchdog "${owner}" >>"${STATE_DIR}/logs/watchdog.log" 2>&1 </dev/null &
  pid=$!
  printf '%s\n%s\n%s\n' "${pid}" "${sh}" "local-cluster.sh watchdog ${owner}" >"$(pid_file watchdog)"
  log_info "watchdog (pid ${pid}) stops the cluster when pid ${owner} exits"
}

run_watchdog() {
  local owner="$1"
  while [[ -d "/proc/${owner}" ]]; do sleep 2; done
  log_info "owner pid ${owner} exited; stopping the cluster"
  cmd_down
}
