# shellcheck shell=bash disable=SC2154 # run_dir, run_load_services: the runner's (scripts/scenario.sh)
# The scenario runner on a Docker Swarm (scripts/scenario.sh --swarm): the
# same steps, evidence and run folder as on one host, through the manager's
# engine alone (SWARM_CONTEXT; its node is HAProxy's, labelled
# haproxy-lab.role=haproxy: scripts/swarm.sh deploy). A user seldom reaches
# every worker's engine; everything the runner needs from the other nodes
# comes over the stack's overlay network, through the collector on HAProxy's
# node. Loaded by use_engine swarm (scripts/lib/engine.sh), it defines
# swarm_NAME for each operation engine.sh dispatches, and its own helpers:
#   - HAProxy's container: the newest of its service's on this engine; after
#     a restart's stop (new listening sockets), Swarm replaces the task, the
#     step's live config kept in a volume (compose.swarm.yaml);
#   - a step's settings of the services (compose_env): a redeploy
#     (scripts/swarm.sh deploy, at the backends' scale); the backends' scale:
#     docker service scale;
#   - the load tool: a service of its own per step (labctl stack --tool), its
#     replicas on the other nodes, numbered by their task slot, each sending
#     its files to the collector, copied from there into the step's folder;
#     which node ran each replica, in DIR/SERVICE-tasks.txt;
#   - the containers' CPU and memory: this node's from their cgroups, the
#     other nodes' from their container-exporter (the collector asks each);
#   - the preflight's limits: HAProxy's container and its node's kernel (every
#     connection passes through it), each node's open files and memory from a
#     job on every node (memory summed over machines).
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Where the load tools send their files: the collector's name on the overlay
# and the port compose.swarm.yaml gives it.
readonly COLLECTOR_URL="http://collector:7070"
readonly HAPROXY_NODE_LABEL="haproxy-lab.role=haproxy"
# The lab's CA where compose.yaml mounts the haproxy-certs volume: in
# HAProxy's container, and in a TLS client's (the clients' default TLS_CA).
readonly HAPROXY_CA=/etc/haproxy-certs/ca.crt CLIENT_CA=/certs/ca.crt
# The stack (compose's project name), set by swarm_init.
SWARM_STACK=""

# swarm_init: this run's docker calls go to the Swarm's manager
# (SWARM_CONTEXT), the engine's own (labctl) to this machine's.
swarm_init() {
  local context
  context=$(env_value SWARM_CONTEXT)
  LAB_LOCAL_CONTEXT=$(docker context show 2>/dev/null || echo default)
  export LAB_LOCAL_CONTEXT
  [[ -z "${context}" ]] || export DOCKER_CONTEXT="${context}"
  SWARM_STACK=$(compose_project)
  [[ -n "${SWARM_STACK}" ]] || die "docker compose config gave no project name: run it and fix what it says"
}

# swarm_service_id SERVICE [-a]: the newest container of the stack's SERVICE
# on this engine (with -a, a stopped one too: docker ps lists newest first).
swarm_service_id() {
  docker ps ${2:+-a} -q --no-trunc --filter "label=com.docker.swarm.service.name=${SWARM_STACK}_$1" | head -n 1
}

# swarm_require_stack: this engine manages the Swarm and runs on HAProxy's node,
# every service of the lab runs all its tasks, no load tool runs.
swarm_require_stack() {
  local manager own haproxy services service context
  context=$(env_value SWARM_CONTEXT)
  manager=$(docker info -f '{{.Swarm.ControlAvailable}}' 2>/dev/null) \
    || die "cannot reach the Docker engine of context '${context:-current}': check SWARM_CONTEXT (docker context ls)"
  [[ "${manager}" == true ]] \
    || die "the engine of context '${context:-current}' is no Swarm manager: set SWARM_CONTEXT to the manager that runs HAProxy (scripts/swarm.sh --help)"
  own=$(docker info -f '{{.Swarm.NodeID}}')
  haproxy=$(docker node ls -q --filter "node.label=${HAPROXY_NODE_LABEL}" | head -n 1)
  [[ "${own}" == "${haproxy}" ]] \
    || die "the runner reads HAProxy through its node's engine: set SWARM_CONTEXT to the manager labelled ${HAPROXY_NODE_LABEL}, not $(docker info -f '{{.Name}}')"
  services=$(docker service ls --filter "label=com.docker.stack.namespace=${SWARM_STACK}" --format '{{.Name}} {{.Replicas}}')
  for service in $(lab_services) collector; do
    awk -v s="${SWARM_STACK}_${service}" '$1 == s { split($2, r, "/"); ok = r[1] == r[2] && r[2] > 0 } END { exit !ok }' <<<"${services}" \
      || die "the lab is not running on the Swarm (${service}: not all its tasks run): start it with scripts/swarm.sh deploy"
  done
  for service in ${run_load_services}; do
    ! grep -q "^${SWARM_STACK}_${service} " <<<"${services}" \
      || die "a load generator is already running (${service}): wait for it or remove it with 'docker service rm ${SWARM_STACK}_${service}'"
  done
}

# swarm_stop_load_tools: every load tool's service (run.env), whichever step ran:
# its replicas stopped first (each still sends what it wrote, as a stopped
# one writes its summary on one host), then what they sent that no step
# copied (an interrupted step's) kept with the run's partial results.
swarm_stop_load_tools() {
  local service services=()
  for service in ${run_load_services}; do
    docker service inspect "${SWARM_STACK}_${service}" >/dev/null 2>&1 && services+=("${SWARM_STACK}_${service}")
  done
  if [[ ${#services[@]} -gt 0 ]]; then
    timeout 60 docker service scale --detach=false "${services[@]/%/=0}" >/dev/null 2>&1 || true
    docker service rm "${services[@]}" >/dev/null 2>&1 || true
  fi
  # The run is over: the collector takes nothing more.
  # shellcheck disable=SC2016 # expanded by the collector's shell
  service_exec collector sh -c 'rm -f "${COLLECTOR_TOKEN_FILE}"' >/dev/null 2>&1 || true
  [[ -z "${run_dir}" ]] || swarm_copy_sent "${run_dir#"${LAB_ROOT}/results/"}"
}

# swarm_collector_token: COLLECTOR_TOKEN, the run's token for the collector (32 hex
# digits), made and handed to the collector on first use: it keeps only what
# a replica of this run sends with it (scripts/labctl/swarm/collector.mjs).
swarm_collector_token() {
  [[ -z "${COLLECTOR_TOKEN}" ]] || return 0
  local token
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  [[ "${token}" =~ ^[0-9a-f]{32}$ ]] || return 1
  # shellcheck disable=SC2016 # expanded by the collector's shell
  echo "${token}" | service_exec collector sh -c \
    'umask 077 && cat >"${COLLECTOR_TOKEN_FILE}.new" && mv -f "${COLLECTOR_TOKEN_FILE}.new" "${COLLECTOR_TOKEN_FILE}"' || return 1
  COLLECTOR_TOKEN="${token}"
}
COLLECTOR_TOKEN=""

# swarm_copy_sent REL: what the replicas sent under REL (a step's folder, or a
# run's, under results/), copied off the collector into results/ (swarm_take_sent),
# then gone from it.
swarm_copy_sent() {
  service_exec collector test -d "/out/$1" 2>/dev/null || return 0
  service_exec collector tar -C /out -cf - "$1" | swarm_take_sent "${LAB_ROOT}/results" \
    || echo "${PROG}: could not copy the load tool's files off the collector" >&2
  service_exec collector rm -rf "/out/$1" || true
}

# swarm_take_sent DEST: a tar of what the replicas sent (stdin) unpacked into a
# staging folder beside DEST, then each regular file moved into DEST where
# no file is: what the runner wrote (step.env, outcome.env...) is never
# replaced, and a name refused is said on stderr.
swarm_take_sent() {
  local staging file status=0
  staging=$(mktemp -d "$1/.sent-XXXXXX") || return 1
  if tar -xf - -C "${staging}"; then
    while IFS= read -r file; do
      if [[ -e "$1/${file}" || -L "$1/${file}" ]]; then
        echo "${PROG}: refused ${file} from the collector: the run wrote that file itself" >&2
      else
        mkdir -p "$(dirname "$1/${file}")" && mv "${staging}/${file}" "$1/${file}" || status=1
      fi
    done < <(cd "${staging}" && find . -type f | sed 's|^\./||' | sort)
  else
    status=1
  fi
  rm -rf "${staging}"
  return "${status}"
}

# swarm_instance_container INSTANCE: the id of INSTANCE's container (a stopped one too).
swarm_instance_container() {
  local id
  id=$(swarm_service_id "$(topology_value instance "$1" service)" -a)
  [[ -n "${id}" ]] || return 1
  echo "${id}"
}

# swarm_instance_exec INSTANCE COMMAND...: COMMAND in INSTANCE's container.
swarm_instance_exec() {
  local id
  instance_compose_args "$1" >/dev/null || return 1
  id=$(instance_container "$1") || return 1
  shift
  docker exec -i "${id}" "$@"
}

# swarm_service_exec SERVICE COMMAND...: COMMAND in SERVICE's running container on
# this node (HAProxy's: Prometheus, the collector).
swarm_service_exec() {
  local id
  id=$(swarm_service_id "$1")
  [[ -n "${id}" ]] || { echo "${PROG}: no running $1 container on HAProxy's node" >&2; return 1; }
  shift
  docker exec -i "${id}" "$@"
}

# swarm_node_exec COMMAND...: in the collector (the lab's node image, on this node).
swarm_node_exec() { service_exec collector "$@"; }

# swarm_start_again INSTANCE ID: after HAProxy's hard stop (restart_instance, the
# live config kept in the volume of compose.swarm.yaml), the new container
# Swarm starts at once for the task (restart delay 0), on the same node.
# Then every node's resolver names the new task (the load tools, on the
# other nodes, find HAProxy by its service's name, one address per task:
# dnsrr): a step's tools started 2 s after a restart met "no such host"
# about 3,000 times, for 2 s.
swarm_start_again() {
  local id
  wait_for 60 "Swarm to replace HAProxy $1's task" swarm_replaced "$1" "$2" || return 1
  id=$(instance_container "$1") || return 1
  wait_for 30 "every node to resolve HAProxy $1's new task" \
    swarm_resolved_everywhere "$(topology_value instance "$1" service)" "${id}"
}

# swarm_resolved_everywhere SERVICE ID: every node's resolver (the collector asks
# each node's container-exporter) gives one of container ID's addresses for
# the stack's SERVICE.
swarm_resolved_everywhere() {
  local addresses answers nodes node found address named
  # shellcheck disable=SC2034 # node: the first word of a line, not used
  addresses=" $(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$2" 2>/dev/null) "
  nodes=$(docker node ls -q | grep -c .)
  answers=$(service_exec collector wget -q -O - "http://127.0.0.1:7070/resolve?name=$1" 2>/dev/null) || return 1
  [[ $(grep -c . <<<"${answers}") -ge ${nodes} ]] || return 1
  while read -r node found; do
    named=0
    for address in ${found}; do [[ "${addresses}" != *" ${address} "* ]] || named=1; done
    [[ ${named} -eq 1 ]] || return 1
  done <<<"${answers}"
}

# swarm_replaced INSTANCE OLD_ID: INSTANCE runs in a container other than OLD_ID.
swarm_replaced() {
  local id
  id=$(instance_container "$1") && [[ "${id}" != "$2" && "$(docker inspect -f '{{.State.Running}}' "${id}")" == true ]]
}

# swarm_backend_scale: each backend service's replicas, "backend-fast=N,backend-slow=N".
swarm_backend_scale() {
  docker service ls --filter "label=com.docker.stack.namespace=${SWARM_STACK}" --format '{{.Name}} {{.Replicas}}' \
    | awk -v prefix="${SWARM_STACK}_" -v backends="$(topology_names backend | xargs)" '
      BEGIN { n = split(backends, b, " "); for (i = 1; i <= n; i++) want[b[i]] = 1 }
      { name = substr($1, length(prefix) + 1); split($2, r, "/") }
      index($1, prefix) == 1 && (name in want) { print name "=" r[2] }' | sort | paste -sd, -
}

# swarm_scale_services --scale SVC=N...: docker service scale, until converged.
swarm_scale_services() {
  local targets=()
  while [[ $# -gt 1 ]]; do targets+=("${SWARM_STACK}_$2"); shift 2; done
  docker service scale --detach=false "${targets[@]}"
}

# swarm_recreate_services --scale SVC=N...: the stack deployed again with the
# settings exported now (compose config reads them), at that scale.
swarm_recreate_services() { command "${LAB_ROOT}/scripts/swarm.sh" deploy "$@"; }

# swarm_running_containers [--profile P ...] [SERVICE ...]: "ID NAME" of the lab's
# running containers on this node (the profiles' tools run on the others),
# named as compose would (STACK-SERVICE-SLOT); only SERVICE's when named.
swarm_running_containers() {
  local services=()
  while [[ $# -gt 0 ]]; do
    if [[ "$1" == --profile ]]; then shift; else services+=("$1"); fi
    shift
  done
  docker ps --no-trunc --filter "label=com.docker.stack.namespace=${SWARM_STACK}" \
    --format '{{.ID}} {{.Label "com.docker.swarm.service.name"}} {{.Label "com.docker.swarm.task.name"}}' \
    | awk -v stack="${SWARM_STACK}" -v only="${services[*]}" '
      BEGIN { n = split(only, o, " "); for (i = 1; i <= n; i++) want[o[i]] = 1 }
      { service = substr($2, length(stack) + 2); split($3, t, ".") }
      n == 0 || (service in want) { print $1, stack "-" service "-" t[2] }'
}

# swarm_readings_of_other_nodes cpu|memory|allowance: the lab's containers on the other
# nodes, as their container-exporter reads them (the collector asks every
# node's), in container_cpu's, container_memory's or container_allowance's
# lines; none for a container this node runs (its cgroup was read).
swarm_readings_of_other_nodes() {
  local here
  here=$(lab_containers | awk '{ print $2 }' | xargs)
  node_exec wget -q -O - -T 10 "${COLLECTOR_URL/collector/127.0.0.1}/containers" 2>/dev/null \
    | awk -v kind="$1" -v here="${here}" '
      BEGIN { n = split(here, h, " "); for (i = 1; i <= n; i++) local[h[i]] = 1 }
      NF < 5 || ($2 in local) { next }
      kind == "cpu" && $3 != "-" { print $1, $2, $3, "ns" }
      kind == "memory" && $4 != "-" { print $2, $4 }
      kind == "allowance" && $5 != "-" { print $2, "nano_cpus=0 cpuset=- cfs_quota_us=- cfs_period_us=- machine_cores=" $5 }' || true
}

# swarm_start_tool DIR ENV_LINES: the step's load tool as a service of the stack
# (DIR/SERVICE-stack.json, what Swarm was given), the step's environment
# read by compose config, its replicas on the other nodes.
swarm_start_tool() {
  local dir="$1" service file
  service=$(step_value "${dir}" service)
  swarm_collector_token || return 1
  file="${dir}/${service}-stack.json"
  # The CA a TLS client trusts, from HAProxy's certificate volume (its node's
  # alone), once a run: a config of the tool's at the path its volume gives.
  [[ -s "${run_dir}/ca.crt" ]] || instance_exec "$(first_instance)" cat "${HAPROXY_CA}" >"${run_dir}/ca.crt" || return 1
  (
    use_load_env "${dir}" "$2" || exit 1
    compose -f "${LAB_ROOT}/compose.yaml" -f "${LAB_ROOT}/compose.swarm.yaml" --profile "$(step_value "${dir}" profile)" config --format json
  ) | labctl stack --host-root "${LAB_ROOT}" --tool "${service}" --replicas "$(step_value "${dir}" replicas)" \
    --collector "${COLLECTOR_URL}" --collector-token "${COLLECTOR_TOKEN}" --file "${CLIENT_CA}=${run_dir}/ca.crt" >"${file}" || return 1
  docker stack deploy --detach=true --resolve-image never -c "${file}" "${SWARM_STACK}" >/dev/null
}

# swarm_tool_tasks DIR: "SLOT NODE STATE EXIT ERROR" of each task of the step's tool.
swarm_tool_tasks() {
  local ids
  mapfile -t ids < <(docker service ps -q --no-trunc "${SWARM_STACK}_$(step_value "$1" service)" 2>/dev/null)
  [[ ${#ids[@]} -gt 0 ]] || return 0
  docker inspect -f '{{.Slot}} {{.NodeID}} {{.Status.State}} {{.Status.ContainerStatus.ExitCode}} {{.Status.Err}}' "${ids[@]}" \
    | while read -r slot node state code error; do
      echo "${slot} $(docker node inspect -f '{{.Description.Hostname}}' "${node}" 2>/dev/null || echo "${node}") ${state} ${code:--} ${error}"
    done | sort -n
}

# swarm_wait_tool_ended DIR: returns once every task of the tool has ended (a state
# Swarm leaves no task in: complete, failed, rejected, shutdown, orphaned),
# then notes where each ran (DIR/SERVICE-tasks.txt: "SLOT NODE STATE EXIT").
swarm_wait_tool_ended() {
  local want states
  want=$(step_value "$1" replicas)
  while :; do
    states=$(docker service ps --format '{{.CurrentState}}' "${SWARM_STACK}_$(step_value "$1" service)" 2>/dev/null) || break
    [[ $(grep -c . <<<"${states}") -lt ${want} ]] || ! grep -qvE '^(Complete|Failed|Rejected|Shutdown|Orphaned|Remove)' <<<"${states}" && break
    sleep 1
  done
  { echo "# SLOT NODE STATE EXIT: where each replica ran (scripts/lib/engine-swarm.sh)"; swarm_tool_tasks "$1"; } >"$1/$(step_value "$1" service)-tasks.txt"
}

# swarm_tool_exit_codes DIR: each replica's exit code, "," between them.
swarm_tool_exit_codes() { awk '!/^#/ { print $4 }' "$1/$(step_value "$1" service)-tasks.txt" | paste -sd, -; }

# swarm_tool_finished DIR: the files the replicas sent, copied off the collector
# into the step's folder (where one host's replicas write them), their own
# log (DIR/SERVICE-log.txt), then the service removed.
swarm_tool_finished() {
  local service
  service=$(step_value "$1" service)
  swarm_copy_sent "$(file_value "$1/step.env" load.LOADGEN_SUMMARY_DIR)"
  # Short output comes back whole through the manager (the summaries went to
  # the collector); bounded, as a worker that stops answering would hang it.
  timeout 30 docker service logs --raw "${SWARM_STACK}_${service}" >"$1/${service}-log.txt" 2>&1 || true
  docker service rm "${SWARM_STACK}_${service}" >/dev/null 2>&1 || true
}

# swarm_collect_limits SIZED [COMPOSE_ARGS...]: as on one host (limits.env for the
# preflight), read on a Swarm: HAProxy's container and its node's kernel
# (every connection passes through it: conntrack, fs.nr_open), the open
# files a backend or load-tool container gets (the least over the nodes, read
# by a job on each: run_dir/limits-nodes.txt), and the memory available
# summed over the machines (nodes on one kernel, as the practice Swarm's
# are, count once).
swarm_collect_limits() {
  local sized="$1" service nofile
  shift
  echo "# the limits that cap held connections, on a Swarm (scripts/lib/engine-swarm.sh swarm_collect_limits)"
  haproxy_limits
  swarm_node_limits "${run_dir}/limits-nodes.txt" || return 1
  nofile=$(awk '!/^#/ { sub(/^nofile=/, "", $3); if (n == "" || $3 + 0 < n) n = $3 + 0 } END { print n }' "${run_dir}/limits-nodes.txt")
  echo "backend_nofile=${nofile}"
  echo "backend_memory_bytes=$(service_memory "$(topology_names backend | head -n 1)")"
  for service in ${sized}; do
    echo "${service}_nofile=${nofile}"
    echo "${service}_memory_bytes=$(service_memory "${service}" "$@")"
  done
  host_limits | grep -v '^mem_available_bytes='
  awk '!/^#/ { sub(/^boot=/, "", $2); sub(/^mem_available_bytes=/, "", $4); mem[$2] = $4 }
    END { for (b in mem) total += mem[b]; printf "mem_available_bytes=%.0f\n", total }' "${run_dir}/limits-nodes.txt"
}

# swarm_node_limits FILE: every node's own limits, read by a job that runs once on
# each node with the open files compose gives the backends and load tools
# (NOFILE): "NODE boot=ID nofile=N mem_available_bytes=N" lines (boot: its
# kernel's boot id).
swarm_node_limits() {
  local name="${SWARM_STACK}_limits" nofile nodes start=${SECONDS}
  nofile=$(env_value NOFILE)
  docker service rm "${name}" >/dev/null 2>&1 || true
  # shellcheck disable=SC2016 # expanded by the job's shell
  docker service create --detach --quiet --no-resolve-image --name "${name}" --mode global-job --restart-condition none \
    --label "com.docker.stack.namespace=${SWARM_STACK}" --ulimit "nofile=${nofile}:${nofile}" -e 'NODE={{.Node.Hostname}}' \
    "$(env_value NODE_IMAGE)" sh -c 'echo "${NODE} boot=$(cat /proc/sys/kernel/random/boot_id) nofile=$(ulimit -n) mem_available_bytes=$(awk "/^MemAvailable:/ { print \$2 * 1024 }" /proc/meminfo)"' \
    >/dev/null || return 1
  nodes=$(docker node ls -q | grep -c .)
  until [[ $(docker service ps --format '{{.CurrentState}}' "${name}" 2>/dev/null | grep -c '^Complete') -ge ${nodes} ]]; do
    if ((SECONDS - start > 60)); then
      docker service rm "${name}" >/dev/null 2>&1 || true
      echo "${PROG}: the job that reads each node's limits did not complete on ${nodes} nodes in 60 s: docker node ls, docker service ps ${name}" >&2
      return 1
    fi
    sleep 1
  done
  { echo "# NODE boot nofile mem_available_bytes: each node's own (scripts/lib/engine-swarm.sh swarm_node_limits)"
    timeout 30 docker service logs --raw "${name}" 2>/dev/null | grep ' boot=' | sort; } >"$1"
  docker service rm "${name}" >/dev/null 2>&1 || true
}
