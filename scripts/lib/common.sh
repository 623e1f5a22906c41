# shellcheck shell=bash
# Helpers shared by the lab's scripts (sourced, not run). Needs only bash and
# Docker with Compose v2 on the host: anything heavier runs in a lab container.
# Each file that uses these sources this one; once is enough.
[[ -z "${LAB_COMMON_SOURCED:-}" ]] || return 0
LAB_COMMON_SOURCED=1

LAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly LAB_ROOT
# Files the load generators write (k6 summaries) belong to the user, not root.
LAB_UID="${LAB_UID:-$(id -u)}"
LAB_GID="${LAB_GID:-$(id -g)}"
export LAB_UID LAB_GID

die() { echo "${PROG:-lab}: $*" >&2; exit 1; }
# A log line that cannot be written (a terminal that has gone) stops nothing.
log() { printf '[%s %s] %s\n' "${PROG:-lab}" "$(date +%H:%M:%S)" "$*" 2>/dev/null || true; }

# One scenario at a time on a lab: two would reconfigure and restart the same
# HAProxy under each other's load. The lock is a symbolic link (made with
# its text in one step, by ln -s, which fails when it exists; no flock on a
# Mac) whose text is the owner's pid, the time that process started, and
# its command (run_lock_text). A lock whose process is gone, or whose pid
# now names another process (a reboot, a pid reused), is taken over, by one
# runner at a time (the takeover folder).
RUN_LOCK="${LAB_ROOT}/results/.running-${COMPOSE_PROJECT_NAME:-lab}"
readonly RUN_LOCK
run_lock_held=0

# process_started PID: when PID started, as ps says (another process that
# gets the same pid later has another time).
process_started() { LC_ALL=C TZ=UTC ps -o lstart= -p "$1" 2>/dev/null | sed 's/^ *//; s/ *$//; s/ \{1,\}/_/g'; }

# run_lock_text PID COMMAND: the lock's text for PID running COMMAND.
run_lock_text() { echo "$1 $(process_started "$1") $2"; }

# running_scenario: "pid N: COMMAND" of the scenario running on this lab, else status 1.
running_scenario() {
  local text pid started command
  text=$(readlink "${RUN_LOCK}" 2>/dev/null) || return 1
  read -r pid started command <<<"${text}"
  [[ "${pid}" =~ ^[0-9]+$ && -n "${started}" && "$(process_started "${pid}")" == "${started}" ]] || return 1
  echo "pid ${pid}: ${command}"
}

# take_run_lock COMMAND: this shell owns the lab's run lock, or one line and exit 1.
take_run_lock() {
  local running takeover="${RUN_LOCK}.takeover"
  mkdir -p "${LAB_ROOT}/results"
  until ln -s "$(run_lock_text "$$" "$1")" "${RUN_LOCK}" 2>/dev/null; do
    running=$(running_scenario) \
      && die "another scenario runs on this lab (${running}): wait for it to end, or stop it (Ctrl-C in its terminal)"
    if mkdir "${takeover}" 2>/dev/null; then
      # Still a stale lock, not one another runner has just taken?
      running_scenario >/dev/null || rm -rf "${RUN_LOCK}"
      rmdir "${takeover}"
    else
      # A runner taking over; or one killed while it did, a minute ago.
      [[ -z "$(find "${takeover}" -maxdepth 0 -mmin +1 2>/dev/null)" ]] || rmdir "${takeover}" 2>/dev/null || true
      sleep 0.2
    fi
  done
  run_lock_held=1
}

# release_run_lock: the lock gone, if this shell took it.
release_run_lock() {
  [[ ${run_lock_held} -eq 1 ]] || return 0
  rm -f "${RUN_LOCK}"
  run_lock_held=0
}

# compose ARGS...: docker compose on the lab's compose.yaml.
compose() { docker compose --project-directory "${LAB_ROOT}" "$@"; }

# present IMAGE: IMAGE is on this machine.
present() { docker image inspect "$1" >/dev/null 2>&1; }
cd "${LAB_ROOT}" || exit 1

# The oldest Compose the lab supports: the oldest one its whole test suite
# passes on (Debian 13's docker-compose; .ci/run runs the tests that read
# Compose's and Docker's output on it). Older ones lack COMPOSE_ENV_FILES
# (docker/compose#11061), which the offline images rely on.
readonly COMPOSE_FLOOR=2.26.1
# Where the floor's plugin lives, a DOCKER_CONFIG of its own (.ci/run
# installs it there; the floor group, tests/floor.sh, compares it).
FLOOR_DOCKER_CONFIG="${FLOOR_DOCKER_CONFIG:-${HOME}/.docker-compose-floor}"
readonly COMPOSE_FLOOR_FIX="install a newer Compose v2 plugin: Docker's docker-compose-plugin package (https://docs.docker.com/compose/install/linux/), Debian 13's docker-compose, or update Docker Desktop"

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

# The Docker context of this machine's own engine when the lab's is another
# (a Swarm run: scripts/lib/swarm-run.sh, exported for the scripts it runs);
# "": the one docker talks to.
LAB_LOCAL_CONTEXT="${LAB_LOCAL_CONTEXT:-}"

# labctl ARGS...: scripts/lab/cli.mjs (the engine) in the lab's node image
# (the host needs no node), on this machine's engine: it reads the checkout.
labctl() {
  docker ${LAB_LOCAL_CONTEXT:+--context "${LAB_LOCAL_CONTEXT}"} run --rm -i --network none --user "${LAB_UID}:${LAB_GID}" \
    -v "${LAB_ROOT}:/lab" -w /lab "$(env_value NODE_IMAGE)" node scripts/lab/cli.mjs "$@"
}

# The oldest node on the host the engine's reading commands run on.
readonly HOST_NODE_FLOOR=20

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

# labctl_reading ARGS...: labctl for the engine's commands that only read the
# repository (describe, plan --check), so they answer before the lab runs:
# in the lab's node image when it is here, else on this host's node (at least
# HOST_NODE_FLOOR), else in the image once Docker and the image are there
# (require_docker, require_node_image: their one line when not).
labctl_reading() {
  if docker image inspect "$(env_value NODE_IMAGE)" >/dev/null 2>&1; then
    labctl "$@"
  elif host_node; then
    node scripts/lab/cli.mjs "$@"
  else
    require_docker
    require_node_image
    labctl "$@"
  fi
}

# file_value FILE NAME: NAME's value in one of the run folder's NAME=value
# files (run.env, step.env...: scripts/lab/plan/runfolder.mjs); "" if none.
file_value() { sed -n "s/^$2=//p" "$1" | tail -n 1; }

# file_prefixed FILE PREFIX: the K=V of FILE's "PREFIX.K=V" lines (a step's
# load.* and compose.* lines), one per line.
file_prefixed() { sed -n "s/^$2\.//p" "$1"; }

# env_value NAME: NAME as compose sees it (environment, then the env files,
# the last file winning). Scripts run from LAB_ROOT, as compose resolves
# COMPOSE_ENV_FILES from the working directory. A file's line is read as
# Compose reads it (compose-go's dotenv), else the lab would act on another
# value than the one its services get: blanks around the name, the "=" and
# the value, and "export " before the name, are dropped; so are a value's
# quotes ("..." or '...', and anything after the closing one) and an
# unquoted value's comment (from " #"). Compose's ${VAR} expansion, escapes
# in "..." and values over several lines are not done: the lab's files have
# none. Called everywhere: the rules are bash's own, no process more than
# the sed and tail that find the line.
env_value() {
  if [[ -n "${!1:-}" ]]; then echo "${!1}"; return 0; fi
  local files file value last=""
  IFS=',' read -r -a files <<<"${COMPOSE_ENV_FILES:-.env}"
  for file in "${files[@]}"; do
    [[ -f "${file}" ]] || continue
    value=$(sed -n "s/^[[:space:]]*\(export[[:space:]]\{1,\}\)\{0,1\}$1[[:space:]]*=//p" "${file}" | tail -n 1)
    value="${value#"${value%%[![:space:]]*}"}"
    case "${value}" in
      \"*) value="${value:1}"; value="${value%%\"*}" ;;
      \'*) value="${value:1}"; value="${value%%\'*}" ;;
      *) value="${value%% #*}"; value="${value%"${value##*[![:space:]]}"}" ;;
    esac
    if [[ -n "${value}" ]]; then last="${value}"; fi
  done
  echo "${last}"
}

# The lab's topology: HAProxy's instances, their frontends, the backend
# services, the other services and shared limits, one row each
# (topology.txt; the engine reads the same file: scripts/lab/core/topology.mjs).
readonly TOPOLOGY_FILE="${LAB_ROOT}/topology.txt"

# topology_text: the table with each instance row that says processes=VAR
# written out as one row per HAProxy process of its container (VAR as compose
# sees it: env_value; haproxy/processes.sh runs them): process K is NAME-pK,
# its runtime API and master CLI at the ports + port_step x (K - 1), with
# NAME's frontends; each such row says process=K container=NAME (the engine
# does the same: scripts/lab/core/topology.mjs expandProcesses).
topology_text() {
  # Kept for a step (step-load.sh hold_topology): read ~30 times a step and
  # every second of a load, each read forks awk a few times.
  if [[ -n "${LAB_TOPOLOGY_CACHE:-}" ]]; then echo "${LAB_TOPOLOGY_CACHE}"; return 0; fi
  local var n=1
  var=$(awk '{ sub(/#.*/, "") } $1 == "instance" { for (i = 3; i <= NF; i++) if ($i ~ /^processes=/) { print substr($i, 11); exit } }' "${TOPOLOGY_FILE}")
  [[ -z "${var}" ]] || n=$(env_value "${var}")
  [[ "${n:-1}" =~ ^[1-9][0-9]*$ ]] || die "${var} must be a whole number from 1, found '${n}' (set it in .env)"
  awk -v n="${n:-1}" '
    function shift_port(address, step, k) { return substr(address, 1, match(address, /:[0-9]+$/)) (substr(address, RSTART + 1) + step * (k - 1)) }
    { sub(/#.*/, "") }
    NR == FNR {
      if ($1 == "instance") for (i = 3; i <= NF; i++) if ($i ~ /^processes=/) many[$2] = 1
      next
    }
    $1 == "instance" && ($2 in many) {
      rest = ""
      for (i = 3; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "processes") continue
        if (kv[1] == "runtime_api" || kv[1] == "master_cli") { addr[kv[1]] = kv[2]; continue }
        if (kv[1] == "port_step") step = kv[2]
        rest = rest " " $i
      }
      for (k = 1; k <= n; k++) {
        print "instance", (k == 1 ? $2 : $2 "-p" k) rest, "runtime_api=" shift_port(addr["runtime_api"], step, k),
          "master_cli=" shift_port(addr["master_cli"], step, k), "process=" k, "container=" $2
      }
      next
    }
    $1 == "frontend" {
      for (i = 3; i <= NF; i++) if ($i ~ /^instance=/ && (substr($i, 10) in many)) {
        name = substr($i, 10)
        for (k = 1; k <= n; k++) { $i = "instance=" (k == 1 ? name : name "-p" k); print }
        next
      }
    }
    NF > 0 { print }' "${TOPOLOGY_FILE}" "${TOPOLOGY_FILE}"
}

# topology_rows KIND: "NAME KEY=VALUE..." for each row of KIND, in the table's order.
topology_rows() {
  topology_text | awk -v kind="$1" '$1 == kind { $1 = ""; sub(/^ +/, ""); print }'
}

# topology_names KIND: the names of KIND's rows (a frontend's once per instance).
topology_names() { topology_rows "$1" | awk '{ print $1 }'; }

# topology_value KIND NAME KEY: KEY's value in NAME's row of KIND ("" when
# it has none; a frontend's first row).
topology_value() {
  topology_rows "$1" | awk -v name="$2" -v key="$3=" '
    $1 == name { for (i = 2; i <= NF; i++) if (index($i, key) == 1) { print substr($i, length(key) + 1); exit } }'
}

# haproxy_instances: the HAProxy instances' names (one per process);
# first_instance: the first.
haproxy_instances() { topology_names instance; }
first_instance() { haproxy_instances | head -n 1; }

# haproxy_containers: the instances that stand for their container (its first
# process): its memory, CPU, kernel counters and log, read once.
haproxy_containers() { topology_rows instance | awk '/(^| )process=1( |$)/ || !/(^| )process=/ { print $1 }'; }

# frontend_ports [INSTANCE]: the TCP ports of the frontends (of INSTANCE).
frontend_ports() {
  topology_rows frontend | awk -v instance="${1:-}" '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    instance == "" || v["instance"] == instance { print v["port"] }' | sort -un
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

# service_exec SERVICE COMMAND...: COMMAND in a container of SERVICE (stdin
# passed): the first, as compose exec picks it; in a run (LAB_PROJECT),
# found by its labels and run by docker exec.
service_exec() {
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

# node_exec COMMAND...: COMMAND in a running container of the lab's node
# image (the first backend's).
node_exec() { service_exec "$(topology_names backend | head -n 1)" "$@"; }

# instance_exec INSTANCE COMMAND...: COMMAND in INSTANCE's container.
instance_exec() {
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

# A step's probes by instance (step-load.sh hold_probes fills them).
declare -A LAB_PROBES=()
# The lab's Compose project, once a run has read it (compose_project).
LAB_PROJECT=""
# A run's folder of cached container and probe ids (scripts/scenario.sh).
LAB_CACHE_DIR=""
# instance_probe's check of a cached probe: HAProxy's start time and state,
# then the probe's, which runs.
readonly PROBE_FOUND_RE='^([^ ]+) [a-z]+ [^ ]+ true$'

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

# compose_project: the lab's Compose project as Compose resolves it
# (COMPOSE_PROJECT_NAME, else compose.yaml's name): a run's containers' label,
# a Swarm stack's name.
compose_project() { compose config 2>/dev/null | sed -n 's/^name: //p'; }

# forget_containers: the run's cached container and probe ids
# (instance_container, instance_probe) gone: after the runner recreates or
# restarts HAProxy or scales the lab. (A probe kept would be checked, and
# after a restart found stale: a docker call for nothing.)
forget_containers() { [[ -z "${LAB_CACHE_DIR}" ]] || rm -f "${LAB_CACHE_DIR}"/container-* "${LAB_CACHE_DIR}"/probe-*; }

# instance_container INSTANCE: the id of INSTANCE's container (a stopped one too).
instance_container() {
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

# backend_scale: the running replicas of each backend service of the
# topology, "backend-fast=N,backend-slow=N" (sorted by name).
backend_scale() {
  if [[ -n "${LAB_PROJECT}" ]]; then
    lab_ps --format '{{.Label "com.docker.compose.service"}}'
  else
    compose ps --format '{{.Service}}'
  fi | grep -xF -f <(topology_names backend) | sort | uniq -c \
    | awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1 }'
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

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND, after 0.1, 0.2 and
# 0.5 s, then once a second: what it mostly waits for (a reload's new worker,
# a restarted container) is there within a second, and a whole second's
# sleep after the first try cost a scenario about 1 s a step.
wait_for() {
  local timeout="$1" what="$2" start=${SECONDS} pause=0.1
  shift 2
  until "$@"; do
    if ((SECONDS - start >= timeout)); then
      echo "timed out after ${timeout}s waiting for ${what}" >&2
      return 1
    fi
    sleep "${pause}"
    case "${pause}" in 0.1) pause=0.2 ;; 0.2) pause=0.5 ;; *) pause=1 ;; esac
  done
}

# memory_limits [COMPOSE_ARGS...]: "SERVICE BYTES" for each service of
# "compose COMPOSE_ARGS config" (by default, what compose up starts) with
# deploy.resources.limits.memory, from its pretty JSON, line by line (the
# same on Compose 2.26 and 2.40).
memory_limits() {
  compose "$@" config --format json | awk '
    { line = $0; sub(/^[ \t]+/, "", line) }
    line ~ /^[]}]/ { depth--; next }
    line ~ /[[{]$/ {
      key = ""
      if (line ~ /^"/) { key = substr(line, 2); sub(/".*/, "", key) }
      path[++depth] = key
      next
    }
    depth == 6 && path[2] == "services" && path[4] == "deploy" && path[5] == "resources" && path[6] == "limits" && line ~ /^"memory":/ {
      v = tolower(line); sub(/^"memory": *"?/, "", v); sub(/"?,?$/, "", v); sub(/b$/, "", v)
      n = v + 0; u = substr(v, length(v))
      if (u == "k") n *= 1024; else if (u == "m") n *= 1048576; else if (u == "g") n *= 1073741824
      printf "%s %.0f\n", path[3], n
    }'
}

# service_nofile SERVICE [COMPOSE_ARGS...]: the open-file limit SERVICE's own
# container gets: asked in a running one, else in a one-off container of the
# service (its compose settings, no dependencies started).
service_nofile() {
  local service="$1"
  shift
  if [[ -n "$(compose "$@" ps -q --status running "${service}" 2>/dev/null)" ]]; then
    compose "$@" exec -T "${service}" sh -c 'ulimit -n'
  else
    compose "$@" run --rm --no-deps -T --entrypoint sh "${service}" -c 'ulimit -n' 2>/dev/null
  fi
}

# collect_limits SIZED [COMPOSE_ARGS...]: the limits that cap held
# connections, read off the running lab and the Docker host's kernel (a Linux
# host or Docker Desktop's VM, seen from a container on the host network), as
# NAME=value lines for scripts/lab/plan/preflight.mjs (readLimits): each
# HAProxy container's (INSTANCE_nofile, INSTANCE_memory_bytes, named by its
# first process: every process of it has that open-file limit), the first
# backend's, and each service of SIZED's (the load tools whose limits the
# preflight sizes: run.env's sized_services), each from its own container.
collect_limits() {
  local sized="$1" backend service
  shift
  echo "# the limits that cap held connections (scripts/lib/common.sh collect_limits)"
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

# service_memory SERVICE [COMPOSE_ARGS...]: SERVICE's own memory limit in
# bytes (its config also lists the services it depends on); 0: none.
service_memory() {
  local service="$1"
  shift
  memory_limits "$@" 2>/dev/null | awk -v s="${service}" '$1 == s { n = $2 } END { print n + 0 }'
}

# haproxy_limits: each HAProxy container's open files and memory limit
# (INSTANCE_nofile, INSTANCE_memory_bytes; its processes, haproxy/processes.sh,
# each get these) and its kernel's local port range, read in it.
haproxy_limits() {
  local instance
  for instance in $(haproxy_containers); do
    echo "${instance}_nofile=$(instance_exec "${instance}" sh -c 'ulimit -n')"
    echo "${instance}_memory_bytes=$(docker inspect -f '{{.HostConfig.Memory}}' "$(instance_container "${instance}")")"
  done
  echo "port_range=$(instance_exec "$(first_instance)" cat /proc/sys/net/ipv4/ip_local_port_range | awk '{ print $1, $2 }')"
}

# host_limits: the Docker host's kernel's (a Linux host or Docker Desktop's
# VM, seen from a container on the host network): fs.nr_open, the conntrack
# table and whether bridged traffic goes through it, the memory available.
host_limits() {
  local nr_open ct_max ct_count bridge mem
  # shellcheck disable=SC2016 # expanded by the container's shell
  read -r nr_open ct_max ct_count bridge mem < <(docker run --rm --network host "$(env_value NODE_IMAGE)" sh -c '
    for f in fs/nr_open net/netfilter/nf_conntrack_max net/netfilter/nf_conntrack_count net/bridge/bridge-nf-call-iptables; do
      printf "%s " "$(cat "/proc/sys/$f" 2>/dev/null || echo 0)"
    done
    awk "/^MemAvailable:/ { print \$2 * 1024 }" /proc/meminfo')
  echo "nr_open=${nr_open}"
  echo "conntrack_max=${ct_max}"
  echo "conntrack_count=${ct_count}"
  echo "bridge_tracked=$([[ "${bridge}" == 1 && "${ct_max}" -gt 0 ]] && echo true || echo false)"
  echo "mem_available_bytes=${mem}"
}

# kernel_memory FILE: the Docker host's kernel's own memory (a Linux host or
# Docker Desktop's VM): slab (socket, inode and dentry objects), TCP's
# buffers (sockstat's "mem", in pages) and sockets allocated, NAME=value
# lines read before a step and mid-hold (the engine takes the difference).
# Read through the first HAProxy container's probe: /proc/meminfo and these
# two sockstat fields are the kernel's whichever network namespace reads
# them, and a docker exec (~0.1 s) replaces a container of its own (~0.4 s,
# before every step and in the middle of its load).
kernel_memory() {
  # shellcheck disable=SC2016 # expanded by the probe's shell
  probe_exec "$(haproxy_containers | head -n 1)" sh -c '
    echo "# the Docker host kernel'"'"'s memory (scripts/lib/common.sh kernel_memory)"
    awk "/^(Slab|SUnreclaim|MemAvailable):/ { sub(/:/, \"\", \$1); printf \"%s_bytes=%.0f\n\", tolower(\$1), \$2 * 1024 }" /proc/meminfo
    awk "\$1 == \"TCP:\" { for (i = 2; i < NF; i += 2) if (\$i == \"alloc\" || \$i == \"mem\") printf \"tcp_%s=%s\n\", \$i, \$(i + 1) }" /proc/net/sockstat
    awk "/^KernelPageSize:/ { print \"page_size=\" \$2 * 1024; exit }" /proc/self/smaps' >"$1" 2>/dev/null || true
}

# readings_elsewhere cpu|memory|allowance: more lines of container_cpu's,
# container_memory's or container_allowance's for the lab's containers that
# this engine does not run (a Swarm's other nodes: scripts/lib/swarm-run.sh).
# On one host every container is this engine's: none.
readings_elsewhere() { return 0; }

# container_memory FILE [--profile P ...]: "NAME BYTES" for every running
# container of the lab (with the profiles' ones, the load generators): the
# memory its cgroup holds, page cache excluded (CGROUP_MEMORY_SH), the figure
# docker stats shows. Read in ~0.2 s where docker stats --no-stream takes
# 2-3 s (it waits a second for a CPU sample), before every step.
container_memory() {
  local file="$1" id name bytes
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name}; done < <(lab_containers "$@")
  [[ ${#names[@]} -gt 0 ]] || return 0
  {
    echo "# NAME BYTES: each container's memory, page cache excluded, from its cgroup (scripts/lib/common.sh container_memory)"
    while read -r id bytes; do
      if [[ -n "${names[${id}]:-}" && "${bytes}" =~ ^[0-9]+$ ]]; then echo "${names[${id}]} ${bytes}"; fi
    done < <(cgroup_read "${CGROUP_MEMORY_SH}" "${!names[@]}")
    readings_elsewhere memory
  } >"${file}"
}

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

# running_containers [--profile P ...] [SERVICE ...]: "ID NAME" of the lab's
# running containers, read afresh (a Swarm's, on this engine:
# scripts/lib/swarm-run.sh).
running_containers() {
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

# now_ms: milliseconds since the epoch (Grafana's time unit, the run folder's).
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# CGROUP_CPU_SH: sh printing "ID VALUE UNIT" for each container ID given
# after the cgroup root $1: the CPU time the kernel charged to the
# container's cgroup (every process in it: exec'd ones too). cgroup v1:
# cpuacct.usage (ns); v2: cpu.stat usage_usec (us). Then its CFS periods
# so far and those in which it used up its quota ("ID N periods", "ID N
# throttled": cpu.stat nr_periods, nr_throttled): under a quota the CPU time
# reads a little under it (84% of 0.2 core at a ceiling), the throttling
# does not. Docker's cgroupfs and systemd drivers name the folder
# differently, and an engine started with --cgroup-parent (the practice
# Swarm's nodes, scripts/swarm.sh) puts them under that parent (the last
# pattern, a glob); a container with no folder (stopped) prints nothing. Read
# with the shell's own read, no cat or sed: this runs every second for every
# container (30 at 250,000 connections), and each fork costs the machine.
# shellcheck disable=SC2016 # expanded by that sh
readonly CGROUP_CPU_SH='root=$1; shift
for id in "$@"; do
  stat=
  for f in "$root/cpuacct/docker/$id/cpuacct.usage" "$root/cpu,cpuacct/docker/$id/cpuacct.usage" \
    "$root/cpuacct/system.slice/docker-$id.scope/cpuacct.usage" "$root/cpu,cpuacct/system.slice/docker-$id.scope/cpuacct.usage" \
    "$root"/cpuacct/*/"$id"/cpuacct.usage; do
    [ -r "$f" ] || continue
    read -r v <"$f" && echo "$id $v ns"
    # v1 keeps the throttling in the cpu controller (its cpu.stat has no usage_usec).
    for stat in "$root/cpu/docker/$id/cpu.stat" "$root/cpu,cpuacct/docker/$id/cpu.stat" \
      "$root/cpu/system.slice/docker-$id.scope/cpu.stat" "$root/cpu,cpuacct/system.slice/docker-$id.scope/cpu.stat" \
      "$root"/cpu/*/"$id"/cpu.stat; do
      [ -r "$stat" ] && break
    done
    break
  done
  # v2: one cpu.stat holds the CPU time and the throttling.
  if [ -z "$stat" ]; then
    for stat in "$root/system.slice/docker-$id.scope/cpu.stat" "$root/docker/$id/cpu.stat"; do [ -r "$stat" ] && break; done
  fi
  [ -r "$stat" ] || continue
  while read -r k v; do
    case "$k" in
      usage_usec) echo "$id $v us" ;;
      nr_periods) echo "$id $v periods" ;;
      nr_throttled) echo "$id $v throttled" ;;
    esac
  done <"$stat"
done'

# CGROUP_MEMORY_SH: sh printing "ID BYTES" for each container ID given after
# the cgroup root $1: the memory its cgroup holds less the page cache the
# kernel may drop, as docker stats computes it (v1 memory.usage_in_bytes -
# total_inactive_file, v2 memory.current - inactive_file). Same layouts as
# CGROUP_CPU_SH; a container with no folder (stopped) prints nothing.
# shellcheck disable=SC2016 # expanded by that sh
readonly CGROUP_MEMORY_SH='root=$1; shift
for id in "$@"; do
  for d in "$root/memory/docker/$id" "$root/memory/system.slice/docker-$id.scope" \
    "$root/system.slice/docker-$id.scope" "$root/docker/$id" "$root"/memory/*/"$id"; do
    if [ -r "$d/memory.usage_in_bytes" ]; then read -r used <"$d/memory.usage_in_bytes"; key=total_inactive_file
    elif [ -r "$d/memory.current" ]; then read -r used <"$d/memory.current"; key=inactive_file
    else continue; fi
    while read -r k v; do
      if [ "$k" = "$key" ] && [ "$v" -lt "$used" ]; then used=$((used - v)); fi
    done <"$d/memory.stat"
    echo "$id $used"
    break
  done
done'

# cgroup_read SCRIPT ID...: SCRIPT's lines (CGROUP_CPU_SH, CGROUP_MEMORY_SH)
# for the running containers given. Read on this host when its
# /sys/fs/cgroup holds Docker's containers (Linux), else from the engine's own
# machine (Docker Desktop's VM) in a throwaway container that mounts its
# cgroup tree read-only.
cgroup_read() {
  local script="$1" out
  shift
  [[ $# -gt 0 ]] || return 0
  out=$(sh -c "${script}" _ /sys/fs/cgroup "$@" 2>/dev/null || true)
  if [[ -z "${out}" ]]; then
    out=$(docker run --rm --network none -v /sys/fs/cgroup:/host-cgroup:ro --entrypoint sh \
      "$(env_value NODE_IMAGE)" -c "${script}" _ /host-cgroup "$@" 2>/dev/null || true)
  fi
  [[ -z "${out}" ]] || echo "${out}"
}

# cgroup_cpu ID...: "ID VALUE UNIT" per running container (CGROUP_CPU_SH).
cgroup_cpu() { cgroup_read "${CGROUP_CPU_SH}" "$@"; }

# container_cpu FILE [--profile P ...] [SERVICE ...]: appends "AT_MS NAME
# VALUE UNIT" for every running container of the lab (with the profiles'
# ones; only SERVICE's when named): its cgroup's CPU time so far
# (cgroup_cpu), read at AT_MS. Read before and after a step and every second
# of its load (scripts/lib/step-load.sh); the engine takes the difference
# (scripts/lab/evidence/cpu.mjs).
container_cpu() {
  local file="$1" at id value unit name
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name}; done < <(lab_containers "$@")
  [[ ${#names[@]} -gt 0 ]] || return 0
  # The time of the cgroup read itself, not of the docker calls before it
  # (hundreds of ms under load: a rate over 2 s samples was off by 25%).
  at=$(now_ms)
  {
    while read -r id value unit; do
      if [[ -n "${names[${id}]:-}" && "${value}" =~ ^[0-9]+$ ]]; then echo "${at} ${names[${id}]} ${value} ${unit}"; fi
    done < <(cgroup_cpu "${!names[@]}")
    readings_elsewhere cpu
  } >>"${file}"
}

# CGROUP_QUOTA_SH: sh printing "ID QUOTA_US PERIOD_US" for each container ID
# given (ROOT first): the CPU quota its cgroup enforces (cgroup v1
# cpu.cfs_quota_us, -1 = none; v2 cpu.max, "max" = none), as CGROUP_CPU_SH.
# shellcheck disable=SC2016 # expanded by that sh
readonly CGROUP_QUOTA_SH='root=$1; shift
for id in "$@"; do
  for d in "$root/cpu/docker/$id" "$root/cpu,cpuacct/docker/$id" "$root/cpu/system.slice/docker-$id.scope" "$root/cpu,cpuacct/system.slice/docker-$id.scope" "$root"/cpu/*/"$id"; do
    if [ -r "$d/cpu.cfs_quota_us" ]; then echo "$id $(cat "$d/cpu.cfs_quota_us") $(cat "$d/cpu.cfs_period_us")"; continue 2; fi
  done
  for d in "$root/system.slice/docker-$id.scope" "$root/docker/$id"; do
    if [ -r "$d/cpu.max" ]; then echo "$id $(sed "s/^max /-1 /" "$d/cpu.max")"; continue 2; fi
  done
done'

# container_allowance FILE [--profile P ...]: "NAME cores=C nano_cpus=N
# cpuset=S cfs_quota_us=Q cfs_period_us=P machine_cores=M" for every running
# container of the lab: the CPU it may use as Docker was told (docker inspect)
# and as its cgroup enforces it (read back), and the engine's cores.
# scripts/lab/evidence/cpu.mjs takes the smallest that applies.
container_allowance() {
  local file="$1" ids=() id name nano cpuset quota period machine
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name} ids+=("${id}"); done < <(lab_containers "$@")
  [[ ${#ids[@]} -gt 0 ]] || return 0
  machine=$(docker info -f '{{.NCPU}}' 2>/dev/null || echo 0)
  declare -A quotas=()
  while read -r id quota period; do quotas[${id}]="${quota} ${period}"; done < <(cgroup_read "${CGROUP_QUOTA_SH}" "${ids[@]}")
  {
    echo "# the CPU each container may use (scripts/lib/common.sh container_allowance); read by scripts/lab/evidence/cpu.mjs"
    while read -r id nano cpuset; do
      read -r quota period <<<"${quotas[${id}]:-- -}"
      echo "${names[${id}]} nano_cpus=${nano} cpuset=${cpuset:--} cfs_quota_us=${quota} cfs_period_us=${period} machine_cores=${machine}"
    done < <(docker inspect -f '{{.Id}} {{.HostConfig.NanoCpus}} {{.HostConfig.CpusetCpus}}' "${ids[@]}" 2>/dev/null)
    readings_elsewhere allowance
  } >"${file}"
}

# The most sockets in a container's table (in use and TIME_WAIT) for which
# sockets_probe reads all of it: at 20,000 one pass lasted 4.8 s at the start of
# a 60,000 ramp (the 2 cores busy), a gap in the per-second samples.
readonly KERNEL_TABLE_UP_TO=5000

# hex_ports PORT...: "0050|01BB" (80, 443): ports as /proc/net/tcp writes them.
hex_ports() { printf '%04X\n' "$@" | paste -sd'|' -; }

# container_processes INSTANCE: the instances of INSTANCE's container (its processes).
container_processes() {
  topology_rows instance | awk -v c="$1" '{ own = $1; for (i = 2; i <= NF; i++) if ($i ~ /^container=/) own = substr($i, 11) } own == c { print $1 }'
}

# sockets_probe INSTANCE ARGS...: scripts/probes/haproxy-sockets.mjs (what
# it prints, its arguments: sockets_args) in the lab's node image, in
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

# sockets_args INSTANCE HOST EVERY: sockets_probe's arguments for INSTANCE's
# container (the first by default): the backends' ports and proxies, its
# frontends' ports and the frontends' names (from the topology), its
# processes' runtime APIs.
sockets_args() {
  local instance="$1" backends frontends proxies
  # One awk per list, not a lookup per row.
  # shellcheck disable=SC2046 # one port per word
  backends=$(hex_ports $(topology_rows backend | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^port=/) print substr($i, 6) }' | sort -u))
  proxies=$(topology_rows backend | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^proxy=/) print substr($i, 7) }' | paste -sd'|' -)
  # shellcheck disable=SC2046 # one port per word
  frontends=$(hex_ports $(frontend_ports "${instance}"))
  printf '%s\n' "${backends}" "${frontends}" "${proxies}" "${KERNEL_TABLE_UP_TO}" "$2" "$3" "$(topology_names frontend | sort -u | paste -sd'|' -)"
  topology_rows instance | awk -v c="${instance}" '
    { own = $1; api = ""; for (i = 2; i <= NF; i++) { if ($i ~ /^container=/) own = substr($i, 11); if ($i ~ /^runtime_api=/) api = substr($i, 13) } }
    own == c { print $1 "=" api }'
}

# haproxy_sockets [INSTANCE [HOST]]: sockets_probe's lines, once, for
# INSTANCE's container (the first by default).
haproxy_sockets() {
  local instance="${1:-$(first_instance)}" args
  mapfile -t args < <(sockets_args "${instance}" "${2:-0}" 0)
  sockets_probe "${instance}" "${args[@]}" </dev/null
}
