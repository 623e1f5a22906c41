#!/usr/bin/env bash
# Usage: scripts/test.sh [GROUP...]
#
# The lab's whole test suite; needs only bash and Docker with Compose v2.
# GROUP is any of: static unit e2e (default: all three, in that order).
#   static  compose config for every profile, haproxy -c, promtool, shellcheck,
#           dashboard JSON, the compose rules (pinned images, 127.0.0.1 ports...)
#   unit    backend tests (node:test) and load-generator checks, in containers
#   e2e     the stack for real: scaling, load through HAProxy, Prometheus counts
# Images come from .env, or from the offline stand-ins with
#   COMPOSE_ENV_FILES=.env,offline.env scripts/test.sh
# TEST_VERBOSE=1 also shows the output of the tests that pass (measurements).
# Ends with the line "N passed, N failed"; exits non-zero if any test failed.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="test"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=tests/assert.sh
source "${LAB_ROOT}/tests/assert.sh"

readonly GROUPS_ALL=(static unit e2e)
passed=0
failed=0
failed_names=()
log_dir=""

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

cleanup() {
  local rc=$?
  declare -F e2e_teardown >/dev/null && e2e_teardown
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

run_group() {
  local group="$1" fn file
  # A group's tests: tests/GROUP.sh and any tests/GROUP-*.sh beside it.
  for file in "${LAB_ROOT}/tests/${group}.sh" "${LAB_ROOT}/tests/${group}"-*.sh; do
    # shellcheck source=/dev/null
    [[ -f "${file}" ]] && source "${file}"
  done
  log "group ${group}"
  if declare -F "${group}_setup" >/dev/null && ! "${group}_setup"; then
    failed=$((failed + 1))
    failed_names+=("${group}_setup")
    echo "  ${group}_setup FAILED: skipping the ${group} tests" >&2
    return
  fi
  for fn in $(declare -F | awk -v p="test_${group}_" 'index($3, p) == 1 { print $3 }'); do
    run_test "${fn}"
  done
  if declare -F "${group}_teardown" >/dev/null; then "${group}_teardown"; fi
}

main() {
  local groups=() g
  for g in "$@"; do
    case "${g}" in
      -h|--help) usage; exit 0 ;;
      static|unit|e2e) groups+=("${g}") ;;
      *) die "unknown test group '${g}': use any of ${GROUPS_ALL[*]} (or none for all)" ;;
    esac
  done
  [[ ${#groups[@]} -gt 0 ]] || groups=("${GROUPS_ALL[@]}")
  require_docker
  log_dir=$(mktemp -d)
  trap cleanup EXIT
  log "images from ${COMPOSE_ENV_FILES:-.env}: $(env_value HAPROXY_IMAGE), $(env_value NODE_IMAGE), $(env_value K6_IMAGE), $(env_value PROMETHEUS_IMAGE)"
  for g in "${groups[@]}"; do run_group "${g}"; done
  if [[ ${failed} -gt 0 ]]; then
    echo "failed: ${failed_names[*]}"
  fi
  echo "${passed} passed, ${failed} failed"
  [[ ${failed} -eq 0 ]]
}

main "$@"
