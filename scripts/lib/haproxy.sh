# shellcheck shell=bash
# HAProxy's probes: its runtime API and master CLI, its counters, its
# sockets, through a probe container in its network namespace (sourced by
# common.sh).
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# A step's probes by instance (step-load.sh hold_probes fills them).
declare -A LAB_PROBES=()
# instance_probe's check of a cached probe: HAProxy's start time and state,
# then the probe's, which runs.
readonly PROBE_FOUND_RE='^([^ ]+) [a-z]+ [^ ]+ true$'

# sign_times RUN...: this machine's RSA-2048 and ECDSA P-256 sign times
# ("rsa2048_sign_us=N" and "ecdsap256_sign_us=N" lines), from openssl speed
# run by RUN (a command that runs its arguments in a container: instance_exec
# ID, or docker run --rm IMAGE); status 1 when that container has no openssl.
# The machine's speed reference: the same figure varies 2x between days here.
sign_times() {
  local out
  out=$("$@" openssl speed -seconds 1 -mr rsa2048 ecdsap256 2>/dev/null) && [[ "${out}" == *"+F2:"* ]] || return 1
  # -mr: "+F2:n:bits:sign/s:verify/s..." (RSA), "+F4:n:bits:sign/s:verify/s" (ECDSA).
  awk -F: '$1 == "+F2" && $3 == 2048 { printf "rsa2048_sign_us=%.1f\n", 1e6 / $4 }
    $1 == "+F4" && $3 == 256 { printf "ecdsap256_sign_us=%.1f\n", 1e6 / $4 }' <<<"${out}"
}

# instance_probe INSTANCE: the id of INSTANCE's probe: a container of
# HAProxy's own image (bash, awk) that sleeps in INSTANCE's network namespace,
# made on first use. The runner reads HAProxy's sockets, runtime API and
# kernel counters through it, every second of a step: a process exec'd into
# HAProxy's container would be charged to HAProxy's cgroup (~20 ms each,
# more than HAProxy's own CPU per second at a few hundred requests/s). Keyed
# by the container's id and start time: a restarted HAProxy has a new
# namespace, so a new probe, and the old one is removed behind it.
instance_probe() {
  local target key probe cached="" found
  # Kept for a step's load and readings (hold_probes: HAProxy does not
  # restart then): finding it takes four docker calls, ~150 ms of CPU.
  if [[ -n "${LAB_PROBES[$1]:-}" ]]; then echo "${LAB_PROBES[$1]}"; return 0; fi
  target=$(instance_container "$1") || return 1
  # A run's cache (LAB_CACHE_DIR): the probe found last, checked with one
  # docker call (HAProxy's start time unchanged, the probe running) where
  # finding it took three, ~15 times a step.
  [[ -z "${LAB_CACHE_DIR}" ]] || read -r cached 2>/dev/null <"${LAB_CACHE_DIR}/probe-$1" || cached=""
  if [[ "${cached}" == "${target}@"*" "* ]]; then
    key="${cached% *}" probe="${cached##* }"
    # "STARTED RUNNING" of HAProxy's container, then of the probe.
    found=$(docker inspect -f '{{.State.StartedAt}} {{.State.Running}}' "${target}" "${probe}" 2>/dev/null | paste -sd' ' -)
    if [[ "${found}" =~ ${PROBE_FOUND_RE} && "${BASH_REMATCH[1]}" == "${key#*@}" ]]; then
      echo "${probe}"
      return 0
    fi
  fi
  key=$(container_start_key "${target}") || return 1
  probe=$(docker ps -q --filter "label=haproxy-lab.probe-of=${key}" | head -n 1)
  if [[ -z "${probe}" ]]; then
    # On the step's other cores when HAProxy has cores of its own
    # (LAB_CPUSET): its sampler passes are not HAProxy's core's work.
    probe=$(docker run -d --rm --network "container:${target}" --label "haproxy-lab.probe-of=${key}" \
      --label "haproxy-lab.probe-target=${target}" --memory 64m ${LAB_CPUSET:+--cpuset-cpus "${LAB_CPUSET}"} --entrypoint sleep \
      "$(docker inspect -f '{{.Config.Image}}' "${target}")" infinity) || return 1
    # The probes of the container's earlier starts (a restart), removed
    # behind: ~0.3 s a restart off the step's path.
    remove_probes "${target}" "${key}" >/dev/null 2>&1 &
  fi
  [[ -z "${LAB_CACHE_DIR}" ]] || echo "${key} ${probe}" >"${LAB_CACHE_DIR}/probe-$1" 2>/dev/null || true
  echo "${probe}"
}

# container_start_key ID: "ID@STARTED": ID's container as it runs now (a
# restart changes it), what a probe and a kept ss reading belong to.
container_start_key() {
  local started
  started=$(docker inspect -f '{{.State.StartedAt}}' "$1" 2>/dev/null) && [[ -n "${started}" ]] || return 1
  echo "$1@${started}"
}

# remove_probes [TARGET [KEEP]]: the probes of TARGET (a container id) but
# the one made for its start KEEP (instance_probe's key), else of every
# container that no longer runs.
remove_probes() {
  local probe target key running gone=()
  # Three docker calls in all: this runs behind a step after each restart.
  running=" $(docker ps -q --no-trunc | xargs) "
  while read -r probe target key; do
    [[ -n "${probe}" && ( -z "${2:-}" || "${key}" != "$2" ) ]] || continue
    if [[ "${target}" == "${1:-}" || "${running}" != *" ${target} "* ]]; then gone+=("${probe}"); fi
  done < <(docker ps -a --filter label=haproxy-lab.probe-target \
    --format '{{.ID}} {{.Label "haproxy-lab.probe-target"}} {{.Label "haproxy-lab.probe-of"}}')
  [[ ${#gone[@]} -eq 0 ]] || docker rm -f "${gone[@]}" >/dev/null 2>&1 || true
}

# remove_instance_probes: every HAProxy instance's probe (a run's end).
remove_instance_probes() {
  local instance target
  for instance in $(haproxy_instances); do
    target=$(instance_container "${instance}" 2>/dev/null) && remove_probes "${target}"
  done
  remove_probes
}

# probe_exec INSTANCE COMMAND...: COMMAND in INSTANCE's probe (instance_probe).
probe_exec() {
  local probe
  probe=$(instance_probe "$1") || return 1
  shift
  docker exec -i "${probe}" "$@"
}

# instance_socket_cli INSTANCE KEY COMMAND: COMMAND on the loopback TCP socket
# KEY (runtime_api, master_cli) of INSTANCE, from inside its container (the
# image has bash, no socat).
instance_socket_cli() {
  local address
  address=$(topology_value instance "$1" "$2")
  # shellcheck disable=SC2016 # expanded by the probe's bash
  probe_exec "$1" bash -c 'exec 3<>"/dev/tcp/${2%:*}/${2##*:}" && printf "%s\n" "$1" >&3 && cat <&3' _ "$3" "${address}"
}

# haproxy_cli COMMAND [INSTANCE]: a command on the runtime API of INSTANCE
# (the first one by default).
haproxy_cli() { instance_socket_cli "${2:-$(first_instance)}" runtime_api "$1"; }

# processes_cli COMMAND INSTANCE: COMMAND on the runtime API of every process
# of INSTANCE's container, their answers one after the other, in one call of
# its probe (a call per process took 0.3 s each: 8 s for 27 processes).
processes_cli() {
  local process apis=()
  for process in $(container_processes "$2"); do apis+=("$(topology_value instance "${process}" runtime_api)"); done
  # shellcheck disable=SC2016 # expanded by the probe's bash
  probe_exec "$2" bash -c 'command=$1; shift
    for address in "$@"; do
      exec 3<>"/dev/tcp/${address%:*}/${address##*:}" && printf "%s\n" "${command}" >&3 && cat <&3
      exec 3<&-
    done' _ "$1" "${apis[@]}"
}

# haproxy_master_cli COMMAND [INSTANCE]: a command on the master CLI (the
# loopback-only socket the master binds with -S, compose.yaml): it knows every
# worker and counts the reloads. It keeps a connection open: "; quit".
haproxy_master_cli() { instance_socket_cli "${2:-$(first_instance)}" master_cli "$1; quit"; }

# haproxy_reloads [INSTANCE]: "RELOADS FAILED", the master's count of reloads
# since it started and how many of them failed (its "show proc" line).
haproxy_reloads() {
  haproxy_master_cli "show proc" "${1:-}" | awk '$2 == "master" { failed = $5; gsub(/[^0-9]/, "", failed); print $3, failed + 0 }'
}

# haproxy_servers BACKEND [INSTANCE]: "name status address" per server, from "show stat".
haproxy_servers() { haproxy_cli "show stat" "${2:-}" | servers_in_stat "$1"; }

# servers_in_stat BACKEND: the same, from a "show stat" answer on stdin.
servers_in_stat() {
  awk -F, -v be="$1" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == be && $2 != "BACKEND" && $2 != "FRONTEND" {
      print $2, $col["status"], ($col["addr"] == "" ? "-" : $col["addr"])
    }'
}

# haproxy_info NAME [INSTANCE]: a field of HAProxy's "show info" (Pid,
# CurrConns, description...).
haproxy_info() { haproxy_cli "show info" "${2:-}" | sed -n "s/^$1: //p"; }

# description_is TEXT: every HAProxy instance runs the config whose
# "description" is TEXT.
description_is() {
  local instance
  for instance in $(haproxy_instances); do
    [[ "$(haproxy_info description "${instance}")" == "$1" ]] || return 1
  done
}

# haproxy_on_baseline: every HAProxy instance runs haproxy/haproxy.cfg; if
# one runs another config (a run that was killed), HAProxy is recreated:
# every start links the baseline back with its own listening sockets (a
# reload would keep the run's). Status 1 if the recreate failed.
haproxy_on_baseline() {
  description_is baseline && return 0
  log "HAProxy runs '$(haproxy_info description)', not haproxy/haproxy.cfg: recreating it"
  forget_containers
  compose up -d --wait --wait-timeout 60 --force-recreate --no-deps haproxy >/dev/null 2>&1
}

# haproxy_stat_sum PROXY_REGEX SVNAME COLUMN: COLUMN of "show stat" summed over
# the rows of the matching proxies (SVNAME FRONTEND, BACKEND or a server), over
# every HAProxy instance.
haproxy_stat_sum() {
  local container
  for container in $(haproxy_containers); do processes_cli "show stat" "${container}"; done | stat_sum "$@"
}

# stat_sum PROXY_REGEX SVNAME COLUMN: the same over "show stat" answers on stdin.
stat_sum() {
  awk -F, -v px="^($1)\$" -v sv="$2" -v column="$3" '
    /^# / { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 ~ px && $2 == sv { n += $col[column] }
    END { print n + 0 }'
}

# servers_up BACKEND N [BACKEND N ...]: every HAProxy instance sees exactly
# N servers of each BACKEND UP, each with an address (one "show stat" an
# instance).
servers_up() {
  local stat servers instance i want=("$@")
  for instance in $(haproxy_instances); do
    stat=$(haproxy_cli "show stat" "${instance}") || stat=""
    for ((i = 0; i + 1 < ${#want[@]}; i += 2)); do
      servers=$(servers_in_stat "${want[i]}" <<<"${stat}")
      [[ $(grep -c ' UP [0-9]' <<<"${servers}") -eq ${want[i + 1]} && $(grep -c ' UP' <<<"${servers}") -eq ${want[i + 1]} ]] || return 1
    done
  done
}

# sockets_probe INSTANCE ARGS...: scripts/probes/haproxy-sockets.mjs (what
# it prints, its arguments: sampler_args) in the lab's node image, in
# INSTANCE's container's network namespace, on HAProxy's other cores when it
# has its own (LAB_CPUSET). The program goes as an argument, not a mount:
# it runs on whichever engine runs HAProxy.
sockets_probe() {
  local target
  target=$(instance_container "$1") || return 1
  shift
  sockets_probe_in "${target}" "$@"
}

# sockets_probe_in CONTAINER ARGS...: the same in CONTAINER's network namespace.
sockets_probe_in() {
  local target="$1"
  shift
  docker run --rm -i --network "container:${target}" --read-only --cap-drop ALL --user 65534:65534 --memory 128m \
    --label haproxy-lab.probe-of=sockets ${LAB_CPUSET:+--cpuset-cpus "${LAB_CPUSET}"} --entrypoint node "$(env_value NODE_IMAGE)" \
    --input-type=module -e "$(<"${LAB_ROOT}/scripts/probes/haproxy-sockets.mjs")" _ "$@"
}

# sampler_args CONTAINER: what sockets_probe takes after HOST and EVERY for
# CONTAINER's processes (its runtime APIs, the ports and proxies counted), as
# the run's plan wrote them (scripts/labctl/plan/samplers.mjs).
sampler_args() {
  [[ -n "${LAB_RUN_DIR}" ]] || die "sampler_args $1: no run folder (LAB_RUN_DIR): the arguments come from a run's plan"
  local file="${LAB_RUN_DIR}/samplers/$1.args"
  [[ -f "${file}" ]] || die "${file#"${LAB_ROOT}/"} is missing: the plan writes one per HAProxy container"
  cat "${file}"
}

# haproxy_sockets [INSTANCE [HOST]]: sockets_probe's lines, once, for
# INSTANCE's container (the first by default).
haproxy_sockets() {
  local instance="${1:-$(first_instance)}" args
  mapfile -t args < <(sampler_args "${instance}")
  sockets_probe "${instance}" "${2:-0}" 0 "${args[@]}" </dev/null
}
