# shellcheck shell=bash
# shellcheck disable=SC2119,SC2120 # the test files call e2e_up with --scale
# End to end: the stack for real (everything but Grafana, which no registry
# here has), in its own compose project and ports so a running lab is left
# alone. This file holds the group's setup and the helpers its tests share;
# the tests are in tests/e2e-*.sh, one file per subject. Each test brings the
# lab to the state it needs (e2e_up and the fixtures below), whatever ran
# before it or failed half-way, so any file and any test runs alone from a
# stopped lab (scripts/test.sh e2e PATTERN).

# Sourced once: the swarm group sources it too, and a run may hold both.
[[ -z "${E2E_SOURCED:-}" ]] || return 0
E2E_SOURCED=1
readonly E2E_SERVICES=(haproxy backend-slow backend-fast prometheus container-exporter docker-api-gate haproxy-exporter)
# Every load tool's compose service and "--profile P" for each, from the
# engine's table (read_load_tools): a tool added there is cleaned up here too.
E2E_LOAD_SERVICES=()
E2E_LOAD_PROFILES=()
E2E_TESTID="e2e-$(date +%s)-$$"
E2E_SUMMARIES="results/.${E2E_TESTID}"
e2e_started=0

# e2e_env: the test lab's own compose project and ports (the swarm group
# compares its runs with this lab's too).
e2e_env() {
  export COMPOSE_PROJECT_NAME=haproxy-lab-test
  export HAPROXY_HTTP_PORT=18080 HAPROXY_HTTPS_PORT=18443 HAPROXY_STATS_PORT=18404 HAPROXY_METRICS_PORT=18405
  export PROMETHEUS_PORT=19090 GRAFANA_PORT=13000
}

# read_load_tools: E2E_LOAD_SERVICES and E2E_LOAD_PROFILES from
# scripts/labctl/cli.mjs tools ("TOOL SERVICE PROFILE" lines), once per session:
# e2e_setup reads them before the tests' subshells start.
read_load_tools() {
  [[ ${#E2E_LOAD_SERVICES[@]} -eq 0 ]] || return 0
  local rows service profile
  rows=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs tools) || { fail "scripts/labctl/cli.mjs tools failed (above)"; return 1; }
  while read -r _ service profile; do
    [[ -n "${service}" ]] || continue
    E2E_LOAD_SERVICES+=("${service}")
    E2E_LOAD_PROFILES+=(--profile "${profile}")
  done <<<"${rows}"
  [[ -n "${E2E_LOAD_SERVICES[*]}" ]] || fail "scripts/labctl/cli.mjs tools named no load tool"
}

e2e_setup() {
  e2e_env
  read_load_tools || return 1
  e2e_started=1
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  ports_free e2e || return 1
  # The session starts with an empty Prometheus (down -v): data from here on,
  # and the runs made from here on (their folders are named by UTC time).
  # shellcheck disable=SC2034 # read by tests/e2e-dashboards.sh
  E2E_STARTED_MS=$(($(date +%s%N) / 1000000))
  E2E_STARTED_RUN=$(date -u +%Y%m%dT%H%M%SZ)
}

e2e_teardown() {
  [[ ${e2e_started} -eq 1 ]] || return 0
  e2e_started=0
  log "e2e: tearing down"
  docker rm -f "${COMPOSE_PROJECT_NAME}-fake-grafana" >/dev/null 2>&1 || true
  remove_refusing_members >/dev/null 2>&1 || true
  remove_instance_probes >/dev/null 2>&1 || true
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  remove_probes
  rm -rf "${LAB_ROOT:?}/${E2E_SUMMARIES}"
}

# remove_refusing_members: every container tests/e2e-reloads.sh's
# join_refusing_members started (its test's end, and the teardown after a
# failure).
remove_refusing_members() {
  local ids
  mapfile -t ids < <(docker ps -aq --filter "name=^${COMPOSE_PROJECT_NAME}-refusing-[0-9]+$")
  [[ ${#ids[@]} -eq 0 ]] || docker rm -f "${ids[@]}" >/dev/null
}

# e2e_up [ARGS...]: the lab every e2e test starts from: the e2e services up
# and healthy, at the scale ARGS ask (--scale backend-slow=3; compose brings
# any other back to 1), no load generator left by a test that failed or a
# runner that did not clean up, HAProxy on the baseline config. Cheap when the
# lab is already so (compose up --wait changes nothing, ~2 s).
e2e_up() {
  read_load_tools
  compose "${E2E_LOAD_PROFILES[@]}" rm -sf "${E2E_LOAD_SERVICES[@]}" >/dev/null 2>&1 || true
  quiet_compose up -d --wait --wait-timeout 180 "$@" "${E2E_SERVICES[@]}"
  haproxy_on_baseline || fail "HAProxy is not on its baseline and could not be recreated (docker compose up -d --force-recreate haproxy)"
}

# quiet_compose ARGS...: compose ARGS, its progress lines shown only when it
# fails (the last 20), so a failed test's output is about the test.
quiet_compose() {
  local out
  out=$(compose "$@" 2>&1) || { tail -n 20 <<<"${out}" >&2; return 1; }
}

# e2e_check CHECK [NAME=VALUE...]: the node:test file
# tests/e2e/checks/CHECK.test.mjs with NAME=VALUE in its environment (E2E_RUN:
# a run folder), in the lab's node image with the repository read-only. Its
# failures say what was expected and what was found, with the diff (node's
# stack frames and error codes left out); exits non-zero when one failed.
e2e_check() {
  local check="$1"
  shift
  in_image NODE_IMAGE env "$@" node --test --test-reporter=spec "tests/e2e/checks/${check}.test.mjs" \
    | sed -E "/^ +(at .*[(:]|generatedMessage: |code: 'ERR_|operator: '|diff: ')/d"
}

# fe_main_backlog: the backlog of HAProxy's :8080 listening socket, as the
# kernel has it (ss in HAProxy's network namespace).
fe_main_backlog() {
  compose --profile tools run --rm --no-deps -T netprobe -ltnH | awk '$4 ~ /:8080$/ { print $3 }'
}

# --- scripts/scenario.sh on the real stack -----------------------------------

# newest_run SCENARIO: the newest results folder of SCENARIO (relative path).
newest_run() {
  local dir last=""
  # Globs sort by name, and run folders are named by UTC time.
  for dir in "${LAB_ROOT}/results/$1"/*/; do [[ -d "${dir}" ]] && last="${dir%/}"; done
  echo "${last#"${LAB_ROOT}/"}"
}

# session_run SCENARIO: the newest complete run of SCENARIO made in this e2e
# session (Prometheus has its data), or nothing.
session_run() {
  local dir last=""
  for dir in "${LAB_ROOT}/results/$1"/*/; do
    [[ ! "${dir%/}" < "${LAB_ROOT}/results/$1/${E2E_STARTED_RUN}" && -s "${dir}summary.json" \
      && ! -e "${dir}INCOMPLETE" ]] && last="${dir%/}"
  done
  echo "${last#"${LAB_ROOT}/"}"
}

# sweep_run: a complete maxconn-sweep run of this session, for the dashboard
# tests: e2e_08's --quick run (or slow_08's full one) when it ran, else a
# --quick one made now (~1 min; its verdicts are not judged here).
sweep_run() {
  local run
  run=$(session_run maxconn-sweep)
  if [[ -z "${run}" ]]; then
    echo "no maxconn-sweep run in this session yet: running one with --quick" >&2
    e2e_up >&2
    scripts/scenario.sh maxconn-sweep --quick >&2 || true
    run=$(session_run maxconn-sweep)
  fi
  if [[ -z "${run}" ]]; then
    fail "no complete maxconn-sweep run in this session (scripts/scenario.sh maxconn-sweep --quick above)"
    return 1
  fi
  echo "${run}"
}

assert_run_files() { # RUN
  local f
  for f in plan.json summary.csv summary.json report.md chart.svg; do
    [[ -s "${LAB_ROOT}/$1/${f}" ]] || fail "$1/${f} missing"
  done
  # Any load tool's first replica: SERVICE-1.json.
  compgen -G "${LAB_ROOT}/$1/steps/*/*-1.json" >/dev/null || fail "$1: no load-generator summaries"
  compgen -G "${LAB_ROOT}/$1/configs/*.cfg" >/dev/null || fail "$1: no rendered configs"
  grep -q '^global' "$(compgen -G "${LAB_ROOT}/$1/configs/*.cfg" | head -n 1)" || fail "$1: config is not HAProxy's"
}

# scenario_judged CHECK SCENARIO ARGS...: scripts/scenario.sh SCENARIO ARGS
# on the lab at its start state; then the run's files, its summary judged by
# tests/e2e/checks/CHECK.test.mjs, the runner's exit status 0 and the lab put
# back. The run folder is then newest_run SCENARIO.
scenario_judged() {
  local check="$1" before run rc=0
  shift
  e2e_up
  before=$(newest_run "$1")
  scripts/scenario.sh "$@" || rc=$?
  run=$(newest_run "$1")
  [[ "${run}" != "${before}" ]] || fail "scripts/scenario.sh $* made no run folder (exit ${rc})"
  assert_run_files "${run}"
  cat "${LAB_ROOT}/${run}/summary.csv"
  e2e_check "${check}" E2E_RUN="${run}"
  assert_eq 0 "${rc}" "exit status of scripts/scenario.sh $*"
  assert_lab_restored
}

# The lab is back where it was: baseline config, no load generator running,
# 1 + 1 backends.
assert_lab_restored() {
  assert_eq baseline "$(haproxy_info description)" "HAProxy config after the scenario"
  read_load_tools
  assert_eq "" "$(compose "${E2E_LOAD_PROFILES[@]}" ps -q "${E2E_LOAD_SERVICES[@]}")" "load generators left (${E2E_LOAD_SERVICES[*]})"
  assert_eq "backend-fast=1,backend-slow=1" "$(backend_scale)" "backend scale after the scenario"
}
