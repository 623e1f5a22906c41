# shellcheck shell=bash
# End to end, the long-lived scenarios of scripts/scenario.sh, --quick: every
# verdict passes (scenario.sh exits 0), e.g. the client-timeout trap fails
# 35-65% of requests and its fix none, the backend-timeout plateau is within
# 15% of rate × timeout, a tipping point is found. Their summaries are judged
# by tests/e2e/checks/*.test.mjs. Helpers and setup: tests/e2e.sh.

test_e2e_09a_tipping_point_quick() {
  scenario_judged tipping-point tipping-point --quick
  grep -q '<title>tipping-point: offered requests/sec vs p99 latency ms' "${LAB_ROOT}/$(newest_run tipping-point)/chart.svg" \
    || fail "no latency-vs-rate chart"
}

# mean − floor = sleep/2 ±10%, connections = rate × mean ±15% on both sides
# (the scenario's own verdicts).
test_e2e_09a_long_lived_quick() {
  scenario_judged verdicts long-lived --quick
}

test_e2e_09a_client_timeout_quick() {
  scenario_judged client-timeout client-timeout --quick
}

test_e2e_09a_backend_timeout_quick() {
  scenario_judged backend-timeout backend-timeout --quick
  assert_eq 0 "$(compose exec -T backend-slow printenv SERVER_TIMEOUT_MS)" "backend server timeout after the scenario"
}
