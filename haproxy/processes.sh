#!/usr/bin/env bash
# Usage: processes.sh haproxy -f CONFIG -S 127.0.0.1:PORT   (the container's command)
#        processes.sh health                                (its healthcheck)
#
# HAProxy as HAPROXY_PROCESSES processes: what the 2-million-connections
# article ran as "nbproc 3" (HAProxy removed nbproc in 2.5; its threads share
# one process and so one open-file limit). Each process is a master-worker
# HAProxy of its own on the same config, with its own open-file limit and
# maxconn; all of them bind the same listening ports with SO_REUSEPORT (on by
# default on Linux), so the kernel spreads new connections over them, as it
# spread them over nbproc's processes. What each process keeps to itself (its
# runtime API, master CLI, stats and metrics frontends, the exporter's stats
# socket) sits at process 1's port + PORT_STEP x (k - 1) for process k; process
# 1 is exactly the one-process lab, and with HAPROXY_PROCESSES=1 this script
# only execs HAProxy. The base ports are the defaults haproxy.cfg gives its
# LAB_* variables, and the master CLI's the -S this script is given.
# Signals: USR2 (a hitless reload: docker compose kill -s USR2 haproxy), USR1
# (the image's soft stop), TERM and INT reach every process; when one process
# ends the others are stopped and the container ends with its status.
set -euo pipefail

# topology.txt's instance row says the same (port_step): a static test checks it.
readonly PORT_STEP=100
readonly LIVE_CFG=/var/lib/haproxy/live.cfg
readonly BASELINE_CFG=/usr/local/etc/haproxy/haproxy.cfg
# Written here for Prometheus (file_sd_configs): one target per process.
readonly TARGETS_FILE=/run/haproxy-stats/haproxy-targets.json

die() { echo "processes.sh: $*" >&2; exit 2; }

# processes: HAPROXY_PROCESSES, checked.
processes() {
  local n="${HAPROXY_PROCESSES:-1}"
  [[ "${n}" =~ ^[1-9][0-9]*$ && "${n}" -le 64 ]] || die "HAPROXY_PROCESSES must be a whole number from 1 to 64, found '${n}'; set it in .env"
  echo "${n}"
}

# base_port VAR: the default haproxy.cfg gives "${VAR-PORT}".
base_port() {
  local port
  port=$(grep -o "\${$1-[0-9]*}" "${LIVE_CFG}" | head -n 1 | tr -dc 0-9)
  [[ -n "${port}" ]] || die "${LIVE_CFG} has no \"\${$1-PORT}\""
  echo "${port}"
}

# shifted PORT K: process K's port.
shifted() { echo $(($1 + PORT_STEP * ($2 - 1))); }

# process_env K: process K's own sockets, as haproxy.cfg's LAB_* variables.
process_env() {
  local k="$1" var
  for var in LAB_RUNTIME_API_PORT LAB_STATS_PORT LAB_METRICS_PORT; do
    printf '%s=%s\n' "${var}" "$(shifted "$(base_port "${var}")" "${k}")"
  done
  if ((k > 1)); then
    echo "LAB_ADMIN_SOCKET=/var/lib/haproxy/admin-${k}.sock"
    echo "LAB_STATS_SOCKET=/run/haproxy-stats/stats-${k}.sock"
  fi
}

# write_targets N: Prometheus's targets, one per process, labelled process="K".
write_targets() {
  local n="$1" k port out="["
  port=$(base_port LAB_METRICS_PORT)
  for ((k = 1; k <= n; k++)); do
    out+="$( ((k == 1)) || echo ,){\"targets\":[\"haproxy:$(shifted "${port}" "${k}")\"],\"labels\":{\"process\":\"${k}\"}}"
  done
  # Whole, then renamed: Prometheus never reads half of it.
  echo "${out}]" >"${TARGETS_FILE}.new" && mv -f "${TARGETS_FILE}.new" "${TARGETS_FILE}"
}

# health: every process answers on its runtime API. Its first line only,
# read by bash: a grep per process, every check, cost a fork each with
# dozens of processes.
health() {
  local n k port line
  n=$(processes)
  port=$(base_port LAB_RUNTIME_API_PORT)
  for ((k = 1; k <= n; k++)); do
    exec 3<>"/dev/tcp/127.0.0.1/$(shifted "${port}" "${k}")" || return 1
    echo 'show info' >&3
    read -r -t 2 line <&3 || return 1
    [[ "${line}" == "Name: HAProxy"* ]] || return 1
    exec 3<&-
  done
}

# run HAPROXY_ARGS...: the processes, with "-S ADDRESS:PORT" shifted for each.
run() {
  local n k args pids=() arg master_port="" status=0 alive stopping=0 sig
  # Every start runs haproxy.cfg, except the runner's own restart (a step
  # whose listening sockets a reload cannot change), which leaves keep-live-cfg.
  if [[ -e /var/lib/haproxy/keep-live-cfg ]]; then rm -f /var/lib/haproxy/keep-live-cfg; else ln -sfn "${BASELINE_CFG}" "${LIVE_CFG}"; fi
  n=$(processes)
  write_targets "${n}" || echo "processes.sh: could not write ${TARGETS_FILE}: Prometheus scrapes no HAProxy" >&2
  ((n > 1)) || exec docker-entrypoint.sh "$@"
  for arg in "$@"; do [[ "${arg}" =~ ^127\.0\.0\.1:([0-9]+)$ ]] && master_port="${BASH_REMATCH[1]}"; done
  [[ -n "${master_port}" ]] || die "no -S 127.0.0.1:PORT (the master CLI) among: $*"
  for ((k = 1; k <= n; k++)); do
    args=()
    for arg in "$@"; do
      [[ "${arg}" == "127.0.0.1:${master_port}" ]] && arg="127.0.0.1:$(shifted "${master_port}" "${k}")"
      args+=("${arg}")
    done
    # shellcheck disable=SC2046 # NAME=value words
    env $(process_env "${k}") docker-entrypoint.sh "${args[@]}" &
    pids+=($!)
  done
  echo "processes.sh: ${n} HAProxy processes on the same listening ports (pids ${pids[*]})" >&2
  trap 'kill -USR2 "${pids[@]}" 2>/dev/null || true' USR2
  for sig in USR1 TERM INT; do
    # shellcheck disable=SC2064 # the signal's name, now
    trap "stopping=1; kill -${sig} ${pids[*]} 2>/dev/null || true" "${sig}"
  done
  # wait -n returns early when a trapped signal arrives: wait again until a
  # process has really ended.
  while :; do
    status=0
    wait -n "${pids[@]}" || status=$?
    alive=0
    for k in "${pids[@]}"; do kill -0 "${k}" 2>/dev/null && alive=$((alive + 1)); done
    ((alive == n)) || break
  done
  # Asked to stop: each process stops as asked (USR1 lets connections finish).
  # Else one process died: the container ends, so Docker and the runner see it.
  if ((stopping == 0)); then
    echo "processes.sh: a process ended (status ${status}): stopping the other ${alive}" >&2
    kill -TERM "${pids[@]}" 2>/dev/null || true
  fi
  wait || true
  exit "${status}"
}

main() {
  case "${1:-}" in
    health) health ;;
    haproxy) run "$@" ;;
    *) die "usage: processes.sh haproxy -f CONFIG -S 127.0.0.1:PORT | health" ;;
  esac
}

main "$@"
