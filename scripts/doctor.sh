#!/usr/bin/env bash
# Usage: scripts/doctor.sh [--pull | --before-up]
#
# Checks this machine before the lab's first start: the Docker engine
# and Compose v2 (at least the oldest version the lab supports), every image the lab uses (present, or pullable: with --pull,
# pulled), the open files Docker can give a container (HAPROXY_NOFILE, NOFILE),
# free host ports, the memory Docker can use against the services' limits, its
# CPUs against the 2 the scenarios and lessons were measured on, and
# a checkout the containers' non-root users can read. Images and settings come
# from .env (or COMPOSE_ENV_FILES=.env,offline.env), overridden by the
# environment, as compose sees them. One line per check:
#   ok   CHECK: what was found
#   warn CHECK: what was found; fix: ...     (the lab starts anyway)
#   FAIL CHECK: what was found; fix: ...     (one concrete command or action)
# then "N ok, N failed". Exits 1 if any check failed, 0 otherwise.
#   --before-up  only what would stop "docker compose up" with Docker's own
#                error (scripts/up.sh runs this first): the default services'
#                images, open files, ports, checkout and results, not memory;
#                nothing after a failed docker or compose check. With no
#                image here yet, NODE_IMAGE is pulled to measure the open
#                files (compose up would pull it anyway).
# DOCKER=/path/to/docker runs another docker CLI (the tests' fake one).
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="doctor"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

DOCKER="${DOCKER:-docker}"
readonly MANIFEST_TIMEOUT=10 PULL_TIMEOUT=600 MEASURED_CPUS=2
# The memory for Docker the lessons fit in (lessons/README.md: the largest
# peaked at 0.6 GiB of containers' memory).
readonly MEASURED_MEMORY=$((4 * 1024 * 1024 * 1024))
readonly LAB_DIRS=(haproxy prometheus grafana backend loadgen netprobe)
# What compose up starts by default (the rest: profiles, or tests).
readonly DEFAULT_IMAGES=" HAPROXY_IMAGE NODE_IMAGE PROMETHEUS_IMAGE GRAFANA_IMAGE HAPROXY_EXPORTER_IMAGE "
readonly NO_REGISTRY_FIX="scripts/offline-images.sh, then export COMPOSE_ENV_FILES=.env,offline.env"
checkout_root="${LAB_ROOT}"
pull=0 before_up=0 engine=0 n_ok=0 n_failed=0 n_warn=0
unreachable_registries=" "

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# Every docker call, common.sh's compose() too, goes to ${DOCKER}.
docker() { command "${DOCKER}" "$@"; }

# have_docker: ${DOCKER} is a program on PATH (or a path to one). Not
# "command -v": with DOCKER=docker it finds the function above, always.
have_docker() { type -P "${DOCKER}" >/dev/null 2>&1; }

# report ok|warn|FAIL CHECK WHAT [FIX]: one line of the report.
report() {
  case "$1" in
    ok) n_ok=$((n_ok + 1)); printf 'ok   %s: %s\n' "$2" "$3" ;;
    warn) n_warn=$((n_warn + 1)); printf 'warn %s: %s%s\n' "$2" "$3" "${4:+; fix: $4}" ;;
    FAIL) n_failed=$((n_failed + 1)); printf 'FAIL %s: %s; fix: %s\n' "$2" "$3" "$4" ;;
  esac
}

first_line() { sed -n '/[^[:space:]]/{s/^[[:space:]]*//;p;q;}' <<<"$1" | cut -c1-160; }
gib() { awk -v b="$1" 'BEGIN { printf "%.1f GiB", b / 1073741824 }'; }

# bounded SECONDS COMMAND...: COMMAND, stopped after SECONDS (no coreutils
# timeout on a Mac: then a background sleep does it).
bounded() {
  local seconds="$1" pid watcher rc=0
  shift
  if command -v timeout >/dev/null 2>&1; then timeout "${seconds}" "$@" || rc=$?; return "${rc}"; fi
  "$@" &
  pid=$!
  (sleep "${seconds}" && kill "${pid}") >/dev/null 2>&1 &
  watcher=$!
  wait "${pid}" || rc=$?
  kill "${watcher}" 2>/dev/null || true
  return "${rc}"
}

check_docker() {
  local out client fix="start Docker: open Docker Desktop, or sudo systemctl start docker"
  if ! have_docker; then
    report FAIL docker "no '${DOCKER}' command" "install Docker Engine (https://docs.docker.com/engine/install/) or Docker Desktop"
    return 0
  fi
  if out=$(docker version --format '{{.Server.Version}}' 2>&1) && [[ -n "${out}" ]]; then
    client=$(docker version --format '{{.Client.Version}}' 2>/dev/null || true)
    engine=1
    report ok docker "engine ${out} reachable (client ${client:-unknown})"
    return 0
  fi
  [[ "${out}" != *"permission denied"* ]] \
    || fix="let your user reach Docker: sudo usermod -aG docker \"\$USER\", then log in again"
  report FAIL docker "the Docker engine does not answer: $(first_line "${out}")" "${fix}"
}

check_compose() {
  local out version v1="" fix="install the Compose v2 plugin: sudo apt-get install docker-compose-plugin (Docker's apt repository; https://docs.docker.com/compose/install/linux/), or update Docker Desktop"
  if out=$(docker compose version 2>&1); then
    version=$(sed -n 's/.*[Vv]ersion v\{0,1\}\([0-9][0-9.]*\).*/\1/p' <<<"${out}" | head -n 1)
    if [[ "${version%%.*}" =~ ^[0-9]+$ && "${version%%.*}" -ge 2 ]]; then
      if version_at_least "${version}" "${COMPOSE_FLOOR}"; then
        report ok compose "Docker Compose ${version} (the lab supports ${COMPOSE_FLOOR} and later)"
      else
        report FAIL compose "Docker Compose ${version} is older than ${COMPOSE_FLOOR}, the oldest the lab supports (it ignores COMPOSE_ENV_FILES and reads other output)" "${COMPOSE_FLOOR_FIX}"
      fi
    else
      report FAIL compose "'docker compose' is Compose ${version:-of unknown version} ($(first_line "${out}")), v1: the lab needs Compose v2" "${fix}"
    fi
    return 0
  fi
  if command -v docker-compose >/dev/null 2>&1; then
    v1=" (only docker-compose $(docker-compose version --short 2>/dev/null || echo '?'), Compose v1, which the lab does not use)"
  fi
  report FAIL compose "no Compose v2: 'docker compose' failed: $(first_line "${out}")${v1}" "${fix}"
}

# image_names: the lab's *_IMAGE names, then any other the env files set
# (--before-up: those of the default services only).
image_names() {
  local files file names
  if [[ ${before_up} -eq 1 ]]; then
    read -r -a names <<<"${DEFAULT_IMAGES}"
    printf '%s\n' "${names[@]}"
    return 0
  fi
  IFS=',' read -r -a files <<<"${COMPOSE_ENV_FILES:-.env}"
  {
    printf '%s\n' HAPROXY_IMAGE NODE_IMAGE PROMETHEUS_IMAGE GRAFANA_IMAGE K6_IMAGE HAPROXY_EXPORTER_IMAGE \
      SHELLCHECK_IMAGE NETPROBE_IMAGE ACTIONLINT_IMAGE VEGETA_IMAGE GOLANG_IMAGE H2LOAD_IMAGE
    for file in "${files[@]}"; do
      [[ -f "${file}" ]] && sed -n 's/^\([A-Z0-9_]*_IMAGE\)=.*/\1/p' "${file}"
    done
  } | awk '!seen[$0]++'
}

# reachable IMAGE: its registry has it (docker manifest inspect; with --pull,
# docker pull), each bounded in time; an unreachable registry is asked once.
reachable() {
  local image="$1" registry="docker.io" out rc=0
  [[ "${image%%/*}" == *[.:]* && "${image}" == */* ]] && registry="${image%%/*}"
  if [[ "${unreachable_registries}" == *" ${registry} "* ]]; then
    why="${registry} unreachable (above)"
    return 1
  fi
  if [[ ${pull} -eq 1 ]]; then
    out=$(bounded "${PULL_TIMEOUT}" "${DOCKER}" pull -q "${image}" 2>&1) || rc=$?
  else
    out=$(bounded "${MANIFEST_TIMEOUT}" "${DOCKER}" manifest inspect "${image}" 2>&1 >/dev/null) || rc=$?
  fi
  [[ ${rc} -ne 0 ]] || return 0
  case "${rc}:${out}" in
    124:*|143:*) unreachable_registries+="${registry} " why="no registry: ${registry} gave no answer in time" ;;
    *"no such host"*|*"dial tcp"*|*timeout*|*"connection refused"*|*"network is unreachable"*)
      unreachable_registries+="${registry} " why="no registry: ${registry} unreachable ($(first_line "${out##*: }"))" ;;
    *) why="not in its registry: $(first_line "${out}")" ;;
  esac
  return 1
}

# built_service NAME: the compose service that builds image NAME: .env names
# the images compose builds haproxy-lab/..., and NAME is SERVICE_IMAGE
# (H2LOAD_IMAGE: h2load); status 1 for an image compose pulls.
built_service() {
  local default service="${1%_IMAGE}"
  default=$(unset "$1"; COMPOSE_ENV_FILES=.env env_value "$1")
  [[ "${default}" == haproxy-lab/* ]] || return 1
  service="${service,,}"
  echo "${service//_/-}"
}

check_images() {
  local name image check why fix service
  while read -r name; do
    image=$(env_value "${name}")
    check="image ${name}"
    if [[ -z "${image}" ]]; then
      [[ "${name}" == NETPROBE_IMAGE || "${name}" == ACTIONLINT_IMAGE ]] && continue
      report FAIL "${check}" "not set in ${COMPOSE_ENV_FILES:-.env}" "git checkout -- .env (it names every image)"
    elif present "${image}"; then
      report ok "${check}" "${image} present"
    elif service=$(built_service "${name}"); then
      report warn "${check}" "${image} not built yet (compose builds it, the ${service} service's, the first time a scenario needs it)" \
        "docker compose --profile '*' build ${service} (with no registry: scripts/offline-images.sh)"
    elif [[ "${name}" == HAPROXY_PREVIOUS_IMAGE ]]; then
      report warn "${check}" "${image} not here yet (only scripts/scenario.sh --versus previous runs it; the runner pulls it then)" \
        "docker pull ${image} (with no registry: scripts/offline-images.sh)"
    elif [[ "${name}" == GOLANG_IMAGE ]] && present "$(env_value VEGETA_IMAGE)"; then
      report ok "${check}" "${image} not needed: VEGETA_IMAGE, the one image built on it, is present"
    elif [[ "${image}" == haproxy-lab/* ]]; then
      report FAIL "${check}" "${image} not built (an offline stand-in, never pulled)" "scripts/offline-images.sh"
    elif reachable "${image}"; then
      report ok "${check}" "${image} $([[ ${pull} -eq 1 ]] && echo pulled || echo "not present, pullable (docker compose pulls it)")"
    elif [[ "${name}" == GRAFANA_IMAGE && "${COMPOSE_ENV_FILES:-}" == *offline.env* ]]; then
      report warn "${check}" "${image} absent, ${why}; offline.env has no Grafana stand-in" \
        "scripts/up.sh starts the lab without Grafana (each scenario run still writes its chart under results/)"
    else
      fix="docker pull ${image}"
      [[ "${DEFAULT_IMAGES}" != *" ${name} "* ]] || fix="docker compose pull"
      report FAIL "${check}" "${image} neither present nor reachable (${why})" "${fix}; with no registry: ${NO_REGISTRY_FIX}"
    fi
  done < <(image_names)
}

check_nofile() {
  local haproxy_nofile nofile want image="" name out limit asked
  haproxy_nofile=$(env_value HAPROXY_NOFILE) nofile=$(env_value NOFILE)
  haproxy_nofile="${haproxy_nofile:-1048576}" nofile="${nofile:-1048576}"
  asked="HAPROXY_NOFILE=${haproxy_nofile} NOFILE=${nofile}"
  if [[ ! "${haproxy_nofile}${nofile}" =~ ^[0-9]+$ ]]; then
    report FAIL nofile "${asked}: not whole numbers" "export HAPROXY_NOFILE=20000 NOFILE=20000"
    return 0
  fi
  want=$((haproxy_nofile > nofile ? haproxy_nofile : nofile))
  for name in NODE_IMAGE HAPROXY_IMAGE; do
    if present "$(env_value "${name}")"; then image=$(env_value "${name}"); break; fi
  done
  # Before the first up: the image compose would pull first, pulled now.
  if [[ -z "${image}" && ${before_up} -eq 1 ]] \
    && bounded "${PULL_TIMEOUT}" "${DOCKER}" pull -q "$(env_value NODE_IMAGE)" >/dev/null 2>&1; then
    image=$(env_value NODE_IMAGE)
  fi
  if [[ -z "${image}" ]]; then
    report warn nofile "not measured: neither NODE_IMAGE nor HAPROXY_IMAGE is present (images above)" \
      "docker compose pull, then run scripts/doctor.sh again"
    return 0
  fi
  if out=$(container_nofile "${image}" "${want}") && [[ "${out}" == "${want}" ]]; then
    report ok nofile "containers can get ${want} open files (${asked})"
  elif [[ "${out}" == *"rlimit type 7"* ]]; then
    limit=$(container_nofile "${image}" || true)
    [[ "${limit}" =~ ^[0-9]+$ ]] || limit=20000
    report FAIL nofile "${asked} asks more open files than Docker may give a container (at most ${limit} here): 'docker compose up' would stop with \"error setting rlimit type 7: operation not permitted\" (type 7 is RLIMIT_NOFILE, above dockerd's own limit)" \
      "export HAPROXY_NOFILE=${limit} NOFILE=${limit} (or raise dockerd's LimitNOFILE: sudo systemctl edit docker); scripts/up.sh lowers a value from .env itself"
  else
    report warn nofile "could not measure with ${image}: $(first_line "${out}")"
  fi
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# lab_ports: the host ports this lab's compose project publishes now.
lab_ports() {
  compose ps --format json 2>/dev/null | grep -o '"PublishedPort":[0-9]*' | sed 's/.*://' | sort -u || true
}

check_ports() {
  local held name port project
  held=$(lab_ports)
  project=$(env_value COMPOSE_PROJECT_NAME)
  for name in HAPROXY_HTTP_PORT HAPROXY_HTTPS_PORT HAPROXY_STATS_PORT HAPROXY_METRICS_PORT PROMETHEUS_PORT GRAFANA_PORT; do
    port=$(env_value "${name}")
    if [[ ! "${port}" =~ ^[0-9]+$ ]]; then
      report FAIL "port ${name}" "'${port}' is not a port number" "set ${name} in .env, e.g. export ${name}=18000"
    elif grep -qx "${port}" <<<"${held}"; then
      report ok "port ${name}" "127.0.0.1:${port} held by the lab itself (project ${project:-haproxy-lab})"
    elif port_busy "${port}"; then
      report FAIL "port ${name}" "127.0.0.1:${port} is in use by another program" \
        "export ${name}=$((port < 55535 ? port + 10000 : port - 10000)) (any free port), or stop what listens on ${port}"
    else
      report ok "port ${name}" "127.0.0.1:${port} free"
    fi
  done
}

check_memory() {
  local total limits sum=0 count=0 bytes what need
  total=$(docker info --format '{{.MemTotal}}' 2>/dev/null || true)
  if ! limits=$(memory_limits 2>/dev/null); then
    report FAIL memory "docker compose config failed: $(first_line "$(compose config -q 2>&1)")" \
      "run 'docker compose config' and fix what it says"
    return 0
  fi
  while read -r _ bytes; do
    [[ "${bytes}" =~ ^[0-9]+$ ]] || continue
    sum=$((sum + bytes)) count=$((count + 1))
  done <<<"${limits}"
  if [[ ! "${total}" =~ ^[0-9]+$ || "${total}" -eq 0 ]]; then
    report warn memory "Docker did not tell its memory (docker info: '${total}')"
    return 0
  fi
  # A memory limit caps a container and reserves nothing (a 30g limit starts
  # on a 24 GiB machine): limits above Docker's memory are a warning, as is
  # less than the lessons were measured in (with an eighth off: a VM given
  # 4 GiB tells about 3.8).
  need=$((sum > MEASURED_MEMORY ? sum : MEASURED_MEMORY))
  what="Docker can use $(gib "${total}"); the lessons were measured within $(gib "${MEASURED_MEMORY}") (the largest, lesson 08, peaked at 0.6 GiB of containers' memory) and the ${count} default services' memory limits add up to $(gib "${sum}")"
  if ((total < sum || total * 8 < MEASURED_MEMORY * 7)); then
    report warn memory "${what}: the lab starts, but a service that grows toward its limit (a large connections target) would run out of memory" \
      "give Docker at least $(gib "${need}") (Docker Desktop: Settings > Resources > Memory), or lower the limits: export HAPROXY_MEMORY=512m PROMETHEUS_MEMORY=512m"
  else
    report ok memory "${what}"
  fi
}

# check_cpus: the CPUs Docker may use, against the 2 every scenario and lesson
# was measured on (load tools, HAProxy and the backends share them).
check_cpus() {
  local n
  n=$(docker info --format '{{.NCPU}}' 2>/dev/null || true)
  if [[ ! "${n}" =~ ^[0-9]+$ ]]; then
    report warn cpus "Docker did not tell its CPUs (docker info: '${n}')"
  elif ((n < MEASURED_CPUS)); then
    report warn cpus "Docker can use ${n} CPU; the scenarios and lessons were measured on ${MEASURED_CPUS}, shared by the load tools, HAProxy and the backends: expect lower rates and late samples" \
      "give Docker ${MEASURED_CPUS} CPUs (Docker Desktop: Settings > Resources > CPUs)"
  else
    report ok cpus "Docker can use ${n} CPUs"
  fi
}

# check_checkout: the mounted folders readable by the images' non-root users
# (haproxy, nobody, grafana...): files o+r, folders o+rx (chmod -R o+rX).
check_checkout() {
  local dirs=() dir bad count shown parents=""
  for dir in "${LAB_DIRS[@]}"; do [[ -d "${checkout_root}/${dir}" ]] && dirs+=("${dir}"); done
  if [[ ${#dirs[@]} -eq 0 ]]; then
    report FAIL checkout "${checkout_root} has none of ${LAB_DIRS[*]}: not the lab's checkout" "git clone the lab again"
    return 0
  fi
  bad=$(cd "${checkout_root}" && find "${dirs[@]}" \( \( -type f ! -perm -004 \) -o \( -type d ! -perm -005 \) \) -print 2>/dev/null | sort)
  if [[ -z "${bad}" ]]; then
    report ok checkout "${dirs[*]/%//} readable by the containers' non-root users (files o+r, folders o+rx)"
  else
    count=$(grep -c . <<<"${bad}")
    shown=$(head -n 3 <<<"${bad}" | paste -sd, - | sed 's/,/, /g')
    ((count <= 3)) || shown+=" and $((count - 3)) more"
    report FAIL checkout "${count} path$( ((count == 1)) || echo s) in ${checkout_root} others cannot read (a checkout made with umask 077?): ${shown}" \
      "chmod -R o+rX $(cut -d/ -f1 <<<"${bad}" | sort -u | paste -sd' ' -)"
  fi
  # Docker mounts each folder as root: the folders above need no o+x for the
  # containers (measured), only for a daemon without root access there.
  dir="${checkout_root}"
  while [[ "${dir}" != / && -n "${dir}" ]]; do
    [[ -z "$(find "${dir}" -maxdepth 0 ! -perm -001 2>/dev/null)" ]] || parents="${dir} ${parents}"
    dir=$(dirname "${dir}")
  done
  [[ -z "${parents}" ]] || report warn "checkout path" \
    "others cannot traverse ${parents% }: fine for Docker's bind mounts (made as root), not for a root-squashed NFS home" \
    "chmod o+x ${parents% }"
}

check_results() {
  local results="${checkout_root}/results"
  if [[ ! -d "${results}" ]]; then
    report FAIL results "${results} missing (compose would create it as root)" "mkdir -p ${results}"
  elif [[ -w "${results}" && -x "${results}" ]]; then
    report ok results "results/ writable by $(id -un)"
  else
    report FAIL results "results/ not writable by $(id -un) (made by another user, or by compose as root?)" \
      "sudo chown -R \"\$(id -u):\$(id -g)\" ${results}"
  fi
}

# check_machine: every check after docker and compose.
check_machine() {
  if [[ ${engine} -eq 1 ]]; then
    check_images
    check_nofile
    [[ ${before_up} -eq 1 ]] || { check_memory; check_cpus; }
  else
    report warn "images, nofile, memory, cpus" "not checked: no Docker engine (above)"
  fi
  check_ports
  check_checkout
  check_results
}

main() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --pull) pull=1 ;;
      --before-up) before_up=1 ;;
      -h|--help) usage; return 0 ;;
      *) die "unknown option '$1': use --pull, --before-up or --help" ;;
    esac
    shift
  done
  [[ ${pull} -eq 0 || ${before_up} -eq 0 ]] || die "--pull and --before-up go alone: use one of them"
  check_docker
  if have_docker; then check_compose; fi
  # Before up, a missing engine or Compose is the one thing to fix first.
  if [[ ${before_up} -eq 0 || ${n_failed} -eq 0 ]]; then
    check_machine
  fi
  echo "${n_ok} ok, ${n_failed} failed$([[ ${n_warn} -eq 0 ]] || echo " (${n_warn} warning$( ((n_warn == 1)) || echo s))")"
  [[ ${n_failed} -eq 0 ]]
}

# Sourced (tests/unit-doctor.sh), only the functions.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; exit; fi
