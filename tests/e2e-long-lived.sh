# shellcheck shell=bash
# End to end, the long-lived scenarios of scripts/scenario.sh, --quick: every
# verdict passes (scenario.sh exits 0: the scenarios' own expectations, e.g.
# backend-timeout's plateau at rate × timeout), a tipping point is found.
# Their summaries are judged by tests/e2e/checks/*.test.mjs, which assert
# only what no verdict does; ceiling names what saturated. Helpers and
# setup: tests/e2e.sh.

test_slow_09a_tipping_point_quick() {
  scenario_judged tipping-point tipping-point --quick
  local chart
  chart="${LAB_ROOT}/$(newest_run tipping-point)/chart.svg"
  grep -q '<title>tipping-point: offered requests/sec vs p50 and p99 latency' "${chart}" || fail "no latency-vs-rate chart"
  grep -q '>p50 and p99 latency against the rate achieved<' "${chart}" || fail "no latency-vs-achieved-rate panel"
}

# The scenario's own verdicts: mean − floor against sleep/2, the
# connections against rate × mean on both sides of HAProxy.
test_slow_09a_long_lived_quick() {
  scenario_judged verdicts long-lived --quick
}

# client-timeout --quick is judged by e2e_11 (tests/e2e-dashboards.sh), in
# the run whose Grafana annotations it checks.

test_slow_09a_backend_timeout_quick() {
  scenario_judged verdicts backend-timeout --quick
  assert_eq 0 "$(compose exec -T backend-slow printenv SERVER_TIMEOUT_MS)" "backend server timeout after the scenario"
}

# HAProxy's capacity per core: HAProxy on a core of its own, h2load stepping
# the rate on the others, plain and TLS kept-alive and full RSA handshakes:
# the cpuset read back, the received rate agreeing with HAProxy's count, what
# saturated named at each curve's top (HAProxy or the client side: on 2
# cores the client side often runs out first), the second method and the
# reference measured, the cores given back afterwards. Its prediction verdict
# is the benchmark's, not this test's: the scenario may exit 3 here.
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
  assert_eq "0 " "$(docker inspect -f '{{.HostConfig.NanoCpus}} {{.HostConfig.CpusetCpus}}' "$(compose ps -q haproxy)")" "HAProxy's CPU allowance and cpuset after the scenario"
  assert_eq "" "$(docker inspect -f '{{.HostConfig.CpusetCpus}}' "$(compose ps -q backend-fast)")" "a backend's cpuset after the scenario"
}

# HAProxy's requests/s against its cores: as many core counts as the machine
# fits beside a client as big (here 1, and the line saying why), each
# cpuset read back; no verdict, so exit 0.
test_slow_09a_cores_quick() {
  scenario_judged cores cores --quick
}
