# shellcheck shell=bash
# Docker and Compose: the lab's project, its containers, the engine (labctl)
# and its images, the tools' HTTP ends (sourced by common.sh).
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The oldest Compose the lab supports: the oldest one its whole test suite
# passes on (Debian 13's docker-compose; .ci/run runs the tests that read
# Compose's and Docker's output on it). Older ones lack COMPOSE_ENV_FILES
# (docker/compose#11061), which the offline images rely on.
readonly COMPOSE_FLOOR=2.26.1
# Where the floor's plugin lives, a DOCKER_CONFIG of its own (.ci/run
# installs it there; the floor group, tests/floor.sh, compares it).
FLOOR_DOCKER_CONFIG="${FLOOR_DOCKER_CONFIG:-${HOME}/.docker-compose-floor}"
readonly COMPOSE_FLOOR_FIX="install a newer Compose v2 plugin: Docker's docker-compose-plugin package (https://docs.docker.com/compose/install/linux/), Debian 13's docker-compose, or update Docker Desktop"

# The Docker context of this machine's own engine when the lab's is another
# (a Swarm run: scripts/lib/engine-swarm.sh, exported for the scripts it runs);
# "": the one docker talks to.
LAB_LOCAL_CONTEXT="${LAB_LOCAL_CONTEXT:-}"

# The oldest node on the host the engine's reading commands run on.
readonly HOST_NODE_FLOOR=20

# The lab's Compose project, once a run has read it (compose_project).
LAB_PROJECT=""
# A run's folder of cached container and probe ids (scripts/scenario.sh).
LAB_CACHE_DIR=""

# compose ARGS...: docker compose on the lab's compose.yaml.
compose() { docker compose --project-directory "${LAB_ROOT}" "$@"; }

# present IMAGE: IMAGE is on this machine.
present() { docker image inspect "$1" >/dev/null 2>&1; }

# compose_version: the version of 'docker compose' as MAJOR.MINOR.PATCH
# ("2.26.1" from Debian's "2.26.1-4" or "v2.26.1"); "" when none answers.
compose_version() {
  docker compose version --short 2>/dev/null | sed -n 's/^v\{0,1\}\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1
}

# version_at_least VERSION FLOOR: VERSION (MAJOR.MINOR.PATCH) >= FLOOR.
version_at_least() {
  [[ "$(printf '%s\n' "$2" "$1" | sort -t. -k1,1n -k2,2n -k3,3n | head -n 1)" == "$2" ]]
}

# require_docker: one clear line if Docker or a Compose v2 at least
# COMPOSE_FLOOR is missing.
require_docker() {
  local version
  command -v docker >/dev/null 2>&1 \
    || die "docker not found: install Docker (with Compose v2) first"
  docker info >/dev/null 2>&1 \
    || die "cannot reach the Docker engine: start Docker (or dockerd) and retry"
  docker compose version >/dev/null 2>&1 \
    || die "Docker Compose v2 not found ('docker compose'): install the compose plugin"
  version=$(compose_version)
  version_at_least "${version:-0.0.0}" "${COMPOSE_FLOOR}" \
    || die "Docker Compose ${version:-of unknown version} is older than ${COMPOSE_FLOOR}, the oldest the lab supports: ${COMPOSE_FLOOR_FIX}"
}

# container_nofile IMAGE [N]: "ulimit -n" in a container of IMAGE (started
# with --ulimit nofile=N:N), or the default hard limit (dockerd's own); docker's error if none.
container_nofile() {
  if [[ -n "${2:-}" ]]; then
    docker run --rm --network none --ulimit "nofile=$2:$2" --entrypoint sh "$1" -c 'ulimit -n' 2>&1
  else
    docker run --rm --network none --entrypoint sh "$1" -c 'ulimit -Hn' 2>&1
  fi
}

# fit_nofile: HAPROXY_NOFILE and NOFILE within what Docker may give a
# container here. Docker cannot give a container more open files than
# dockerd's own limit (then "error setting rlimit type 7: operation not
# permitted"): a value from the env files above it is lowered to the limit
# (exported, one line saying so); one set in the environment stops the run
# with the fix. Measured in a container of NODE_IMAGE (pulled if absent, as
# compose up would; not measured when that fails). What starts the lab's
# containers calls it first: scripts/up.sh, scenario.sh and test.sh.
fit_nofile() {
  local image name value want=0 limit lowered=""
  image=$(env_value NODE_IMAGE)
  present "${image}" || docker pull -q "${image}" >/dev/null 2>&1 || return 0
  for name in HAPROXY_NOFILE NOFILE; do
    value=$(env_value "${name}")
    [[ "${value}" =~ ^[0-9]+$ ]] || die "${name}='${value}' is not a whole number: set it in .env (e.g. ${name}=1048576)"
    ((value <= want)) || want=${value}
  done
  # One container start when the limit allows it (the usual case).
  [[ "$(container_nofile "${image}" "${want}")" != "${want}" ]] || return 0
  limit=$(container_nofile "${image}" || true)
  [[ "${limit}" =~ ^[0-9]+$ ]] || return 0
  for name in HAPROXY_NOFILE NOFILE; do
    value=$(env_value "${name}")
    ((value > limit)) || continue
    [[ -z "${!name:-}" ]] \
      || die "${name}=${value} is more open files than Docker may give a container here (at most ${limit}, dockerd's own limit): export ${name}=${limit}, or raise dockerd's LimitNOFILE (sudo systemctl edit docker)"
    export "${name}=${limit}"
    lowered+="${lowered:+ }${name}=${limit}"
  done
  [[ -z "${lowered}" ]] || log "Docker may give a container at most ${limit} open files here (dockerd's limit): using ${lowered}"
}

# labctl ARGS...: scripts/labctl/cli.mjs (the engine) in the lab's node image
# (the host needs no node), on this machine's engine: it reads the checkout.
labctl() {
  docker ${LAB_LOCAL_CONTEXT:+--context "${LAB_LOCAL_CONTEXT}"} run --rm -i --network none --user "${LAB_UID}:${LAB_GID}" \
    -v "${LAB_ROOT}:/lab" -w /lab "$(env_value NODE_IMAGE)" node scripts/labctl/cli.mjs "$@"
}

# host_node: this host has a node at least HOST_NODE_FLOOR (not needed:
# with one, a scenario's --help and option check need no Docker).
host_node() {
  local version
  version=$(node --version 2>/dev/null) || return 1
  version="${version#v}"
  [[ "${version%%.*}" =~ ^[0-9]+$ ]] && ((${version%%.*} >= HOST_NODE_FLOOR))
}

# require_node_image: NODE_IMAGE on this machine (pulled if absent, as compose
# would), else one line: what is missing and how to get it, offline too.
require_node_image() {
  local image out
  image=$(env_value NODE_IMAGE)
  present "${image}" && return 0
  # The offline stand-ins (offline.env) are built here, never pulled.
  [[ "${image}" != haproxy-lab/* ]] \
    || die "the lab's node image ${image} is not built yet (an offline stand-in): run scripts/offline-images.sh"
  out=$(docker pull -q "${image}" 2>&1) && return 0
  out=$(sed -n '/[^[:space:]]/{p;q;}' <<<"${out}")
  die "the lab's node image ${image} is not on this machine and could not be pulled (${out##*: }): with no registry, run scripts/offline-images.sh, then export COMPOSE_ENV_FILES=.env,offline.env"
}

# labctl_or_host_node ARGS...: labctl for the engine's commands that only
# read the repository (list, describe, plan --check), so they answer before
# the lab runs:
# in the lab's node image when it is here, else on this host's node (at least
# HOST_NODE_FLOOR), else in the image once Docker and the image are there
# (require_docker, require_node_image: their one line when not).
labctl_or_host_node() {
  if docker image inspect "$(env_value NODE_IMAGE)" >/dev/null 2>&1; then
    labctl "$@"
  elif host_node; then
    node scripts/labctl/cli.mjs "$@"
  else
    require_docker
    require_node_image
    labctl "$@"
  fi
}

# lab_services: every service the lab needs running (HAProxy's, the
# backends, the others), each once, in the table's order.
lab_services() {
  {
    local instance
    for instance in $(haproxy_instances); do topology_value instance "${instance}" service; done
    topology_names backend
    topology_names service
  } | awk '!seen[$0]++'
}

# instance_compose_args INSTANCE: "[--index N] SERVICE" of INSTANCE's container.
instance_compose_args() {
  local service index
  service=$(topology_value instance "$1" service)
  [[ -n "${service}" ]] || die "no HAProxy instance '$1' in topology.txt (instances: $(haproxy_instances | paste -sd' ' -))"
  index=$(topology_value instance "$1" index)
  echo "${index:+--index ${index} }${service}"
}

# lab_ps DOCKER_PS_ARGS...: docker ps on the run's Compose project
# (LAB_PROJECT), its services' own containers (no one-off ones), found by
# Compose's labels: one docker call, ~0.05 s, where the compose CLI takes
# ~0.25 s, a dozen times a step.
lab_ps() {
  docker ps --filter "label=com.docker.compose.project=${LAB_PROJECT}" \
    --filter label=com.docker.compose.oneoff=False "$@"
}

# compose_project: the lab's Compose project as Compose resolves it
# (COMPOSE_PROJECT_NAME, else compose.yaml's name): a run's containers' label,
# a Swarm stack's name.
compose_project() { compose config 2>/dev/null | sed -n 's/^name: //p'; }

# forget_containers: the run's cached container and probe ids
# (instance_container, instance_probe) gone: after the runner recreates or
# restarts HAProxy or scales the lab. (A probe kept would be checked, and
# after a restart found stale: a docker call for nothing.)
forget_containers() { [[ -z "${LAB_CACHE_DIR}" ]] || rm -f "${LAB_CACHE_DIR}"/container-* "${LAB_CACHE_DIR}"/probe-*; }

# lab_containers [--profile P ...] [SERVICE ...]: "ID NAME" of every running
# container of the lab (with the profiles' ones; only SERVICE's when named).
# While a load is watched, with no SERVICE named, the ones watch_load found
# once (LAB_CONTAINERS): compose ps and docker inspect every second cost
# ~150 ms of CPU each time.
lab_containers() {
  local args=("$@") i found="${LAB_CONTAINERS:-}"
  # A SERVICE named (an argument not of a --profile pair): read afresh.
  for ((i = 0; i < ${#args[@]}; i++)); do
    if [[ "${args[i]}" == --profile ]]; then i=$((i + 1)); else found=""; fi
  done
  if [[ -n "${found}" ]]; then echo "${found}"; return 0; fi
  running_containers "$@"
}

# run_services [--profile P ...]: the services Compose runs with those
# profiles (compose config --services), once a run for each set of profiles
# (LAB_CACHE_DIR).
run_services() {
  local key="${LAB_CACHE_DIR}/services${*// /_}"
  if [[ -n "${LAB_CACHE_DIR}" && -s "${key}" ]]; then cat "${key}"; return 0; fi
  if [[ -n "${LAB_CACHE_DIR}" ]]; then
    compose "$@" config --services 2>/dev/null | tee "${key}"
  else
    compose "$@" config --services 2>/dev/null
  fi
}

# http_get URL_PATH [HOST PORT]: status line, headers and body of a GET
# through plain bash (/dev/tcp, HTTP/1.0), from the host.
http_get() {
  local path="$1" host="${2:-127.0.0.1}" port="${3:-$(env_value HAPROXY_HTTP_PORT)}"
  exec 4<>"/dev/tcp/${host}/${port}" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "${path}" "${host}" >&4
  cat <&4
  exec 4<&-
}

# urlencode STRING
urlencode() {
  local s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "${c}" in
      [a-zA-Z0-9.~_-]) out+="${c}" ;;
      *) out+=$(printf '%%%02X' "'${c}") ;;
    esac
  done
  echo "${out}"
}

# prom_query PROMQL: the first value of an instant query ("" when no data),
# asked from inside the Prometheus container (its image has wget).
prom_query() {
  service_exec prometheus wget -q -O - \
    "http://127.0.0.1:9090/api/v1/query?query=$(urlencode "$1")" \
    | sed -n 's/.*"value":\[[^,]*,"\([^"]*\)"\].*/\1/p'
}

# service_log SINCE SERVICE [COMPOSE_ARGS...]: what SERVICE's containers wrote
# since SINCE ("": all), stdout and stderr, as the engine stored it: docker logs of
# each container, not "docker compose logs", whose display differs between
# Compose versions (2.26 starts every line with the terminal sequence ESC[2K).
# With more than one container, each line starts with "NAME | ".
service_log() {
  local service="$2" since=() ids id name
  [[ -z "$1" ]] || since=(--since "$1")
  shift 2
  if [[ -n "${LAB_PROJECT}" ]]; then
    # In a run: by Compose's labels (lab_ps), ~0.05 s where compose ps takes ~0.3 s.
    ids=$(lab_ps -a -q --no-trunc --filter "label=com.docker.compose.service=${service}") || return 1
  else
    ids=$(compose "$@" ps -a -q "${service}" 2>/dev/null) || return 1
  fi
  for id in ${ids}; do
    if [[ $(wc -w <<<"${ids}") -eq 1 ]]; then
      docker logs ${since[@]+"${since[@]}"} "${id}" 2>&1
    else
      name=$(docker inspect -f '{{.Name}}' "${id}")
      docker logs ${since[@]+"${since[@]}"} "${id}" 2>&1 | sed "s|^|${name#/} \| |"
    fi
  done
}

# instance_log SINCE INSTANCE: what INSTANCE's HAProxy wrote since SINCE ("":
# all), as the engine stored it (see service_log).
instance_log() {
  local since=() id
  [[ -z "$1" ]] || since=(--since "$1")
  id=$(instance_container "$2") || return 1
  docker logs ${since[@]+"${since[@]}"} "${id}" 2>&1
}
