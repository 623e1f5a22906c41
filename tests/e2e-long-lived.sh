# shellcheck shell=bash
# End to end, the long-lived scenarios of scripts/scenario.sh, --quick: every
# verdict passes (scenario.sh exits 0), e.g. the client-timeout trap fails
# 35-65% of requests and its fix none, the backend-timeout plateau is within
# 15% of rate × timeout, a tipping point is found. Their summaries are judged
# by tests/e2e/checks/*.test.mjs; ceiling names HAProxy as what saturated.
# Helpers and setup: tests/e2e.sh.

test_slow_09a_tipping_point_quick() {
  scenario_judged tipping-point tipping-point --quick
  grep -q '<title>tipping-point: offered requests/sec vs p99 latency ms' "${LAB_ROOT}/$(newest_run tipping-point)/chart.svg" \
    || fail "no latency-vs-rate chart"
}

# mean − floor = sleep/2 ±10%, connections = rate × mean ±15% on both sides
# (the scenario's own verdicts).
test_slow_09a_long_lived_quick() {
  scenario_judged verdicts long-lived --quick
}

# client-timeout --quick is judged by e2e_11 (tests/e2e-dashboards.sh), in
# the run whose Grafana annotations it checks.

test_slow_09a_backend_timeout_quick() {
  scenario_judged backend-timeout backend-timeout --quick
  assert_eq 0 "$(compose exec -T backend-slow printenv SERVER_TIMEOUT_MS)" "backend server timeout after the scenario"
}

# HAProxy's own ceiling: its CPU bounded to 0.2 core, vegeta stepping the rate
# past it, plain keep-alive and full TLS handshakes: HAProxy (not vegeta, not
# the machine) is what saturated at each curve's top, nothing at its first
# step, the allowance read back and gone afterwards. Its prediction verdict
# (±25% of allowance ÷ cost) is the benchmark's, not this test's: a --quick
# curve of three steps predicts from a step far below the ceiling, so the
# scenario may exit 3 here (docs/results.md: HAProxy's own ceiling).
test_slow_09a_ceiling_quick() {
  local before run rc=0
  e2e_up
  before=$(newest_run ceiling)
  scripts/scenario.sh ceiling --quick || rc=$?
  run=$(newest_run ceiling)
  [[ "${run}" != "${before}" ]] || fail "scripts/scenario.sh ceiling --quick made no run folder (exit ${rc})"
  [[ ${rc} -eq 0 || ${rc} -eq 3 ]] || fail "exit status of scripts/scenario.sh ceiling --quick: expected 0 or 3 (a verdict), found ${rc}"
  assert_run_files "${run}"
  e2e_check ceiling E2E_RUN="${run}"
  assert_lab_restored
  assert_eq 0 "$(docker inspect -f '{{.HostConfig.NanoCpus}}' "$(compose ps -q haproxy)")" "HAProxy's CPU allowance (NanoCpus) after the scenario"
}
