#!/usr/bin/env bash
# Usage: scripts/swarm.sh COMMAND [ARGS]
#
# The lab on a Docker Swarm of several machines: compose.yaml with
# compose.swarm.yaml (placement) as a stack (scripts/labctl/swarm/stack.mjs
# says what Swarm reads differently). HAProxy runs alone on the node labelled
#   docker node update --label-add haproxy-lab.role=haproxy NODE
# with Prometheus, haproxy-exporter and Grafana; the backends on the others.
#
#   deploy [--scale SERVICE=N]... [--without SERVICE]...
#                     deploy (or update) the stack, wait until every service
#                     runs, and print the lab's addresses (on the HAProxy node)
#   status            each task of the stack: its node, state and error
#   down              remove the stack (each node keeps its volumes)
#   practice up [N]   a practice Swarm of N nodes (default 3, at most 9) on
#                     this machine, Docker-in-Docker containers of DIND_IMAGE:
#                     node 1 the manager, labelled for HAProxy; the lab's
#                     images that this machine has are loaded into every node
#   practice down     remove the practice Swarm, its nodes and their disks
#
# The Swarm is the Docker context SWARM_CONTEXT names (.env; empty: the engine
# docker talks to, e.g. on a manager node). `practice up` makes the context
# haproxy-lab-practice:
#   SWARM_CONTEXT=haproxy-lab-practice scripts/swarm.sh deploy
# Scenarios run on the deployed stack with scripts/scenario.sh SCENARIO --swarm
# (SWARM_CONTEXT: the HAProxy node's engine): the load tools on the other nodes.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="swarm"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly PRACTICE="haproxy-lab-practice"
readonly HAPROXY_LABEL="haproxy-lab.role=haproxy"
# Practice nodes' engines listen on no address: each on a unix socket in a
# folder of this machine only its user reaches (mode 0700), one per node,
# which the node's container mounts. A node runs privileged: an engine
# answering on tcp (the dind image's default, 2375 without TLS) would give
# whoever reaches the bridge this machine.
readonly PRACTICE_SOCKETS="${XDG_RUNTIME_DIR:-${HOME}/.cache}/${PRACTICE}"
readonly READY_TIMEOUT=300
work_dir=""
# SWARM_PUBLISH_ADMIN, read and checked once by deploy.
publish_admin=0
# 1 while practice up makes nodes: a failed one removes what it made.
practice_making=0

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# shellcheck disable=SC2329 # run by the EXIT trap
cleanup() {
  local rc=$?
  [[ -z "${work_dir}" ]] || rm -rf "${work_dir}"
  if [[ ${rc} -ne 0 && ${practice_making} -eq 1 ]]; then
    practice_down >/dev/null 2>&1 || true
    echo "${PROG}: the practice Swarm was not made; what was started is removed" >&2
  fi
  return 0
}
trap cleanup EXIT

# swarm_docker ARGS...: docker on the Swarm (SWARM_CONTEXT's engine).
swarm_docker() {
  local context
  context=$(env_value SWARM_CONTEXT)
  docker ${context:+--context "${context}"} "$@"
}

# require_manager: SWARM_CONTEXT's engine manages a Swarm, or one line and exit 1.
require_manager() {
  local context manager
  context=$(env_value SWARM_CONTEXT)
  manager=$(swarm_docker info -f '{{.Swarm.ControlAvailable}}' 2>/dev/null) \
    || die "cannot reach the Docker engine of context '${context:-current}': check SWARM_CONTEXT (docker context ls), or make one: scripts/swarm.sh practice up"
  [[ "${manager}" == "true" ]] \
    || die "the engine of context '${context:-current}' is no Swarm manager: run docker swarm init on a manager and set SWARM_CONTEXT to it, or scripts/swarm.sh practice up"
}

# haproxy_node: the one node labelled for HAProxy, or one line and exit 1.
haproxy_node() {
  local nodes
  nodes=$(swarm_docker node ls -q --filter "node.label=${HAPROXY_LABEL}")
  [[ -n "${nodes}" ]] \
    || die "no node is labelled for HAProxy: docker node update --label-add ${HAPROXY_LABEL} NODE (docker node ls lists them)"
  [[ $(wc -l <<<"${nodes}") -eq 1 ]] \
    || die "$(wc -l <<<"${nodes}") nodes are labelled for HAProxy, the lab runs one: docker node update --label-rm haproxy-lab.role NODE on all but one"
  echo "${nodes}"
}

# stack_file FILE ARGS...: the stack, as docker stack deploy takes it (ARGS:
# labctl stack's --without SERVICE and --scale SERVICE=N).
stack_file() {
  local file="$1" files=(-f "${LAB_ROOT}/compose.yaml" -f "${LAB_ROOT}/compose.swarm.yaml")
  shift
  [[ "${publish_admin}" == 0 ]] || files+=(-f "${LAB_ROOT}/compose.swarm-admin.yaml")
  compose "${files[@]}" config --format json >"${work_dir}/compose.json" \
    || die "docker compose config failed on ${files[*]//"${LAB_ROOT}/"/} (its output above)"
  local error
  error=$(labctl stack --host-root "${LAB_ROOT}" "$@" <"${work_dir}/compose.json" 2>&1 >"${file}") \
    || die "${error#scenario: }"
}

# wait_ready STACK: every service of STACK has all its tasks running (a
# job's: completed, "0/1 (1/1 completed)"), with progress every 10 s; one line and exit 1 after READY_TIMEOUT.
wait_ready() {
  local start=${SECONDS} waiting last=0
  while true; do
    waiting=$(swarm_docker service ls --filter "label=com.docker.stack.namespace=$1" --format '{{.Name}} {{.Replicas}}' \
      | awk '{ split($2, r, "/"); if ($4 == "completed)") { split($3, r, /[(\/]/); r[1] = r[2]; r[2] = r[3] }
               if (r[1] != r[2] || r[2] == 0) print $1 " " $2 }')
    [[ -n "${waiting}" ]] || return 0
    if ((SECONDS - start > READY_TIMEOUT)); then
      awk '{ print "  not running: " $0 }' <<<"${waiting}" >&2
      die "the stack's services above are not running after ${READY_TIMEOUT} s: scripts/swarm.sh status says where each task is and why"
    fi
    if ((SECONDS - last >= 10)); then
      log "waiting for $(wc -l <<<"${waiting}") services: $(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' <<<"${waiting}")"
      last=${SECONDS}
    fi
    sleep 2
  done
}

# addresses NODE GRAFANA: where the lab answers (the ports are published on
# NODE); GRAFANA 0: the stack has none.
addresses() {
  local addr
  addr=$(swarm_docker node inspect -f '{{.Status.Addr}}' "$1")
  echo "  the app through HAProxy  http://${addr}:$(env_value HAPROXY_HTTP_PORT)/fast"
  echo "                           https://${addr}:$(env_value HAPROXY_HTTPS_PORT)/fast"
  if [[ "${publish_admin}" == 1 ]]; then
    echo "  HAProxy stats            http://${addr}:$(env_value HAPROXY_STATS_PORT)/stats"
    echo "  Prometheus               http://${addr}:$(env_value PROMETHEUS_PORT)"
    [[ "$2" -eq 0 ]] || echo "  Grafana                  http://${addr}:$(env_value GRAFANA_PORT)"
  fi
  echo "(published on every address of that node: Swarm binds no single one)"
  [[ "${publish_admin}" == 1 ]] \
    || echo "HAProxy's stats and metrics, Prometheus and Grafana stay on the stack's network (SWARM_PUBLISH_ADMIN=0); each run's report.md and chart.svg have what they measured"
}

deploy() {
  local args=() stack node grafana resolve=always with_grafana=1
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --scale)
        [[ "${2:-}" =~ ^[a-z][a-z0-9-]*=[0-9]+$ ]] || die "--scale needs SERVICE=N, e.g. --scale backend-slow=3"
        args+=(--scale "$2"); shift ;;
      --without)
        [[ -n "${2:-}" ]] || die "--without needs a service, e.g. --without grafana"
        [[ "$2" != grafana ]] || with_grafana=0
        args+=(--without "$2"); shift ;;
      *) die "unknown argument '$1' (scripts/swarm.sh --help)" ;;
    esac
    shift
  done
  publish_admin=$(env_value SWARM_PUBLISH_ADMIN)
  case "${publish_admin}" in
    0) ;;
    1) log "warning: SWARM_PUBLISH_ADMIN=1: HAProxy's stats and metrics, Prometheus (it accepts remote write) and Grafana will answer anyone who reaches HAProxy's node, on every address it has" ;;
    *) die "SWARM_PUBLISH_ADMIN is '${publish_admin}': set it to 0 (only the app's ports) or 1 (the admin interfaces too) in .env" ;;
  esac
  require_manager
  node=$(haproxy_node)
  stack=$(compose_project)
  [[ -n "${stack}" ]] || die "docker compose config gave no project name: run it and fix what it says"
  work_dir=$(mktemp -d)
  # Practice nodes have the images loaded, no registry to ask for digests.
  [[ "$(env_value SWARM_CONTEXT)" != "${PRACTICE}" ]] || resolve=never
  grafana=$(env_value GRAFANA_IMAGE)
  if ! swarm_docker image inspect "${grafana}" >/dev/null 2>&1 && ! swarm_docker pull -q "${grafana}" >/dev/null 2>&1; then
    args+=(--without grafana) with_grafana=0
    log "without Grafana: ${grafana} is not on the manager and no registry it reaches has it; the charts instead: each scenario run's chart.svg and report.md"
  fi
  stack_file "${work_dir}/stack.json" ${args[@]+"${args[@]}"}
  log "deploying stack ${stack} ($(grep -c '"image"' "${work_dir}/stack.json") services) on the Swarm of context '$(env_value SWARM_CONTEXT)'"
  swarm_docker stack deploy --detach=true --resolve-image "${resolve}" -c "${work_dir}/stack.json" "${stack}" \
    || die "docker stack deploy failed (its output above)"
  wait_ready "${stack}"
  log "the lab is up on the Swarm; HAProxy's node is $(swarm_docker node inspect -f '{{.Description.Hostname}}' "${node}"):"
  addresses "${node}" "${with_grafana}"
}

status() {
  local stack
  require_manager
  stack=$(compose_project)
  # Every task, the ones Swarm gave up on too: their error says why.
  swarm_docker stack ps --no-trunc --format '{{.Name}}\t{{.Node}}\t{{.DesiredState}}\t{{.CurrentState}}\t{{.Error}}' "${stack}" \
    || die "no stack ${stack} on this Swarm: scripts/swarm.sh deploy"
}

down() {
  local stack
  require_manager
  stack=$(compose_project)
  swarm_docker stack rm "${stack}" >/dev/null 2>&1 || { log "no stack ${stack} on this Swarm"; return 0; }
  # The network goes last, once every task is gone.
  local start=${SECONDS}
  while swarm_docker network inspect "${stack}_lab" >/dev/null 2>&1; do
    ((SECONDS - start < 60)) || die "stack ${stack}'s network is still there after 60 s: docker network rm ${stack}_lab"
    sleep 1
  done
  log "stack ${stack} removed"
}

# practice_nodes: the practice nodes' container names, in order.
practice_nodes() {
  docker ps -a --filter "label=${PRACTICE}.node" --format '{{.Names}}' | sort -V
}

node_address() { docker inspect -f "{{(index .NetworkSettings.Networks \"${PRACTICE}\").IPAddress}}" "$1"; }

# node_socket NODE: where NODE's engine answers on this machine.
node_socket() { echo "${PRACTICE_SOCKETS}/$1/docker.sock"; }

# node_docker NODE ARGS...: docker on a practice node's own engine.
node_docker() {
  local node="$1"
  shift
  docker -H "unix://$(node_socket "${node}")" "$@"
}

# start_node NAME: a Docker-in-Docker node. --privileged first, as dind
# expects; an engine that cannot grant every capability (a container without
# CAP_SYS_RESOURCE, such as this project's CI) gets all it can instead, with
# /proc/sys writable and the host's cgroups mounted: what dockerd needs.
start_node() {
  local image common=() output
  image=$(env_value DIND_IMAGE)
  mkdir -p "${PRACTICE_SOCKETS}/$1"
  common=(-d --name "$1" --hostname "${1#"${PRACTICE}"-}" --label "${PRACTICE}.node=$1" --network "${PRACTICE}"
    -e DOCKER_TLS_CERTDIR= -v "$1:/var/lib/docker" -v "${PRACTICE_SOCKETS}/$1:/run/practice")
  # dockerd named (the image's contract: a command that is not a flag runs as
  # given), so it gets no tcp listener: its own socket, for the node's
  # containers (container-exporter), and the one this machine reaches, in the
  # group of the user who made the Swarm; its containers' cgroups under the
  # node's own name.
  local flags=(dockerd --host=unix:///var/run/docker.sock --host=unix:///run/practice/docker.sock
    "--group=$(id -g)" "--cgroup-parent=/$1")
  output=$(docker run --privileged "${common[@]}" "${image}" "${flags[@]}" 2>&1) && return 0
  docker rm -f "$1" >/dev/null 2>&1 || true
  [[ "${output}" == *"apply caps"* ]] || die "could not start practice node $1: ${output##*$'\n'}"
  docker run --cap-add ALL --cap-drop SYS_RESOURCE --security-opt seccomp=unconfined \
    --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
    -v /sys/fs/cgroup:/sys/fs/cgroup "${common[@]}" "${image}" "${flags[@]}" >/dev/null \
    || die "could not start practice node $1 (docker's error above)"
}

# wait_engine NODE: the node's engine answers, or one line and exit 1 (the
# node stopped, or 60 s passed).
wait_engine() {
  local start=${SECONDS}
  until node_docker "$1" info >/dev/null 2>&1; do
    [[ "$(docker inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" == "true" ]] \
      || die "practice node $1 stopped: $(docker logs --tail 1 "$1" 2>&1) (is DIND_IMAGE a dind image?)"
    ((SECONDS - start < 60)) || die "practice node $1's engine did not answer in 60 s: docker logs $1"
    sleep 1
  done
}

# load_images NODE...: the lab's images this machine has, into every NODE.
load_images() {
  local images=() image tar pids=() node
  for image in $(compose --profile '*' config --images 2>/dev/null | sort -u); do
    present "${image}" && images+=("${image}")
  done
  [[ ${#images[@]} -gt 0 ]] || { log "no lab image on this machine to load: the nodes pull their own"; return 0; }
  tar="${work_dir}/images.tar"
  log "loading ${#images[@]} images into $# nodes (docker save | docker load; about a minute)"
  docker save -o "${tar}" "${images[@]}"
  for node in "$@"; do
    node_docker "${node}" load -q -i "${tar}" >/dev/null &
    pids+=($!)
  done
  for node in "${pids[@]}"; do wait "${node}" || die "loading the images into a practice node failed"; done
}

practice_up() {
  local count="${1:-3}" nodes=() i manager token address image
  [[ "${count}" =~ ^[2-9]$ ]] || die "practice up takes a node count from 2 to 9, not '${count}'"
  [[ -z "$(practice_nodes)" ]] || die "a practice Swarm exists ($(practice_nodes | xargs)): scripts/swarm.sh practice down first"
  image=$(env_value DIND_IMAGE)
  present "${image}" || docker pull -q "${image}" >/dev/null \
    || die "${image} (DIND_IMAGE) is not on this machine and could not be pulled: offline, build it with scripts/offline-images.sh"
  work_dir=$(mktemp -d)
  practice_making=1
  mkdir -p "${PRACTICE_SOCKETS}"
  # This user's, reached by no one else: the nodes' engines are root.
  [[ -O "${PRACTICE_SOCKETS}" ]] \
    || die "${PRACTICE_SOCKETS} is not this user's own (the practice nodes' engines answer there): remove it, then practice up again"
  chmod 0700 "${PRACTICE_SOCKETS}"
  docker network create --label "${PRACTICE}.node=network" "${PRACTICE}" >/dev/null 2>&1 || true
  for ((i = 1; i <= count; i++)); do nodes+=("${PRACTICE}-node${i}"); done
  log "starting ${count} nodes (${image}): ${nodes[*]}"
  for i in "${nodes[@]}"; do start_node "${i}"; done
  for i in "${nodes[@]}"; do wait_engine "${i}"; done
  manager="${nodes[0]}" address=$(node_address "${nodes[0]}")
  node_docker "${manager}" swarm init --advertise-addr "${address}" >/dev/null
  token=$(node_docker "${manager}" swarm join-token -q worker)
  for i in "${nodes[@]:1}"; do
    node_docker "${i}" swarm join --token "${token}" "${address}:2377" >/dev/null
  done
  node_docker "${manager}" node update --label-add "${HAPROXY_LABEL}" node1 >/dev/null
  docker context rm -f "${PRACTICE}" >/dev/null 2>&1 || true
  docker context create "${PRACTICE}" --description "scripts/swarm.sh practice" \
    --docker "host=unix://$(node_socket "${manager}")" >/dev/null 2>&1 \
    || die "could not create the Docker context ${PRACTICE}: docker context ls"
  load_images "${nodes[@]}"
  practice_making=0
  log "a Swarm of ${count} nodes: node1 (manager, labelled for HAProxy), the others workers:"
  node_docker "${manager}" node ls --format '  {{.Hostname}}  {{.Status}}  {{.ManagerStatus}}'
  echo "next: SWARM_CONTEXT=${PRACTICE} scripts/swarm.sh deploy"
}

practice_down() {
  local nodes
  nodes=$(practice_nodes)
  if [[ -n "${nodes}" ]]; then
    # shellcheck disable=SC2086 # one name per word
    docker rm -f -v ${nodes} >/dev/null
    # shellcheck disable=SC2086
    docker volume rm ${nodes} >/dev/null 2>&1 || true
  fi
  docker network rm "${PRACTICE}" >/dev/null 2>&1 || true
  docker context rm -f "${PRACTICE}" >/dev/null 2>&1 || true
  rm -rf "${PRACTICE_SOCKETS}"
  log "practice Swarm removed${nodes:+ ($(xargs <<<"${nodes}"))}"
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    deploy) shift; require_docker; deploy "$@" ;;
    status) status ;;
    down) down ;;
    practice)
      case "${2:-}" in
        up) require_docker; practice_up "${@:3}" ;;
        down) practice_down ;;
        *) die "practice takes up [N] or down, not '${2:-}'" ;;
      esac ;;
    "") die "no command: use deploy, status, down, practice up or practice down (scripts/swarm.sh --help)" ;;
    *) die "unknown command '$1': use deploy, status, down, practice up or practice down (scripts/swarm.sh --help)" ;;
  esac
}

main "$@"; exit
