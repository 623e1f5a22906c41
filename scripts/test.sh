#!/usr/bin/env bash
# Usage: scripts/test.sh [GROUP [PATTERN]]...
#
# The lab's test suite; needs only bash and Docker with Compose v2.
# With no GROUP, the default tier: static unit e2e (about 25 min on 2 cores).
#   static  compose config for every profile, haproxy -c, promtool, shellcheck,
#           dashboard JSON, the compose rules (pinned images, 127.0.0.1 ports...)
#   unit    backend tests (node:test) and load-generator checks, in containers
#   e2e     the stack for real: scaling, reloads, load through HAProxy, each
#           kind of scenario's --quick run, Ctrl-C, the dashboards, a lesson
#   lessons every lesson as a student does it (start fails, solution passes)
#   slow    the full maxconn-sweep and the --quick runs whose proof the e2e
#           tier makes another way (docs/testing.md says which and why)
#   all     static unit e2e lessons slow: everything but swarm
#   swarm   the lab on a Swarm of 3 nodes made on this machine (scripts/swarm.sh
#           practice up, deploy); on demand only
#   floor   every Compose call form the lab uses, on the newest Compose and on
#           the floor's (FLOOR_DOCKER_CONFIG, as .ci/run installs it), compared;
#           on demand only
# PATTERN, after a GROUP, runs only that group's tests whose name without
# "test_" (e2e_08_maxconn_sweep_reproduces_the_article) or whose file's name
# (e2e-closed, from tests/e2e-closed.sh) matches it, an extended regex; the
# group's setup and teardown still run. A PATTERN that matches no test stops
# the run before anything starts. Every e2e test starts from any state of the
# lab, a stopped one included, so any of them runs alone:
#   scripts/test.sh e2e 'stack|reload'   the tests of e2e-stack.sh and e2e-reloads.sh
#   scripts/test.sh e2e '^e2e_08_'       one test
# Images come from .env, or from the offline stand-ins with
#   COMPOSE_ENV_FILES=.env,offline.env scripts/test.sh
# --list [GROUP]... prints each test as "GROUP NAME FILE:LINE" and runs nothing
# (all groups, swarm included, when none is named).
# TEST_VERBOSE=1 also shows the output of the tests that pass (measurements).
# TEST_TIMES=FILE appends "group NAME SECONDS" and "test NAME SECONDS" lines,
# this machine's speed reference before and after the tests ("speed before
# US", "speed after US": the RSA-2048 sign time of openssl speed in HAProxy's
# image, which varies 2x between days here), and last "result PASSED FAILED
# SECONDS ARGS...": what a kept run's table in docs/testing.md reads.
# Ends with the ten slowest tests, then the line "N passed, N failed"; exits
# non-zero if any test failed, after a line with the command that reruns just
# the failed ones.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="test"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=tests/assert.sh
source "${LAB_ROOT}/tests/assert.sh"

readonly GROUPS_DEFAULT=(static unit e2e)
readonly GROUPS_ALL=(static unit e2e lessons slow)
readonly GROUPS_ON_DEMAND=(swarm floor)
# A group whose tests live in another group's files and share its setup,
# helpers and teardown: lessons and slow are e2e tests outside the default tier.
declare -A GROUP_BASE=([lessons]=e2e [slow]=e2e)
passed=0
failed=0
failed_names=()
log_dir=""
times=() # "SECONDS NAME" of every test run
declare -A sourced=()
# Per group: the PATTERN it was given, the tests it runs, and whether its
# setup failed (then a rerun is the whole selection again).
declare -A patterns=() selected=() setup_failed=()

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# shellcheck disable=SC2329 # run by main's EXIT trap (shellcheck misses it before "; exit")
cleanup() {
  local rc=$?
  local group
  # A group cut short (Ctrl-C, a failed setup) is torn down here; each
  # GROUP_teardown does nothing when its group did not start or already ended.
  for group in "${!patterns[@]}"; do
    if declare -F "$(base_of "${group}")_teardown" >/dev/null; then "$(base_of "${group}")_teardown"; fi
  done
  [[ -n "${log_dir}" ]] && rm -rf "${log_dir}"
  exit "${rc}"
}

# run_test FUNCTION: run one test in a subshell (errexit on), keep its output
# for the report if it fails.
run_test() {
  local name="${1#test_}" out="${log_dir}/$1.log" rc start=${SECONDS}
  printf '  %-58s ' "${name}"
  set +e
  ( set -euo pipefail; "$1" ) >"${out}" 2>&1
  rc=$?
  set -e
  times+=("$((SECONDS - start)) ${name}")
  [[ -z "${TEST_TIMES:-}" ]] || echo "test ${name} $((SECONDS - start))" >>"${TEST_TIMES}"
  if [[ ${rc} -eq 0 ]]; then
    passed=$((passed + 1))
    printf 'ok (%ds)\n' $((SECONDS - start))
    if [[ -n "${TEST_VERBOSE:-}" ]]; then sed 's/^/      | /' "${out}"; fi
  else
    failed=$((failed + 1))
    failed_names+=("${name}")
    printf 'FAIL (%ds)\n' $((SECONDS - start))
    sed 's/^/      | /' "${out}" | tail -n 40
  fi
}

# base_of GROUP: the group whose files, setup and teardown GROUP uses.
base_of() { echo "${GROUP_BASE[$1]:-$1}"; }

# load_group GROUP: source tests/BASE.sh and any tests/BASE-*.sh beside it
# (BASE: base_of GROUP), each file once.
load_group() {
  local file base
  base=$(base_of "$1")
  for file in "${LAB_ROOT}/tests/${base}.sh" "${LAB_ROOT}/tests/${base}"-*.sh; do
    [[ -f "${file}" && -z "${sourced[${file}]:-}" ]] || continue
    sourced[${file}]=1
    # shellcheck source=/dev/null
    source "${file}"
  done
  return 0 # a group with no tests/GROUP-*.sh (swarm) is whole too
}

# select_tests GROUP PATTERN: the group's test functions, in name order (the
# order they run in), whose name without "test_" or whose file's name
# matches PATTERN (all of them for an empty PATTERN).
select_tests() {
  local fn file
  shopt -s extdebug # declare -F NAME then also prints its line and file
  for fn in $(declare -F | awk -v p="test_$1_" 'index($3, p) == 1 { print $3 }'); do
    read -r _ _ file < <(declare -F "${fn}")
    file="${file##*/}"
    if [[ -z "$2" || "${fn#test_}" =~ $2 || "${file%.sh}" =~ $2 ]]; then echo "${fn}"; fi
  done
  shopt -u extdebug
}

run_group() {
  local group="$1" fn start=${SECONDS} base
  base=$(base_of "$1")
  if [[ -n "${patterns[${group}]}" ]]; then
    log "group ${group}, the tests matching ${patterns[${group}]}"
  else
    log "group ${group}"
  fi
  if declare -F "${base}_setup" >/dev/null && ! "${base}_setup"; then
    failed=$((failed + 1))
    setup_failed[${group}]=1
    echo "  ${group}_setup FAILED: skipping the ${group} tests" >&2
    return 0
  fi
  for fn in ${selected[${group}]}; do
    run_test "${fn}"
  done
  if declare -F "${base}_teardown" >/dev/null; then "${base}_teardown"; fi
  log "group ${group} took $(minutes $((SECONDS - start)))"
  [[ -z "${TEST_TIMES:-}" ]] || echo "group ${group} $((SECONDS - start))" >>"${TEST_TIMES}"
}

# minutes SECONDS: "4m05s".
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# slowest_tests: the ten slowest tests of this run, slowest first.
slowest_tests() {
  [[ ${#times[@]} -gt 0 ]] || return 0
  echo "the slowest tests:"
  printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | while read -r seconds name; do
    printf '  %7s  %s\n' "$(minutes "${seconds}")" "${name}"
  done
}

# quote WORD: WORD in single quotes, as a shell reads it back.
quote() {
  local q="'\\''"
  printf "'%s'" "${1//\'/${q}}"
}

# rerun_command GROUP...: the command that runs again what failed in the
# given groups: a failed test by its exact name, a group whose setup failed
# as it was asked for.
rerun_command() {
  local command="scripts/test.sh" group name names
  for group in "$@"; do
    if [[ -n "${setup_failed[${group}]:-}" ]]; then
      command+=" ${group}"
      [[ -z "${patterns[${group}]}" ]] || command+=" $(quote "${patterns[${group}]}")"
      continue
    fi
    names=""
    for name in "${failed_names[@]}"; do
      [[ "${name}" == "${group}_"* ]] && names+="${names:+|}${name}"
    done
    [[ -z "${names}" ]] || command+=" ${group} '^(${names})\$'"
  done
  echo "${command}"
}

# list_tests GROUP...: "GROUP NAME FILE:LINE" of each test of the GROUPs.
list_tests() {
  local g fn line file
  for g in "$@"; do load_group "${g}"; done
  shopt -s extdebug
  for g in "$@"; do
    for fn in $(select_tests "${g}" ""); do
      read -r _ line file < <(declare -F "${fn}")
      echo "${g} ${fn#test_} ${file#"${LAB_ROOT}/"}:${line}"
    done
  done
  shopt -u extdebug
}

# record_speed before|after: with TEST_TIMES, "speed WHEN US" (sign_times,
# RSA-2048 sign in microseconds), beside which a run's times are read.
record_speed() {
  local times
  [[ -n "${TEST_TIMES:-}" ]] || return 0
  times=$(sign_times docker run --rm --network none "$(env_value HAPROXY_IMAGE)") || times=""
  echo "speed $1 $(sed -n 's/^rsa2048_sign_us=//p' <<<"${times}")" >>"${TEST_TIMES}"
}

main() {
  local groups=() g a pattern rc after_all=0
  if [[ "${1:-}" == --list ]]; then
    shift
    [[ $# -gt 0 ]] || set -- "${GROUPS_ALL[@]}" "${GROUPS_ON_DEMAND[@]}"
    for g in "$@"; do
      [[ " ${GROUPS_ALL[*]} ${GROUPS_ON_DEMAND[*]} " == *" ${g} "* ]] \
        || die "unknown test group '${g}' after --list: use any of ${GROUPS_ALL[*]} ${GROUPS_ON_DEMAND[*]}"
    done
    list_tests "$@"
    exit 0
  fi
  for g in "$@"; do
    case "${g}" in
      -h|--help) usage; exit 0 ;;
      all)
        for a in "${GROUPS_ALL[@]}"; do [[ -v "patterns[${a}]" ]] || groups+=("${a}"); patterns[${a}]=""; done
        after_all=1
        ;;
      static|unit|e2e|lessons|slow|swarm|floor)
        [[ -v "patterns[${g}]" ]] || groups+=("${g}") # named twice: run once
        patterns[${g}]="" after_all=0
        ;;
      *)
        [[ ${#groups[@]} -gt 0 ]] \
          || die "unknown test group '${g}': use any of ${GROUPS_ALL[*]} ${GROUPS_ON_DEMAND[*]} all, each optionally followed by a PATTERN (or none for all)"
        [[ ${after_all} -eq 0 ]] \
          || die "a PATTERN follows a group, not all: name the group (scripts/test.sh e2e '${g}')"
        [[ -z "${patterns[${groups[-1]}]}" ]] \
          || die "one PATTERN per group: '${patterns[${groups[-1]}]}' then '${g}' after ${groups[-1]} (join them with |)"
        patterns[${groups[-1]}]="${g}"
        ;;
    esac
  done
  [[ ${#groups[@]} -gt 0 ]] || groups=("${GROUPS_DEFAULT[@]}")
  for g in "${groups[@]}"; do patterns[${g}]="${patterns[${g}]:-}"; done
  # Every group's tests are known before anything runs: a PATTERN that
  # selects nothing costs no setup.
  for g in "${groups[@]}"; do
    load_group "${g}"
    pattern="${patterns[${g}]}" rc=0
    # shellcheck disable=SC2319 # the status of [[ =~ ]] is the point: 2 for a bad regex
    [[ "" =~ ${pattern} ]] || rc=$?
    [[ ${rc} -ne 2 ]] || die "'${pattern}' is not an extended regular expression"
    selected[${g}]=$(select_tests "${g}" "${pattern}" | xargs)
    [[ -n "${selected[${g}]}" ]] \
      || die "no ${g} test matches '${pattern}' (a test's name without test_, or its file's name, such as ${g}_... or ${g}-...)"
  done
  require_docker
  fit_nofile
  log_dir=$(mktemp -d)
  trap cleanup EXIT
  log "images from ${COMPOSE_ENV_FILES:-.env}: $(env_value HAPROXY_IMAGE), $(env_value NODE_IMAGE), $(env_value K6_IMAGE), $(env_value PROMETHEUS_IMAGE)"
  record_speed before
  for g in "${groups[@]}"; do run_group "${g}"; done
  record_speed after
  slowest_tests
  if [[ ${failed} -gt 0 ]]; then
    echo "rerun the failures: $(rerun_command "${groups[@]}")"
  fi
  [[ -z "${TEST_TIMES:-}" ]] || echo "result ${passed} ${failed} ${SECONDS} $*" >>"${TEST_TIMES}"
  echo "${passed} passed, ${failed} failed"
  [[ ${failed} -eq 0 ]]
}

# "exit" on the same line: bash reads a script as it runs, so an edit of this
# file during a run (a long e2e one) cannot make it run what follows.
main "$@"; exit
