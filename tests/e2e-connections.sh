# shellcheck shell=bash
# End to end, the held-connection scenarios of scripts/scenario.sh:
# connections with two holder replicas, a target refused before anything
# starts, the OOM kill and its fix. Their summaries are judged by
# tests/e2e/checks/*.test.mjs. Helpers and setup: tests/e2e.sh.

# Held connections, quick: 2 holder replicas (2 client IPs) merged into one
# report, every level held with no failure, bytes per connection measured.
test_e2e_09b_connections_quick_two_holder_replicas() {
  local run
  scenario_judged connections connections --quick --replicas 2
  run=$(newest_run connections)
  # What the preflight read off the machine, kept with the run.
  [[ -s "${LAB_ROOT}/${run}/limits.env" ]] || fail "no limits.env"
  compgen -G "${LAB_ROOT}/${run}/steps/03-*/holder-2.json" >/dev/null || fail "no second holder replica"
  grep -q 'memory per connection' "${LAB_ROOT}/${run}/report.md" || fail "no memory reading"
}

# A target the machine cannot hold is refused before anything starts.
test_e2e_09c_connections_refuses_what_cannot_fit() {
  local before
  e2e_up
  before=$(find "${LAB_ROOT}/results" -mindepth 1 | wc -l)
  assert_fails_with '^scenario: 100000000 concurrent connections do not fit here: .* allows at most [0-9]+ \(.*\); try --target [0-9]+ or --target max$' \
    scripts/scenario.sh connections --target 100000000
  assert_eq "${before}" "$(find "${LAB_ROOT}/results" -mindepth 1 | wc -l)" "files under results/ after a refusal"
  assert_eq baseline "$(haproxy_info description)" "HAProxy config after a refusal"
}

# HAProxy under a too small memory limit: OOM-killed, connections cut; then
# the fix holds them all, and HAProxy is back on its own limit afterwards.
test_e2e_09d_oom_kill_and_fix() {
  scenario_judged oom oom --quick
  assert_eq 2147483648 "$(docker inspect -f '{{.HostConfig.Memory}}' "$(compose ps -q haproxy)")" "HAProxy memory limit after the scenario"
}
