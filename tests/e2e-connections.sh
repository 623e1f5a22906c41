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
  grep -q "^## Where a connection's CPU goes" "${LAB_ROOT}/${run}/report.md" || fail "no breakdown of a connection's CPU"
  # The floors' containers gone with the run.
  [[ -z "$(docker ps -aq --filter label=haproxy-lab.floor)" ]] || fail "floor containers left running"
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
  # --processes N short of a target is refused too when another limit binds.
  assert_fails_with '^scenario: 100000000 concurrent connections do not fit here: ' \
    scripts/scenario.sh connections --target 100000000 --processes 1
}

# HAProxy under a too small memory limit: OOM-killed, connections cut; then
# the fix holds them all, and HAProxy is back on its own limit afterwards.
test_slow_09d_oom_kill_and_fix() {
  scenario_judged oom oom --quick
  assert_eq 2147483648 "$(docker inspect -f '{{.HostConfig.Memory}}' "$(compose ps -q haproxy)")" "HAProxy memory limit after the scenario"
}

# HAProxy as two processes (the article's nbproc): both take connections, the
# sums over them equal what the clients held, each step's config reached both
# (a restart: the sized maxconn changes the listeners), and afterwards the lab
# runs one process again.
test_e2e_09e_connections_quick_two_processes() {
  local run step
  scenario_judged connections-processes connections --quick --processes 2
  run=$(newest_run connections)
  grep -q '^instance haproxy-p2 .*process=2 container=haproxy' "${LAB_ROOT}/${run}/topology.txt" || fail "the run's topology has no process 2"
  for step in "${LAB_ROOT}/${run}"/steps/*/; do
    for info in haproxy-info.txt haproxy-p2-info.txt; do
      grep -q "^description: connections/$(sed -n 's/^id=//p' "${step}step.env")$" "${step}${info}" \
        || fail "${step#"${LAB_ROOT}/"}${info}: not the step's config ($(sed -n 's/^description: //p' "${step}${info}"))"
    done
  done
  assert_eq haproxy "$(haproxy_instances | paste -sd' ' -)" "HAProxy instances after the run (one process again)"
}

# The wall nbproc moved (the lesson): one process whose open files (10200:
# the baseline's maxconn 5000 needs about 10060) allow 5050 connections,
# asked for 5300. The preflight says so and runs it; the level past the wall
# stops at maxconn, the rest wait in the accept queue
# (tests/e2e/checks/connections-wall.test.mjs). Afterwards HAProxy is back
# on the suite's open files.
test_slow_09h_connections_quick_past_the_wall_of_one_process() {
  local run
  HAPROXY_NOFILE=10200 scenario_judged connections-wall connections --quick --processes 1 --target 5300
  run=$(newest_run connections)
  grep -q '^Past the wall: 1 HAProxy process (--processes) plan for 5000;' "${LAB_ROOT}/${run}/report.md" || fail "report.md does not say the run went past the wall"
  e2e_up
  assert_eq "${HAPROXY_NOFILE:-$(env_value HAPROXY_NOFILE)}" "$(instance_exec haproxy sh -c 'ulimit -n')" "HAProxy's open files after the lesson"
}

# A hitless reload (USR2 to the container, as docs/how-it-works.md says) reaches every
# process; the runner's own reload of one process (its master CLI's
# "reload", as lab-state.sh reload_instance) reaches that one alone.
test_e2e_09f_reload_reaches_every_process() {
  local before after
  e2e_up
  HAPROXY_PROCESSES=3 quiet_compose up -d --wait --wait-timeout 60 --no-deps haproxy
  before=$(for i in $(HAPROXY_PROCESSES=3 haproxy_instances); do HAPROXY_PROCESSES=3 haproxy_reloads "${i}" | cut -d' ' -f1; done | paste -sd' ' -)
  compose kill -s USR2 haproxy >/dev/null 2>&1
  sleep 3
  after=$(for i in $(HAPROXY_PROCESSES=3 haproxy_instances); do HAPROXY_PROCESSES=3 haproxy_reloads "${i}" | cut -d' ' -f1; done | paste -sd' ' -)
  HAPROXY_PROCESSES=3 haproxy_master_cli reload haproxy-p2 >/dev/null
  sleep 3
  local single
  single=$(for i in $(HAPROXY_PROCESSES=3 haproxy_instances); do HAPROXY_PROCESSES=3 haproxy_reloads "${i}" | cut -d' ' -f1; done | paste -sd' ' -)
  quiet_compose up -d --wait --wait-timeout 60 --no-deps haproxy
  assert_eq "0 0 0" "${before}" "reloads of the 3 masters after their start"
  assert_eq "1 1 1" "${after}" "reloads after docker compose kill -s USR2 haproxy"
  assert_eq "1 2 1" "${single}" "reloads after the runner reloaded process 2 alone"
}
