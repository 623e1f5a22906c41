#!/usr/bin/env bash
# Usage: scripts/scenario.sh list
#        scripts/scenario.sh SCENARIO [--quick] [--duration S] [--replicas N] [--repeat N] [--settings FILE]
#        scripts/scenario.sh client-timeout --article         (the article's own values)
#        scripts/scenario.sh connections [--target N|max]     (preflight first)
#        scripts/scenario.sh SCENARIO --help
#        scripts/scenario.sh SCENARIO [OPTIONS] --swarm        (the lab on a Swarm)
#
# Reruns a published HAProxy experiment on the running lab (scripts/up.sh)
# and prints the measured table beside the published one. For each
# step: set the services' environment if the step changes it, render the
# HAProxy config, check it (haproxy -c) inside the running container, swap it
# in with a hitless reload, wait until HAProxy reports it, run the load (k6, or
# the connection holder), sample HAProxy's connections on both sides, collect
# the client view (merged summaries) and the server view (show info / show
# stat, listen overflows, CPU and memory per container, HAProxy's log).
# --settings FILE lays a step's settings ({"haproxy": {SECTION: {KEYWORD:
# VALUE}}, "compose_env", "load": {"env"}, "backends"}: a .json file inside the
# lab's folder) over every step: your own HAProxy settings against the
# scenario's verdicts (scripts/lesson.sh check runs a lesson's this way).
# Connection scenarios first check the target against the machine's limits and
# refuse what cannot fit. Results go to results/SCENARIO/<UTC timestamp>/ and
# are never overwritten. On the end, an error or Ctrl-C, HAProxy goes back to
# haproxy/haproxy.cfg, services to their settings, load generators stop and
# backends return to their scale; partial results stay, marked INCOMPLETE.
# --swarm runs it on the lab deployed on a Docker Swarm (scripts/swarm.sh
# deploy) through SWARM_CONTEXT's engine, HAProxy's node: the load tools'
# replicas on the other nodes, the same run folder (scripts/lib/engine-swarm.sh).
# "list", a scenario's name, its --help and its options are read by the
# engine in the lab's node image, or on this host's node (20 or later) when
# the image is not here yet.
# A closed terminal (SIGHUP) stops it as Ctrl-C does, and what the cleanup
# says then goes to the run folder's cleanup.log; a second Ctrl-C during the
# cleanup does not stop it.
# Exit: 0 done and every verdict passed, 3 a verdict failed, 130 interrupted,
# 129 the terminal closed, 1-2 bad input, a refused target or a broken lab
# (one line on stderr).
set -euo pipefail

PROG="scenario"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# shellcheck source=scripts/lib/lab-state.sh
source "${LAB_ROOT}/scripts/lib/lab-state.sh"
# shellcheck source=scripts/lib/step-load.sh
source "${LAB_ROOT}/scripts/lib/step-load.sh"
# shellcheck source=scripts/lib/second-method.sh
source "${LAB_ROOT}/scripts/lib/second-method.sh"
# shellcheck source=scripts/lib/floors.sh
source "${LAB_ROOT}/scripts/lib/floors.sh"
run_dir=""
scenario=""
scenario_args=""
started_ms=0
interrupted=0
# 1 once the terminal has gone (SIGHUP): the cleanup writes to the run folder.
terminal_gone=0
# 1 when the output went to a terminal at the start (a hung-up one is no
# terminal any more: the cleanup's sign of a hang-up whatever came first).
output_was_terminal=0
# 1 once the run folder holds a run that starts (before: a refusal, removed).
run_accepted=0
# The process that runs the scenario (supervise).
runner_pid=""
# The kernel's cap on a listening socket's backlog in HAProxy's network
# namespace, read once a run: each step's outcome.env carries it for the
# report's check of the listening sockets.
somaxconn=""
# "restart" when HAProxy ran another config than its baseline as the run
# began (a runner killed before its cleanup): the first switch restarts it,
# whatever the planner, which starts from the baseline, chose.
first_switch=""
# From the run folder (scripts/labctl/plan/runfolder.mjs): run.env as run_NAME
# (a step's own step.env is read by the functions that run it).
run_steps=0 run_preflight="" run_load_services="" run_load_profiles="" run_sized_services="" run_tls_floor="" run_connection_floors="" run_versus=""
profile_args=()

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# read_env FILE PREFIX: FILE's NAME=value lines as variables PREFIX_NAME
# (its load.* and compose.* lines are a step's: file_prefixed reads them).
read_env() {
  local line name
  while IFS= read -r line || [[ -n "${line}" ]]; do
    case "${line}" in
      '' | '#'* | load.* | compose.*) ;;
      *)
        name="${line%%=*}"
        [[ "${name}" =~ ^[a-z][a-z0-9_]*$ ]] || die "$1: '${line}' is not a NAME=value line"
        printf -v "$2_${name}" '%s' "${line#*=}"
        ;;
    esac
  done <"$1"
}

# read_run_env: run.env (scripts/labctl/plan/runfolder.mjs), and --profile P for
# every load tool's profile into profile_args.
read_run_env() {
  local profile
  read_env "${run_dir}/run.env" run
  # What the libraries read from the run folder: its topology (env.sh
  # topology_text), the samplers' arguments (haproxy.sh sampler_args).
  LAB_RUN_DIR="${run_dir}"
  profile_args=()
  for profile in ${run_load_profiles}; do profile_args+=(--profile "${profile}"); done
}

# run_step DIR: one step, as DIR/step.env says (scripts/labctl/plan/runfolder.mjs):
# the services' settings, the HAProxy config, the backends' scale, then the
# load, watched until its replicas end.
run_step() {
  local step="$1/step.env" switch
  log "step $(file_value "${step}" index)/$(file_value "${step}" total) $(file_value "${step}" label)"
  use_compose_env "$(file_prefixed "${step}" compose | paste -sd' ' -)"
  hold_topology
  switch=$(file_value "${step}" switch)
  [[ -z "${first_switch}" ]] || switch="${first_switch}" first_switch=""
  apply_config "${run_dir}/$(file_value "${step}" config)" "${scenario}/$(file_value "${step}" id)" "${switch:-restart}" "$1"
  hold_probes
  [[ "$(file_value "${step}" haproxy_build)" != 1 ]] || write_build "$1"
  scale "$(file_value "${step}" backends)"
  start_load "$1"
  watch_load "$1"
  finish_load "$1"
  second_method "$1"
  release_step_lookups
}

# write_versions: what ran, read off the running lab, into the run folder
# (the load tools record their own beside their summaries).
write_versions() {
  {
    echo "# the lab's services as they ran (scripts/scenario.sh); read by scripts/labctl/cli.mjs report"
    echo "haproxy=$(haproxy_version)"
    echo "node=$(node_exec node --version)"
    # The machine's CPUs as a container sees them (Docker Desktop's VM): a
    # figure in µs moves with them (an RSA-2048 sign took 195 µs on one
    # machine the lab ran on and 989 on another).
    echo "cpu=$(node_exec node -p 'const c = require("os").cpus(); c.length + " x " + c[0].model.trim()')"
    echo "ssl_library=$(haproxy_ssl_library)"
  } >"${run_dir}/versions.env"
}

# write_build DIR: which HAProxy ran the step, into DIR/haproxy-build.env
# (a --versus run's twins run two images).
write_build() {
  {
    echo "image=$(docker inspect -f '{{.Config.Image}}' "$(instance_container "$(first_instance)")")"
    echo "haproxy=$(haproxy_version)"
    echo "ssl_library=$(haproxy_ssl_library)"
  } >"$1/haproxy-build.env"
}

# require_versus_image: a --versus run's second HAProxy image is here, or
# pulled; else one line on how to get it, before anything changes.
require_versus_image() {
  [[ -n "${run_versus}" ]] || return 0
  docker image inspect "${run_versus}" >/dev/null 2>&1 || docker pull -q "${run_versus}" >/dev/null 2>&1 \
    || die "--versus ${run_versus}: the image is not on this machine and could not be pulled: pull it, or with no registry run scripts/offline-images.sh (it builds offline.env's HAPROXY_PREVIOUS_IMAGE)"
}

# haproxy_version: the version HAProxy runs ("3.2.26-1").
haproxy_version() {
  instance_exec "$(first_instance)" haproxy -v | sed -n '1s/HAProxy version \([^ ]*\).*/\1/p'
}

# haproxy_ssl_library: the SSL library HAProxy runs on ("OpenSSL 3.5.1 1 Jul
# 2025"; HAProxy 2.6 says "Running on OpenSSL version").
haproxy_ssl_library() {
  instance_exec "$(first_instance)" haproxy -vv | sed -n 's/^Running on \(SSL library\|OpenSSL\) version : //p'
}

# tls_floor: this machine's RSA-2048 and ECDSA P-256 sign times (tls-floor.env,
# a sign_floor reading's floor): openssl speed inside HAProxy's container, on
# the very OpenSSL HAProxy runs, when the image has the tool; else Node's
# crypto.sign in the lab's node image (tls/sign-floor.mjs), named as such.
tls_floor() {
  log "reading this machine's sign times (the floor of a full TLS handshake, ~12 s)" >&2
  echo "haproxy_library=$(haproxy_ssl_library)"
  if sign_times instance_exec "$(first_instance)"; then
    echo "floor_tool=openssl speed in HAProxy's container"
    echo "floor_library=$(instance_exec "$(first_instance)" openssl version | head -n 1)"
  else
    docker run --rm --network none -v "${LAB_ROOT}/tls:/tls:ro" "$(env_value NODE_IMAGE)" node /tls/sign-floor.mjs 2
  fi
}

cleanup() {
  local rc=$?
  trap - EXIT
  # Noted, not obeyed, to the end: a cleanup stopped halfway leaves HAProxy
  # on a step's config and the load tools running.
  trap 'interrupted=1' INT TERM
  trap 'interrupted=1; on_hangup' HUP
  # The terminal gone before its SIGHUP came: the runner's writes to it may
  # have failed first (an error exit), and that is the hang-up too.
  if [[ ${output_was_terminal} -eq 1 && ${terminal_gone} -eq 0 && ! -t 1 ]]; then
    interrupted=1
    on_hangup
  fi
  # Nothing here reads the terminal: the docker exec -i calls putting the
  # baseline back would otherwise take what the user types.
  exec </dev/null
  [[ -n "${run_dir}" ]] || { release_run_lock; exit "${rc}"; }
  stop_runner
  floor_cleanup
  # The runner's cache of container ids: cleanup looks afresh.
  [[ -z "${LAB_CACHE_DIR}" ]] || rm -rf "${LAB_CACHE_DIR}"
  LAB_CACHE_DIR=""
  take_lab_state
  # Read: gone on every path out, a refused run's included.
  [[ -z "${lab_state_file}" ]] || rm -f "${lab_state_file}" "${lab_state_file}.new"
  if [[ ${run_accepted} -eq 0 ]]; then
    # Refused before anything started (bad input, no lab, a target that
    # cannot fit): the run folder goes, results/ is as it was.
    rm -rf "${run_dir}"
    rmdir "${run_dir%/*}" 2>/dev/null || true
    release_run_lock
    exit "${rc}"
  fi
  if [[ ${terminal_gone} -eq 1 ]]; then
    echo "interrupted: the terminal closed (SIGHUP)" >"${run_dir}/INCOMPLETE"
  elif [[ ${interrupted} -eq 1 ]]; then
    echo "interrupted by the user (Ctrl-C or SIGTERM)" >"${run_dir}/INCOMPLETE"
  elif [[ ${rc} -ne 0 && ${rc} -ne 3 ]]; then
    echo "stopped by an error (exit ${rc})" >"${run_dir}/INCOMPLETE"
  fi
  if [[ -f "${run_dir}/INCOMPLETE" ]]; then
    echo || true
    log "stopping: load generators, baseline config, backend scale"
  fi
  in_own_group put_lab_back
  if [[ -f "${run_dir}/INCOMPLETE" ]]; then
    log "partial results kept in ${run_dir#"${LAB_ROOT}/"} (marked INCOMPLETE)"
    [[ ${interrupted} -eq 0 ]] || rc=130
    [[ ${terminal_gone} -eq 0 ]] || rc=129
  fi
  release_run_lock
  exit "${rc}"
}

# put_lab_back: the load tools stopped, HAProxy on its baseline, the
# services' settings and the backends' scale as they were, the probes gone;
# an incomplete run's report of what it got.
put_lab_back() {
  stop_second_method
  stop_load_tools
  if [[ ${lab_touched} -eq 1 ]]; then
    [[ -z "${applied_env}" ]] || (use_compose_env -) || true
    restore_baseline "${run_dir}" \
      || { echo "${PROG}: could not put HAProxy back on haproxy/haproxy.cfg: run 'docker compose up -d --force-recreate haproxy'" >&2 || true; }
    (scale "${original_scale}") || true
  fi
  # Last: putting the baseline back reads HAProxy through its probe.
  remove_instance_probes || true
  if [[ -f "${run_dir}/INCOMPLETE" ]]; then
    labctl report "${run_dir#"${LAB_ROOT}/"}" >/dev/null 2>&1 || true
  fi
}

# in_own_group FUNCTION: FUNCTION in a process group of its own, waited for
# to its end: a terminal's Ctrl-C reaches its foreground group, this shell's,
# and would stop the docker commands FUNCTION runs.
in_own_group() {
  local pid
  set -m
  "$1" &
  pid=$!
  set +m
  # A noted signal ends a wait early: wait again while it runs.
  until wait "${pid}"; do kill -0 "${pid}" 2>/dev/null || break; done
}

# on_hangup: the terminal has gone: what is left to say goes to the run
# folder's cleanup.log (a write to a closed terminal can fail).
on_hangup() {
  terminal_gone=1
  if [[ -n "${run_dir}" && -d "${run_dir}" ]]; then
    exec >>"${run_dir}/cleanup.log" 2>&1
  else
    exec >/dev/null 2>&1
  fi
}

# new_run_dir: results/SCENARIO/<UTC timestamp>, a new folder (a second run
# in the same second gets -2, -3...): results are never overwritten.
new_run_dir() {
  local base n=1
  mkdir -p "${LAB_ROOT}/results/${scenario}"
  base="${LAB_ROOT}/results/${scenario}/$(date -u +%Y%m%dT%H%M%SZ)"
  run_dir="${base}"
  # mkdir without -p fails if the folder exists.
  until mkdir "${run_dir}" 2>/dev/null; do n=$((n + 1)) run_dir="${base}-${n}"; done
}

# plan_run ARGS...: the run folder planned (run.env, plan.json, configs,
# steps/*/step.env), the lab checked, and for connection scenarios the
# machine's limits read and the target checked against them first.
plan_run() {
  local out="${run_dir#"${LAB_ROOT}/"}" cores project
  # The cores Docker gives containers: a curve's dedicated cores come from
  # these. An engine that does not answer is require_stack's to name.
  if cores=$(docker info -f '{{.NCPU}}' 2>/dev/null); then set -- --machine-cores "${cores}" "$@"; fi
  [[ ${on_swarm:-0} -eq 0 ]] || set -- --on-swarm "$@"
  labctl plan "${scenario}" --out "${out}" --command "scripts/scenario.sh ${scenario_args}" --lab-processes "$(env_value HAPROXY_PROCESSES)" "$@" || exit 2
  read_run_env
  require_stack
  require_versus_image
  [[ "${run_preflight}" == needed ]] || return 0
  collect_limits "${run_sized_services}" "${profile_args[@]}" >"${run_dir}/limits.env" || die "could not read the machine's limits"
  labctl preflight "${scenario}" --limits "${out}/limits.env" "$@" || exit 2
  # The project names the backends' containers (connections.backends_in_order).
  project=$(compose_project)
  labctl plan "${scenario}" --out "${out}" --command "scripts/scenario.sh ${scenario_args}" --limits "${out}/limits.env" --lab-processes "$(env_value HAPROXY_PROCESSES)" \
    ${project:+--project "${project}"} "$@" || exit 2
  read_run_env
}

main() {
  [[ ! -t 1 ]] || output_was_terminal=1
  case "${1:-}" in
    "" | -h | --help) usage; exit 0 ;;
    list) labctl_or_host_node list; exit ;;
  esac
  scenario="$1"
  scenario_args="$*"
  shift
  local args=() arg on_swarm=0
  for arg in "$@"; do
    # --versus previous: .env's HAPROXY_PREVIOUS_IMAGE (the planner checks what follows --versus).
    if [[ "${arg}" == previous && "${args[*]: -1}" == --versus ]] || [[ "${arg}" == --versus=previous ]]; then
      arg="${arg%previous}$(env_value HAPROXY_PREVIOUS_IMAGE)"
    fi
    if [[ "${arg}" == --swarm ]]; then on_swarm=1; else args+=("${arg}"); fi
  done
  set -- ${args[@]+"${args[@]}"}
  # The name and options, on this host's node when Docker is not there yet (labctl_or_host_node).
  if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then labctl_or_host_node describe "${scenario}"; exit; fi
  labctl_or_host_node plan "${scenario}" --check "$@" || exit 2
  require_docker
  require_node_image
  if [[ ${on_swarm} -eq 1 ]]; then
    use_engine swarm
  fi
  fit_nofile
  take_run_lock "scripts/scenario.sh ${scenario_args}"
  new_run_dir
  lab_state_file=$(mktemp)
  # The run's container and probe ids (instance_container, instance_probe).
  LAB_CACHE_DIR=$(mktemp -d)
  catch_signals
  supervise run_scenario "$@"
}

# catch_signals: cleanup on any exit; Ctrl-C or SIGTERM only noted, the
# supervising shell then stops waiting (supervise).
catch_signals() {
  trap cleanup EXIT
  trap 'interrupted=1' INT TERM
  trap 'interrupted=1; on_hangup' HUP
}

# supervise FUNCTION ARGS...: FUNCTION in a process group of its own while
# this shell only waits; its exit status, or 130 on Ctrl-C or SIGTERM. Why:
# bash 5.2.15 (Debian 12) cannot parse a trap that fires while it expands a
# command's second command substitution ("interrupt trap: unexpected EOF
# while looking for matching `)'", exit 2, the Ctrl-C lost); a shell that
# waits expands none. Ctrl-C reaches this shell only (the terminal's
# foreground group); cleanup stops the runner's group with SIGTERM.
supervise() {
  local rc=0
  [[ ${interrupted} -eq 0 ]] || return 130
  set -m
  "$@" </dev/null &
  runner_pid=$!
  set +m
  wait "${runner_pid}" || rc=$?
  [[ ${interrupted} -eq 0 ]] || return 130
  runner_pid=""
  return "${rc}"
}

# stop_runner: the runner's process group, its docker commands included, gone
# (SIGTERM; it saved the lab's state as it went: save_lab_state).
stop_runner() {
  [[ -n "${runner_pid}" ]] || return 0
  kill -TERM -- "-${runner_pid}" 2>/dev/null || true
  wait "${runner_pid}" 2>/dev/null || true
  runner_pid=""
}

# take_lab_state: what the runner saved (save_lab_state): a run that got that
# far started (run_accepted), and cleanup knows what to put back.
take_lab_state() {
  [[ -s "${lab_state_file}" ]] || return 0
  read_env "${lab_state_file}" saved
  # shellcheck disable=SC2154 # read_env sets saved_NAME
  lab_touched="${saved_lab_touched}" applied_env="${saved_applied_env}" \
    original_scale="${saved_original_scale}" run_accepted=1
  # The containers found by Compose's labels, as the runner did (no cache).
  LAB_PROJECT="${saved_project:-}"
  [[ ! -f "${run_dir}/run.env" ]] || read_run_env
}

# run_scenario ARGS...: the run itself, in the process supervise starts (no
# traps of its own: SIGTERM ends it, the supervising shell cleans up).
run_scenario() {
  trap - EXIT INT TERM
  plan_run "$@"
  # Its containers found by Compose's labels, not compose ps, every step.
  LAB_PROJECT=$(compose_project) || LAB_PROJECT=""
  started_ms=$(now_ms)
  original_scale=$(backend_scale)
  somaxconn=$(instance_exec "$(first_instance)" cat /proc/sys/net/core/somaxconn)
  description_is baseline || first_switch=restart
  save_lab_state
  log "${scenario}: ${run_steps} steps, results in ${run_dir#"${LAB_ROOT}/"}"
  [[ "${run_tls_floor:-none}" != needed ]] || tls_floor >"${run_dir}/tls-floor.env"
  [[ "${run_connection_floors:-none}" != needed || ${on_swarm:-0} -eq 1 ]] || run_floors "${run_dir}"
  local i
  for ((i = 1; i <= run_steps; i++)); do
    run_step "$(step_dir "${i}")"
  done
  local rc=0
  write_versions
  labctl report "${run_dir#"${LAB_ROOT}/"}" || rc=$?
  # Without Grafana (offline: no stand-in) the run's chart.svg is the chart.
  [[ ${grafana_ok} -eq 0 ]] || log "dashboard: http://127.0.0.1:$(env_value GRAFANA_PORT)/d/haproxy-lab?from=${started_ms}&to=$(now_ms)"
  local charts="chart.svg"
  [[ ! -f "${run_dir}/chart-time.svg" ]] || charts+=", chart-time.svg"
  log "results: ${run_dir#"${LAB_ROOT}/"}/ (report.md, summary.csv, summary.json, ${charts})"
  return "${rc}"
}

# step_dir N: the folder of step N (steps/NN-id, NN at least two digits).
step_dir() {
  local dirs
  dirs=("${run_dir}/steps/$(printf '%02d' "$1")-"*)
  [[ -f "${dirs[0]}/step.env" ]] || die "${run_dir#"${LAB_ROOT}/"}: no step.env for step $1"
  echo "${dirs[0]}"
}

# Sourced (tests/unit.sh), only the functions.
# "exit" on the same line: bash reads a script as it runs, so an edit of this
# file during a run cannot make it run what follows.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; exit; fi
