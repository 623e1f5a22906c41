#!/usr/bin/env bash
# Usage: scripts/scenario.sh list
#        scripts/scenario.sh SCENARIO [--quick] [--duration S] [--replicas N] [--repeat N]
#        scripts/scenario.sh client-timeout --article         (the article's own values)
#        scripts/scenario.sh connections [--target N|max]     (preflight first)
#        scripts/scenario.sh SCENARIO --help
#
# Reruns a published HAProxy experiment on the running lab (docker compose up
# -d --wait) and prints the measured table beside the published one. For each
# step: set the services' environment if the step changes it, render the
# HAProxy config, check it (haproxy -c) inside the running container, swap it
# in with a hitless reload, wait until HAProxy reports it, run the load (k6, or
# the connection holder), sample HAProxy's connections on both sides, collect
# the client view (merged summaries) and the server view (show info / show
# stat, listen overflows, CPU and memory per container, HAProxy's log).
# Connection scenarios first check the target against the machine's limits and
# refuse what cannot fit. Results go to results/SCENARIO/<UTC timestamp>/ and
# are never overwritten. On the end, an error or Ctrl-C, HAProxy goes back to
# haproxy/haproxy.cfg, services to their settings, load generators stop and
# backends return to their scale; partial results stay, marked INCOMPLETE.
# Exit: 0 done and every verdict passed, 3 a verdict failed, 130 interrupted,
# 1-2 bad input, a refused target or a broken lab (one line on stderr).
set -euo pipefail

PROG="scenario"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly LIVE_CFG=/var/lib/haproxy/live.cfg
readonly BASELINE_CFG=/usr/local/etc/haproxy/haproxy.cfg
run_dir=""
scenario=""
scenario_args=""
started_ms=0
original_scale=""
touched=0
interrupted=0
grafana_ok=1
applied_env=""
current_conns="-"
somaxconn=""

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# labctl ARGS...: scripts/lab/cli.mjs in the lab's node image (the host needs no node).
labctl() {
  docker run --rm -i --network none --user "${LAB_UID}:${LAB_GID}" \
    -v "${LAB_ROOT}:/lab" -w /lab "$(env_value NODE_IMAGE)" node scripts/lab/cli.mjs "$@"
}

require_stack() {
  local running service
  running=$(compose ps --status running --format '{{.Service}}' 2>/dev/null || true)
  for service in haproxy backend-slow backend-fast prometheus; do
    grep -qx "${service}" <<<"${running}" \
      || die "the lab is not running (no ${service}): start it with 'docker compose up -d --wait'"
  done
  if grep -qx loadgen <<<"${running}"; then
    die "a load generator is already running: wait for it or stop it with 'docker compose --profile load rm -sf loadgen'"
  fi
}

# HAProxy holds no client connection for two polls in a row (leftovers of the
# previous step, e.g. connections that waited in the accept queue, are gone).
quiet() {
  [[ "$(haproxy_info CurrConns)" == 0 ]] && sleep 1 && [[ "$(haproxy_info CurrConns)" == 0 ]]
}

# listening_sockets FILE: `ss -ltn` in HAProxy's network namespace (the real
# backlog and accept queue of every listening socket), raw, into FILE.
listening_sockets() {
  local errors
  # Explicit return values throughout: called from the EXIT trap, a bare
  # "return" would return the status the script exited with.
  if errors=$(compose --profile tools run --rm --no-deps -T netprobe -ltn 2>&1 >"$1"); then return 0; fi
  echo "${errors}" >&2
  echo "${PROG}: could not read HAProxy's listening sockets with ss (netprobe, output above)" >&2
  return 1
}

# listeners_differ EXPECTED SS_FILE: one line per listening socket that is not
# what the config asks (labctl listeners); false when all are.
listeners_differ() {
  [[ -n "${somaxconn}" ]] || somaxconn=$(compose exec -T haproxy cat /proc/sys/net/core/somaxconn)
  ! labctl listeners "${1#"${LAB_ROOT}/"}" "${2#"${LAB_ROOT}/"}" "${somaxconn}"
}

# restart_haproxy WHY: stop and start HAProxy on the live config (new
# listening sockets). SIGTERM, HAProxy's hard stop, cuts what it still holds
# at once; the image's stop signal (SIGUSR1) would wait for every connection.
restart_haproxy() {
  local id
  log "restarting HAProxy: $1"
  id=$(compose ps -q haproxy)
  compose exec -T haproxy touch /var/lib/haproxy/keep-live-cfg \
    && compose kill -s TERM haproxy >/dev/null 2>&1 \
    && docker wait "${id}" >/dev/null \
    && compose start haproxy >/dev/null 2>&1
}

# switch_config DESCRIPTION LISTENERS DIR: make HAProxy run the live config.
# A reload (USR2: the old worker finishes its connections) unless the running
# listening sockets differ from the config's (LISTENERS): a reload keeps them,
# backlog included, so then a restart. Checked afterwards with ss; DIR keeps
# ss's view before and after.
switch_config() {
  local why since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  listening_sockets "$3/listen-sockets-before.txt" || return 1
  if why=$(listeners_differ "$2" "$3/listen-sockets-before.txt"); then
    restart_haproxy "a reload keeps the listening sockets and this config changes them (${why//$'\n'/; })" || return 1
  else
    compose kill -s USR2 haproxy >/dev/null 2>&1
  fi
  if ! wait_for 30 "HAProxy to run '$1'" description_is "$1"; then
    # Why, in HAProxy's words (e.g. "Cannot raise FD limit to 20153, limit is 20000").
    compose logs --no-log-prefix --since "${since}" haproxy 2>/dev/null | grep -E 'ALERT|Failed to load' | tail -n 3 >&2
    return 1
  fi
  listening_sockets "$3/listen-sockets.txt" || return 1
  if why=$(listeners_differ "$2" "$3/listen-sockets.txt"); then
    echo "${PROG}: HAProxy runs other listening sockets than '$1' asks: ${why//$'\n'/; } (ss -ltn in $3/listen-sockets.txt)" >&2
    return 1
  fi
}

# apply_config FILE DESCRIPTION LISTENERS DIR: check FILE with haproxy -c in
# the running container, swap it in, switch to it (switch_config), wait until
# the previous step's connections are gone.
apply_config() {
  # shellcheck disable=SC2016 # expanded by the container's bash
  compose exec -T haproxy bash -c '
    cat > /var/lib/haproxy/candidate.cfg &&
    haproxy -c -q -f /var/lib/haproxy/candidate.cfg &&
    mv -f /var/lib/haproxy/candidate.cfg "$1"' _ "${LIVE_CFG}" <"$1" \
    || die "HAProxy rejected $1 (haproxy -c above); the running config is unchanged"
  touched=1
  switch_config "$2" "$3" "$4" || die "HAProxy did not take $1 as asked (above)"
  wait_for 60 "HAProxy to drain the previous step's connections" quiet || true
}

# restore_baseline: haproxy/haproxy.cfg again, with its own listening sockets.
restore_baseline() {
  local listeners="${run_dir}/configs/baseline.listeners" dir="${run_dir}/baseline-restored"
  if ! compose exec -T haproxy ln -sfn "${BASELINE_CFG}" "${LIVE_CFG}"; then
    echo "${PROG}: could not link ${LIVE_CFG} back to haproxy/haproxy.cfg in the haproxy container" >&2
    return 1
  fi
  if [[ ! -f "${listeners}" ]]; then
    compose kill -s USR2 haproxy >/dev/null 2>&1
    wait_for 30 "HAProxy back on haproxy/haproxy.cfg" description_is baseline
    return $?
  fi
  mkdir -p "${dir}" && switch_config baseline "${listeners}" "${dir}"
}

# scale SVC=N,SVC=N: backend replicas, and HAProxy sees each of them UP.
scale() {
  local args=() pairs pair svc n output
  IFS=',' read -r -a pairs <<<"$1"
  for pair in "${pairs[@]}"; do
    [[ -n "${pair}" ]] && args+=(--scale "${pair}")
  done
  [[ ${#args[@]} -gt 0 && "$(backend_scale)" != "$(sort_pairs "$1")" ]] || return 0
  if ! output=$(compose up -d --wait --no-recreate "${args[@]}" haproxy backend-slow backend-fast prometheus 2>&1); then
    tail -n 5 <<<"${output}" >&2
    die "could not scale the backends to $1 (docker compose output above)"
  fi
  for pair in "${pairs[@]}"; do
    svc="${pair%=*}" n="${pair#*=}"
    wait_for 30 "${n} ${svc} servers UP in HAProxy" servers_up "be_${svc#backend-}" "${n}" \
      || die "HAProxy does not see ${n} ${svc} replicas UP"
  done
}

sort_pairs() { tr ',' '\n' <<<"$1" | sort | paste -sd, -; }


# annotate TEXT TAGS [TIME_END_MS]: a Grafana annotation (region when
# TIME_END_MS), posted from the Prometheus container on the lab network.
annotate() {
  [[ ${grafana_ok} -eq 1 ]] || return 0
  local now body
  now=$(($(date +%s%N) / 1000000))
  body=$(printf '{"time":%s,%s"tags":[%s],"text":"%s"}' "${4:-${now}}" \
    "${3:+\"timeEnd\":$3,}" "$2" "${1//\"/\'}")
  if ! compose exec -T prometheus wget -q -O /dev/null -T 3 --header 'Content-Type: application/json' \
      --post-data "${body}" http://grafana:3000/api/annotations >/dev/null 2>&1; then
    grafana_ok=0
    log "Grafana is not reachable: no dashboard annotations for this run"
  fi
}

# hits_so_far: 2xx answers of every backend since the step's reload.
# (0 while HAProxy is down, e.g. OOM-killed.)
hits_so_far() { haproxy_stat_sum 'be_.*' BACKEND hrsp_2xx 2>/dev/null || true; }

# progress STEP SECONDS_LEFT|done HITS: one line rewritten in place on a
# terminal; in a log (CI), a line every 10 s.
progress() {
  local left="$2" text
  if [[ "${left}" == "done" ]]; then
    text=$(printf '  step %-46s done, %s hits' "${1:0:46}" "$3")
    if [[ -t 1 ]]; then printf '\r%-80s\n' "${text}"; else echo "${text}"; fi
    return 0
  fi
  ((left > 0)) || left=0
  text=$(printf '  step %-46s %4ss left, %s hits so far' "${1:0:46}" "${left}" "$3")
  if [[ -t 1 ]]; then
    printf '\r%-80s' "${text}"
  elif ((SECONDS - ${last_progress:-0} >= 10)); then
    echo "${text}"
    last_progress=${SECONDS}
  fi
}

netstat_of_haproxy() { compose exec -T haproxy cat /proc/net/netstat; }

# use_compose_env "K=V K=V"|-: the step's settings of the lab's services
# (e.g. BACKEND_SERVER_TIMEOUT_MS, HAPROXY_MEMORY) exported for compose, and the
# services recreated with them when they change.
use_compose_env() {
  local wanted="${1#-}" kv output
  # Also when HAProxy is down (OOM-killed in the previous step): up again.
  [[ "${wanted}" == "${applied_env}" && -n "$(compose ps -q --status running haproxy)" ]] && return 0
  for kv in ${applied_env}; do unset "${kv%%=*}"; done
  # shellcheck disable=SC2086 # one word per K=V, checked by the planner
  for kv in ${wanted}; do export "${kv?}"; done
  applied_env="${wanted}" touched=1
  log "services with ${wanted:-their default settings}"
  local args=() pair
  IFS=',' read -r -a pairs <<<"$(backend_scale)"
  for pair in "${pairs[@]}"; do args+=(--scale "${pair}"); done
  if ! output=$(compose up -d --wait "${args[@]}" haproxy backend-slow backend-fast prometheus 2>&1); then
    tail -n 5 <<<"${output}" >&2
    die "could not restart the lab's services with ${wanted:-their default settings}"
  fi
}

# without_missing_sysctl "K=V ..." DIR: the load environment without a
# LOADGEN_SYSCTL this Docker host's kernel does not have (the load generators
# would not start), and a note in DIR/notes.txt saying so.
without_missing_sysctl() {
  local words="$1" kv setting
  for kv in ${words}; do [[ "${kv}" == LOADGEN_SYSCTL=* ]] && setting="${kv#LOADGEN_SYSCTL=}"; done
  if [[ -z "${setting:-}" ]] \
    || docker run --rm --network none --entrypoint sh "$(env_value NODE_IMAGE)" -c "test -e /proc/sys/$(tr . / <<<"${setting%%=*}")"; then
    echo "${words}"
    return 0
  fi
  log "the clients' kernel has no ${setting%%=*}: the step runs with the kernel's own setting"
  echo "the clients' kernel has no ${setting%%=*}: this step ran without ${setting}" >>"$2/notes.txt"
  tr ' ' '\n' <<<"${words}" | grep -v '^LOADGEN_SYSCTL=' | paste -sd' ' -
}

# sample FILE T: "t haproxy_conns backend_conns accept_queue" while the load runs.
sample() {
  local line
  line=$(haproxy_sockets 2>/dev/null) || line="- - -"
  echo "$2 ${line}" >>"$1"
  current_conns="${line%% *}"
}

# run_step: one line of the plan (see scripts/lab/cli.mjs plan).
run_step() {
  local index="$1" dir="$2" id="$3" label="$4" config="$5" seconds="$6" replicas="$7"
  local script="$8" backends="${9#-}" env_words="${10#-}" compose_env="${11}" sample_at="${12}" total="${13}"
  local out start_ms end_ms started hits0 since service=loadgen profile=load
  [[ "${script}" == holder ]] && service=holder profile=hold
  out="${run_dir}/${dir}"
  mkdir -p "${out}"
  log "step ${index}/${total} ${label}"
  use_compose_env "${compose_env}"
  apply_config "${run_dir}/${config}" "${scenario}/${id}" "${run_dir}/${config%.cfg}.listeners" "${out}"
  scale "${backends}"
  env_words=$(without_missing_sysctl "${env_words}" "${out}")
  netstat_of_haproxy >"${out}/netstat-before.txt"
  container_stats "${out}/memory-before.txt"
  start_ms=$(($(date +%s%N) / 1000000))
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  annotate "${scenario} step ${index}/${total}: ${label}" "\"haproxy-lab\",\"${scenario}\",\"${id}\""
  # Answers before the load (the previous step's leftovers) are not this step's.
  hits0=$(hits_so_far)
  (
    # shellcheck disable=SC2086 # one word per K=V, checked by the planner
    for kv in ${env_words}; do export "${kv?}"; done
    export TESTID="${scenario}-${run_dir##*/}-${id}" LOADGEN_REPLICAS="${replicas}" \
      LOADGEN_SUMMARY_DIR="${out#"${LAB_ROOT}/results/"}" LOADGEN_SCRIPT="/loadgen/${script}"
    compose --profile "${profile}" up -d --no-deps --scale "${service}=${replicas}" "${service}" >/dev/null 2>&1
  ) || die "could not start the load generators"
  started=${SECONDS}
  echo "t haproxy_conns backend_conns accept_queue" >"${out}/samples.txt"
  while [[ -n "$(compose --profile "${profile}" ps -q --status running "${service}" 2>/dev/null)" ]]; do
    sample "${out}/samples.txt" $((SECONDS - started))
    progress "${index}/${total} ${label}" $((seconds - (SECONDS - started))) "${current_conns} conns, $(($(hits_so_far) - hits0))"
    # One sample of every container's CPU and memory, once the load has
    # settled (or mid-hold): cpu.txt, with HAProxy's own view beside it.
    if [[ ! -s "${out}/cpu.txt" ]] && ((SECONDS - started >= sample_at)); then
      container_stats "${out}/cpu.txt"
      haproxy_cli "show info" >"${out}/haproxy-info-peak.txt" 2>/dev/null || true
    fi
    sleep 1
  done
  progress "${index}/${total} ${label}" "done" "$(($(hits_so_far) - hits0))"
  end_ms=$(($(date +%s%N) / 1000000))
  step_evidence "${out}" "${since}"
  printf '{"started_at_ms": %s, "ended_at_ms": %s, "completed": true, "exit_codes": [%s], "haproxy_state": "%s"}\n' \
    "${start_ms}" "${end_ms}" "$(compose --profile "${profile}" ps -a --format '{{.ExitCode}}' "${service}" | paste -sd, -)" \
    "$(docker inspect -f 'oom_killed={{.State.OOMKilled}} status={{.State.Status}} exit={{.State.ExitCode}}' "$(compose ps -a -q haproxy)" 2>/dev/null)" \
    >"${out}/step.json"
  # The load generators' own words (k6: why requests failed), before they go.
  compose --profile "${profile}" logs --no-color "${service}" >"${out}/${service}-log.txt" 2>&1 || true
  compose --profile "${profile}" rm -sf "${service}" >/dev/null 2>&1
  annotate "${scenario}: ${label}" "\"haproxy-lab\",\"${scenario}\",\"${id}\"" "${end_ms}" "${start_ms}"
}

# step_evidence DIR SINCE: HAProxy's counters and the log lines it wrote
# during the step (only abnormal ones: dontlog-normal), e.g. SD aborts.
step_evidence() {
  haproxy_cli "show info" >"$1/haproxy-info.txt" 2>/dev/null || true
  haproxy_cli "show stat" >"$1/haproxy-stat.csv" 2>/dev/null || true
  netstat_of_haproxy >"$1/netstat-after.txt" 2>/dev/null || true
  compose logs --no-log-prefix --since "$2" haproxy >"$1/haproxy-log.txt" 2>/dev/null || true
}

versions() {
  printf 'haproxy=%s;k6=%s;node=%s' \
    "$(compose exec -T haproxy haproxy -v | sed -n '1s/HAProxy version \([^ ]*\).*/\1/p')" \
    "$(docker run --rm "$(env_value K6_IMAGE)" version 2>/dev/null | sed -n '1s/^k6 v\{0,1\}\([^ ]*\).*/\1/p')" \
    "$(compose exec -T backend-slow node --version)"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -n "${run_dir}" ]] || exit "${rc}"
  if [[ ${interrupted} -eq 1 ]]; then
    echo "interrupted by the user (Ctrl-C or SIGTERM)" >"${run_dir}/INCOMPLETE"
  elif [[ ${rc} -ne 0 && ${rc} -ne 3 ]]; then
    echo "stopped by an error (exit ${rc})" >"${run_dir}/INCOMPLETE"
  fi
  if [[ -f "${run_dir}/INCOMPLETE" ]]; then
    echo
    log "stopping: load generators, baseline config, backend scale"
  fi
  compose --profile load rm -sf loadgen >/dev/null 2>&1 || true
  if [[ ${touched} -eq 1 ]]; then
    [[ -z "${applied_env}" ]] || (use_compose_env -) || true
    restore_baseline || echo "${PROG}: could not put HAProxy back on haproxy/haproxy.cfg: run 'docker compose up -d --force-recreate haproxy'" >&2
    (scale "${original_scale}") || true
  fi
  if [[ -f "${run_dir}/INCOMPLETE" ]]; then
    labctl report "${run_dir#"${LAB_ROOT}/"}" --command "scripts/scenario.sh ${scenario_args}" >/dev/null 2>&1 || true
    log "partial results kept in ${run_dir#"${LAB_ROOT}/"} (marked INCOMPLETE)"
    [[ ${interrupted} -eq 1 ]] && rc=130
  fi
  exit "${rc}"
}

main() {
  case "${1:-}" in
    ""|-h|--help) usage; exit 0 ;;
    list) require_docker; labctl list; exit ;;
  esac
  scenario="$1"
  scenario_args="$*"
  shift
  require_docker
  if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then labctl describe "${scenario}"; exit; fi
  labctl plan "${scenario}" --check "$@" || exit 2
  require_stack
  # Connection scenarios: check the target against this machine's limits
  # before anything starts (a refusal changes nothing).
  local limits=""
  if grep -q '"connections"' "${LAB_ROOT}/scenarios/${scenario}.json"; then
    limits="results/.limits-$$.json"
    collect_limits >"${LAB_ROOT}/${limits}" || { rm -f "${LAB_ROOT}/${limits}"; die "could not read the machine's limits"; }
    labctl preflight "${scenario}" --limits "${limits}" "$@" || { rm -f "${LAB_ROOT}/${limits}"; exit 2; }
  fi

  local base plan_lines line total n=1
  mkdir -p "${LAB_ROOT}/results/${scenario}"
  base="${LAB_ROOT}/results/${scenario}/$(date -u +%Y%m%dT%H%M%SZ)"
  run_dir="${base}"
  # mkdir without -p fails if the folder exists: results are never overwritten.
  until mkdir "${run_dir}" 2>/dev/null; do n=$((n + 1)) run_dir="${base}-${n}"; done
  started_ms=$(($(date +%s%N) / 1000000))
  trap cleanup EXIT
  trap 'interrupted=1; exit 130' INT TERM
  original_scale=$(backend_scale)
  if [[ -n "${limits}" ]]; then
    mv "${LAB_ROOT}/${limits}" "${run_dir}/limits.json"
    set -- "$@" --limits "results/${scenario}/${run_dir##*/}/limits.json"
  fi
  plan_lines=$(labctl plan "${scenario}" --out "results/${scenario}/${run_dir##*/}" "$@")
  total=$(wc -l <<<"${plan_lines}")
  log "${scenario}: ${total} steps, results in ${run_dir#"${LAB_ROOT}/"}"
  while IFS=$'\t' read -r -a line; do
    run_step "${line[@]}" "${total}" </dev/null
  done <<<"${plan_lines}"

  trap - INT TERM
  local rc=0
  labctl report "${run_dir#"${LAB_ROOT}/"}" --command "scripts/scenario.sh ${scenario_args}" --versions "$(versions)" || rc=$?
  log "dashboard: http://127.0.0.1:$(env_value GRAFANA_PORT)/d/haproxy-lab?from=${started_ms}&to=$(($(date +%s%N) / 1000000))"
  log "results: ${run_dir#"${LAB_ROOT}/"}/ (report.md, summary.csv, summary.json, chart.svg)"
  return "${rc}"
}

# Sourced (tests/unit.sh), only the functions.
# "exit" on the same line: bash reads a script as it runs, so an edit of this
# file during a run cannot make it run what follows.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; exit; fi
