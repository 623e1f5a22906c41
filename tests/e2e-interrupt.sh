# shellcheck shell=bash
# End to end, Ctrl-C in the middle of a scenario: the runner puts the lab back
# (baseline config, no load generator, the backends' scale), keeps the
# partial results marked INCOMPLETE and exits 130. Helpers and setup:
# tests/e2e.sh.

# ctrl_c SECONDS READY... -- COMMAND...: start COMMAND, its output into the
# file ctrl_c_output (shown afterwards), wait (at most SECONDS) until the
# command READY succeeds, 4 s more, then send COMMAND SIGINT as a terminal's
# Ctrl-C would; returns COMMAND's exit status (255 when READY never came,
# COMMAND interrupted all the same).
ctrl_c() {
  local timeout="$1" ready=() pid rc=0
  shift
  while [[ "$1" != -- ]]; do ready+=("$1"); shift; done
  shift
  ctrl_c_output=$(mktemp)
  # A background job of a script ignores SIGINT, unless job control gives it
  # its own process group (set -m), as a terminal's foreground job has.
  set -m
  "${AS_FROM_A_TERMINAL[@]}" "$@" >"${ctrl_c_output}" 2>&1 &
  pid=$!
  if wait_for "${timeout}" "${ready[*]}" "${ready[@]}"; then
    echo "ctrl_c: ${ready[*]} at $(date +%H:%M:%S)" >&2
    sleep 4
  else
    echo "${ready[*]}: not within ${timeout} s; interrupting all the same" >&2
    rc=255
  fi
  echo "ctrl_c: SIGINT at $(date +%H:%M:%S)" >&2
  kill -INT "${pid}"
  if [[ ${rc} -eq 0 ]]; then wait "${pid}" || rc=$?; else wait "${pid}" || true; fi
  set +m
  cat "${ctrl_c_output}"
  return "${rc}"
}

# step_started N: the runner under ctrl_c said step N started ("step N/...",
# as a user sees it).
step_started() { grep -q "] step $1/" "${ctrl_c_output}"; }

# holders_running: the connection holder replicas run.
holders_running() { [[ -n "$(compose --profile hold ps -q --status running holder)" ]]; }

# step_2_holding: step 2 started and its holders hold (step 1's are gone: the
# runner removes a step's replicas before the next step starts).
step_2_holding() { step_started 2 && holders_running; }

# Ctrl-C in the middle of a step: baseline config back, no load generator,
# partial results kept and marked incomplete, exit 130.
test_e2e_10_interrupt_restores_the_lab_and_keeps_partial_results() {
  local rc=0 run before
  e2e_up
  before=$(newest_run maxconn-sweep)
  ctrl_c 120 step_started 2 -- scripts/scenario.sh maxconn-sweep --quick || rc=$?
  assert_eq 130 "${rc}" "exit code after Ctrl-C"
  run=$(newest_run maxconn-sweep)
  [[ "${run}" != "${before}" ]] || fail "no new maxconn-sweep run folder"
  e2e_check interrupted E2E_RUN="${run}"
  assert_lab_restored
}

# Ctrl-C while the connection holders hold (step 2 of 3): no container of
# any load tool is left, running or stopped (a holder would hold connections
# through HAProxy and the next run's replicas); HAProxy is back on the
# baseline, the backends (scaled up for the holders) back to 1 + 1, and the
# partial results are kept.
test_e2e_10a_interrupting_connections_removes_the_holders() {
  local rc=0 run before tools description scale
  e2e_up
  before=$(newest_run connections)
  ctrl_c 180 step_2_holding -- scripts/scenario.sh connections --quick --replicas 2 || rc=$?
  # What the runner left, read before any assertion stops the test (the
  # next test's e2e_up cleans up after a runner that did not).
  tools=$(compose "${E2E_LOAD_PROFILES[@]}" ps -a --format '{{.Name}} {{.State}}' "${E2E_LOAD_SERVICES[@]}")
  description=$(haproxy_info description)
  scale=$(backend_scale)
  run=$(newest_run connections)
  assert_eq 130 "${rc}" "exit code after Ctrl-C while the holders run"
  [[ "${run}" != "${before}" ]] || fail "no new connections run folder"
  assert_eq "" "${tools}" "load tool containers left by the interrupted run (${E2E_LOAD_SERVICES[*]})"
  assert_eq baseline "${description}" "HAProxy config after the interrupted run"
  assert_eq "backend-fast=1,backend-slow=1" "${scale}" "backend scale after the interrupted run"
  e2e_check interrupted E2E_RUN="${run}"
}

# scenario_done: no scenario holds this lab's run lock (scripts/lib/common.sh
# take_run_lock): the runner has put the lab back and ended.
scenario_done() { [[ ! -L "${LAB_ROOT}/results/.running-${COMPOSE_PROJECT_NAME}" ]]; }

# A closed terminal in the middle of a step (script(1) gives the run a
# terminal of its own; killing script hangs it up, as a closed SSH session
# does): the lab put back as after Ctrl-C, the partial results kept and
# marked, and what the cleanup said in the run folder's cleanup.log.
test_e2e_10b_a_closed_terminal_restores_the_lab_and_keeps_partial_results() {
  local before run term pid
  command -v script >/dev/null || fail "script(1) (util-linux) is needed to give the run a terminal"
  e2e_up
  before=$(newest_run maxconn-sweep)
  term=$(mktemp)
  script -qfec "${AS_FROM_A_TERMINAL[*]} scripts/scenario.sh maxconn-sweep --quick" "${term}" </dev/null >/dev/null 2>&1 &
  pid=$!
  if ! wait_for 120 "step 2 to start" grep -q "] step 2/" "${term}"; then
    kill "${pid}" 2>/dev/null || true
    fail "step 2 did not start within 120 s: $(tail -n 5 "${term}")"
  fi
  sleep 4
  # The terminal's other end gone: the kernel hangs it up (SIGHUP).
  kill -KILL "${pid}"
  wait "${pid}" 2>/dev/null || true
  wait_for 120 "the run to put the lab back and end" scenario_done || fail "the run still holds the lab 120 s after its terminal closed"
  run=$(newest_run maxconn-sweep)
  [[ "${run}" != "${before}" ]] || fail "no new maxconn-sweep run folder"
  assert_eq "interrupted: the terminal closed (SIGHUP)" "$(cat "${LAB_ROOT}/${run}/INCOMPLETE" 2>/dev/null)" "INCOMPLETE of the run whose terminal closed"
  grep -q "partial results kept in ${run} (marked INCOMPLETE)" "${LAB_ROOT}/${run}/cleanup.log" 2>/dev/null \
    || fail "the run folder's cleanup.log should say 'partial results kept in ${run} (marked INCOMPLETE)', found: $(cat "${LAB_ROOT}/${run}/cleanup.log" 2>&1)"
  assert_lab_restored
}

# Ctrl-C, then Ctrl-C again while the cleanup puts the lab back (each sent to
# the run's whole process group, as a terminal sends it): the cleanup still
# runs to its end: the lab put back, the partial results kept, exit 130.
test_e2e_10c_a_second_ctrl_c_does_not_stop_the_cleanup() {
  local before run pid rc=0 output
  e2e_up
  before=$(newest_run maxconn-sweep)
  output=$(mktemp)
  set -m
  "${AS_FROM_A_TERMINAL[@]}" scripts/scenario.sh maxconn-sweep --quick >"${output}" 2>&1 &
  pid=$!
  set +m
  if wait_for 120 "step 2 to start" grep -q "] step 2/" "${output}"; then sleep 4; fi
  kill -INT -- "-${pid}"
  wait_for 30 "the cleanup to start" grep -q "stopping: load generators" "${output}" || true
  sleep 0.5
  kill -INT -- "-${pid}" 2>/dev/null || true
  wait "${pid}" || rc=$?
  cat "${output}"
  assert_eq 130 "${rc}" "exit code after two Ctrl-C"
  run=$(newest_run maxconn-sweep)
  [[ "${run}" != "${before}" ]] || fail "no new maxconn-sweep run folder"
  assert_eq "interrupted by the user (Ctrl-C or SIGTERM)" "$(cat "${LAB_ROOT}/${run}/INCOMPLETE" 2>/dev/null)" "INCOMPLETE after two Ctrl-C"
  grep -q "partial results kept in ${run}" "${output}" || fail "the cleanup did not reach its end (no 'partial results kept' line)"
  assert_lab_restored
}
