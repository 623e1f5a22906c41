# shellcheck shell=bash
# The one-host engine's operations (onehost_*), which engine.sh dispatches
# to unless the run is on a Swarm (engine-swarm.sh): the lab's containers
# through compose on this machine's engine.
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# onehost_instance_container INSTANCE: the id of INSTANCE's container (a stopped one too).
onehost_instance_container() {
  local service index id
  service=$(topology_value instance "$1" service) index=$(topology_value instance "$1" index)
  # A run knows its project (LAB_PROJECT): one docker call on Compose's own
  # labels, where compose ps takes ~0.25 s, a dozen times a step.
  if [[ -n "${LAB_PROJECT}" ]]; then
    # Once a run (LAB_CACHE_DIR), until the runner recreates or restarts
    # HAProxy (forget_containers): ~20 look-ups a step.
    if [[ -n "${LAB_CACHE_DIR}" ]] && read -r id 2>/dev/null <"${LAB_CACHE_DIR}/container-$1" && [[ -n "${id}" ]]; then
      echo "${id}"
      return 0
    fi
    id=$(docker ps -a -q --no-trunc --filter "label=com.docker.compose.project=${LAB_PROJECT}" \
      --filter "label=com.docker.compose.service=${service}" --filter label=com.docker.compose.oneoff=False \
      ${index:+--filter "label=com.docker.compose.container-number=${index}"} | head -n 1)
    [[ -n "${id}" ]] || return 1
    [[ -z "${LAB_CACHE_DIR}" ]] || echo "${id}" >"${LAB_CACHE_DIR}/container-$1" 2>/dev/null || true
    echo "${id}"
    return 0
  fi
  for id in $(compose ps -a -q "${service}"); do
    [[ -z "${index}" || "$(docker inspect -f '{{index .Config.Labels "com.docker.compose.container-number"}}' "${id}")" == "${index}" ]] \
      && { echo "${id}"; return 0; }
  done
  return 1
}

# onehost_instance_exec INSTANCE COMMAND...: COMMAND in INSTANCE's container.
onehost_instance_exec() {
  local target
  target=$(instance_compose_args "$1") || return 1
  # In a run: its container's id (instance_container, cached), docker exec.
  if [[ -n "${LAB_PROJECT}" ]]; then
    target=$(instance_container "$1") || return 1
    shift
    docker exec -i "${target}" "$@"
    return $?
  fi
  shift
  # shellcheck disable=SC2086 # "[--index N] SERVICE", words
  compose exec -T ${target} "$@"
}

# onehost_service_exec SERVICE COMMAND...: COMMAND in a container of SERVICE (stdin
# passed): the first, as compose exec picks it; in a run (LAB_PROJECT),
# found by its labels and run by docker exec.
onehost_service_exec() {
  local id
  if [[ -n "${LAB_PROJECT}" ]]; then
    id=$(lab_ps -q --no-trunc --filter "label=com.docker.compose.service=$1" \
      --filter label=com.docker.compose.container-number=1) || return 1
    [[ -n "${id}" ]] || { echo "${PROG}: service \"$1\" is not running" >&2; return 1; }
    shift
    docker exec -i "${id}" "$@"
    return $?
  fi
  compose exec -T "$@"
}

# onehost_node_exec COMMAND...: COMMAND in a running container of the lab's node
# image (the first backend's).
onehost_node_exec() { service_exec "$(topology_names backend | head -n 1)" "$@"; }

# onehost_backend_scale: the running replicas of each backend service of the
# topology, "backend-fast=N,backend-slow=N" (sorted by name).
onehost_backend_scale() {
  if [[ -n "${LAB_PROJECT}" ]]; then
    lab_ps --format '{{.Label "com.docker.compose.service"}}'
  else
    compose ps --format '{{.Service}}'
  fi | grep -xF -f <(topology_names backend) | sort | uniq -c \
    | awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1 }'
}

# onehost_running_containers [--profile P ...] [SERVICE ...]: "ID NAME" of the lab's
# running containers, read afresh (a Swarm's, on this engine:
# scripts/lib/engine-swarm.sh).
onehost_running_containers() {
  local ids args=() services=() i
  # In a run (LAB_PROJECT): one docker ps on Compose's labels, ~0.05 s where
  # compose ps and docker inspect take ~0.35 s, several times a step; the
  # services those profiles enable read once a run (run_services).
  if [[ -n "${LAB_PROJECT}" ]]; then
    for ((i = 1; i <= $#; i++)); do
      if [[ "${!i}" == --profile ]]; then i=$((i + 1)) args+=(--profile "${!i}"); else services+=("${!i}"); fi
    done
    [[ ${#services[@]} -gt 0 ]] || mapfile -t services < <(run_services "${args[@]}")
    [[ ${#services[@]} -gt 0 ]] || return 0
    lab_ps --no-trunc --format '{{.ID}} {{.Names}} {{.Label "com.docker.compose.service"}}' 2>/dev/null \
      | awk -v services="${services[*]}" 'BEGIN { n = split(services, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1 }
          $3 in want { print $1, $2 }'
    return 0
  fi
  mapfile -t ids < <(compose "$@" ps -q --no-trunc 2>/dev/null)
  [[ ${#ids[@]} -eq 0 ]] || docker inspect -f '{{.Id}} {{.Name}}' "${ids[@]}" 2>/dev/null | sed 's| /| |'
}

# onehost_readings_of_other_nodes cpu|memory|allowance: more lines of container_cpu's,
# container_memory's or container_allowance's for the lab's containers that
# this engine does not run (a Swarm's other nodes: scripts/lib/engine-swarm.sh).
# On one host every container is this engine's: none.
onehost_readings_of_other_nodes() { return 0; }

# onehost_collect_limits SIZED [COMPOSE_ARGS...]: the limits that cap held
# connections, read off the running lab and the Docker host's kernel (a Linux
# host or Docker Desktop's VM, seen from a container on the host network), as
# NAME=value lines for scripts/labctl/plan/preflight.mjs (readLimits): each
# HAProxy container's (INSTANCE_nofile, INSTANCE_memory_bytes, named by its
# first process: every process of it has that open-file limit), the first
# backend's, and each service of SIZED's (the load tools whose limits the
# preflight sizes: run.env's sized_services), each from its own container.
onehost_collect_limits() {
  local sized="$1" backend service
  shift
  echo "# the limits that cap held connections (scripts/lib/engine-onehost.sh onehost_collect_limits)"
  haproxy_limits
  backend=$(topology_names backend | head -n 1)
  echo "backend_nofile=$(service_nofile "${backend}")"
  echo "backend_memory_bytes=$(docker inspect -f '{{.HostConfig.Memory}}' "$(compose ps -q "${backend}" | head -n 1)")"
  for service in ${sized}; do
    echo "${service}_nofile=$(service_nofile "${service}" "$@")"
    echo "${service}_memory_bytes=$(service_memory "${service}" "$@")"
  done
  host_limits
}

# onehost_start_again INSTANCE ID: INSTANCE's stopped container ID running again (on
# a Swarm, a new task's: scripts/lib/engine-swarm.sh).
onehost_start_again() { docker start "$2" >/dev/null 2>&1; }

# onehost_scale_services --scale SVC=N...: the lab's services running, at that scale,
# none recreated (compose's healthchecks waited for). A Swarm's: scripts/lib/engine-swarm.sh.
onehost_scale_services() {
  # shellcheck disable=SC2046 # one service per word
  compose up -d --wait --no-recreate "$@" $(lab_services)
}

# onehost_recreate_services --scale SVC=N...: the lab's services with the settings
# exported now, recreated where they changed, at that scale.
onehost_recreate_services() {
  # shellcheck disable=SC2046 # one service per word
  compose up -d --wait "$@" $(lab_services)
}

# The load tool's life on one host (a Swarm's: scripts/lib/engine-swarm.sh), each
# taking the step's folder: compose starts its replicas, Docker waits for
# them, and they write their files into the checkout's results folder.
# onehost_start_tool DIR ENV_LINES: its replicas, with the step's load environment.
onehost_start_tool() {
  (
    use_load_env "$1" "$2" || exit 1
    compose --profile "$(step_value "$1" profile)" up -d --no-deps --scale "$(step_value "$1" service)=$(step_value "$1" replicas)" \
      "$(step_value "$1" service)" >/dev/null 2>&1
  )
}

# onehost_tool_ids DIR [DOCKER_PS_ARGS...]: the load tool's replicas (stopped ones
# too), by Compose's labels in a run (lab_ps), else by compose ps.
onehost_tool_ids() {
  local dir="$1"
  shift
  if [[ -n "${LAB_PROJECT}" ]]; then
    lab_ps -a -q --no-trunc --filter "label=com.docker.compose.service=$(step_value "${dir}" service)" "$@"
  else
    compose --profile "$(step_value "${dir}" profile)" ps -a -q --no-trunc "$(step_value "${dir}" service)" 2>/dev/null
  fi
}

# onehost_wait_tool_ended DIR: returns once every replica has ended (one docker call
# for the whole load, not one a second).
onehost_wait_tool_ended() {
  local ids
  mapfile -t ids < <(onehost_tool_ids "$1")
  [[ ${#ids[@]} -eq 0 ]] || docker wait "${ids[@]}" >/dev/null 2>&1 || true
}

# onehost_tool_exit_codes DIR: each replica's exit code, "," between them (by
# replica name, as compose ps lists them; one that runs: 0, as there).
onehost_tool_exit_codes() {
  if [[ -n "${LAB_PROJECT}" ]]; then
    lab_ps -a --filter "label=com.docker.compose.service=$(step_value "$1" service)" --format '{{.Names}} {{.Status}}' \
      | sort | awk '{ print (match($0, /Exited \(-?[0-9]+\)/) ? substr($0, RSTART + 8, RLENGTH - 9) : 0) }' | paste -sd, -
    return $?
  fi
  compose --profile "$(step_value "$1" profile)" ps -a --format '{{.ExitCode}}' "$(step_value "$1" service)" | paste -sd, -
}

# onehost_tool_finished DIR: what the replicas wrote besides their files (already in
# the step's folder here): their own log (k6: why requests failed), into
# DIR/SERVICE-log.txt; then the replicas removed.
onehost_tool_finished() {
  local service profile
  service=$(step_value "$1" service) profile=$(step_value "$1" profile)
  service_log "" "${service}" --profile "${profile}" >"$1/${service}-log.txt" 2>&1 || true
  if [[ -n "${LAB_PROJECT}" ]]; then
    local ids
    mapfile -t ids < <(onehost_tool_ids "$1")
    [[ ${#ids[@]} -eq 0 ]] || docker rm -f "${ids[@]}" >/dev/null 2>&1
    return 0
  fi
  compose --profile "${profile}" rm -sf "${service}" >/dev/null 2>&1
}

# onehost_require_stack: every service of the lab runs, no load tool of the run does.
onehost_require_stack() {
  local running service
  running=$(compose ps --status running --format '{{.Service}}' 2>/dev/null || true)
  for service in $(lab_services); do
    grep -qx "${service}" <<<"${running}" \
      || die "the lab is not running (no ${service}): start it with scripts/up.sh"
  done
  running=$(compose "${profile_args[@]}" ps --status running --format '{{.Service}}' 2>/dev/null || true)
  for service in ${run_load_services}; do
    if grep -qx "${service}" <<<"${running}"; then
      die "a load generator is already running (${service}): wait for it or stop it with 'docker compose ${profile_args[*]} rm -sf ${service}'"
    fi
  done
}

# onehost_stop_load_tools: every load tool's replicas (run.env), whichever step ran.
onehost_stop_load_tools() {
  [[ -n "${run_load_services}" ]] || return 0
  # shellcheck disable=SC2086 # one service per word
  compose "${profile_args[@]}" rm -sf ${run_load_services} >/dev/null 2>&1 || true
}
