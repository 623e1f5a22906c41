# shellcheck shell=bash
# End to end: the stack for real (everything but Grafana, which no registry
# here has), in its own compose project and ports so a running lab is left alone.

readonly E2E_SERVICES=(haproxy backend-slow backend-fast prometheus container-exporter haproxy-exporter)
E2E_TESTID="e2e-$(date +%s)-$$"
E2E_SUMMARIES="results/.${E2E_TESTID}"
E2E_STARTED_MS=$(($(date +%s%N) / 1000000))
e2e_started=0

e2e_setup() {
  export COMPOSE_PROJECT_NAME=haproxy-lab-test
  export HAPROXY_HTTP_PORT=18080 HAPROXY_STATS_PORT=18404 HAPROXY_METRICS_PORT=18405
  export PROMETHEUS_PORT=19090 GRAFANA_PORT=13000
  e2e_started=1
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
}

e2e_teardown() {
  [[ ${e2e_started} -eq 1 ]] || return 0
  e2e_started=0
  log "e2e: tearing down"
  docker rm -f "${COMPOSE_PROJECT_NAME}-fake-grafana" >/dev/null 2>&1 || true
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  rm -rf "${LAB_ROOT:?}/${E2E_SUMMARIES}"
}

# up ARGS...: the e2e services, waited for healthy.
e2e_up() { compose up -d --wait --wait-timeout 180 "$@" "${E2E_SERVICES[@]}"; }

worker_pid_differs() { # OLD_PID
  local pid
  pid=$(haproxy_info Pid)
  [[ -n "${pid}" && "${pid}" != "$1" ]]
}

prom_at_least() { # PROMQL MIN
  local value
  value=$(prom_query "$1")
  echo "$1 = ${value:-no data} (want >= $2)" >&2
  [[ -n "${value}" ]] && awk -v v="${value}" -v m="$2" 'BEGIN { exit !(v >= m) }'
}

test_e2e_01_stack_up_all_healthy() {
  local start=${SECONDS} states
  e2e_up
  echo "up to all-healthy: $((SECONDS - start)) s"
  states=$(compose ps --format '{{.Service}} {{.Health}}')
  echo "${states}"
  assert_eq "${#E2E_SERVICES[@]}" "$(grep -c " healthy$" <<<"${states}")" "healthy services"
  http_get /fast | grep -q "I'm FAST" || fail "GET /fast through HAProxy"
}

test_e2e_02_scale_backend_slow_to_3_seen_by_haproxy() {
  e2e_up --scale backend-slow=3
  wait_for 30 "3 servers UP in be_slow" servers_up be_slow 3 || { haproxy_servers be_slow; return 1; }
  haproxy_servers be_slow
}

test_e2e_03_requests_reach_all_3_replicas() {
  local replicas i counts
  counts=$(mktemp)
  for i in $(seq 1 30); do
    http_get "/ping?n=${i}" | tr -d '\r' | sed -n 's/^[Xx]-[Rr]eplica: //p'
  done | sort | uniq -c | tee /dev/stderr >"${counts}"
  replicas=$(wc -l <"${counts}")
  assert_eq 3 "${replicas}" "distinct replicas answering"
}

test_e2e_04_hitless_reload_keeps_inflight_request() {
  local before after response inflight
  inflight=$(mktemp)
  before=$(haproxy_info Pid)
  http_get /slow >"${inflight}" &
  local pid=$!
  sleep 1
  compose kill -s USR2 haproxy
  wait "${pid}" || fail "the in-flight request failed during the reload"
  response=$(head -n 1 "${inflight}")
  assert_match ' 200 ' "${response}" "in-flight request across the reload"
  wait_for 10 "a new worker" worker_pid_differs "${before}"
  after=$(haproxy_info Pid)
  echo "worker pid ${before} -> ${after}"
  [[ "${after}" != "${before}" ]] || fail "worker pid unchanged: no reload happened"
}

# fe_main_backlog: the backlog of HAProxy's :8080 listening socket, as the
# kernel has it (ss in HAProxy's network namespace).
fe_main_backlog() {
  compose --profile tools run --rm --no-deps -T netprobe -ltnH | awk '$4 ~ /:8080$/ { print $3 }'
}

# Why the runner restarts HAProxy for a step that changes a listening socket:
# a reload (USR2) hands the old worker's sockets to the new one, which keeps
# their backlog. The new config runs (show info says so), the socket does not.
test_e2e_04d_a_reload_keeps_the_listening_sockets_backlog() {
  local backlog
  assert_eq 5000 "$(fe_main_backlog)" "fe_main backlog before (the baseline's maxconn)"
  # shellcheck disable=SC2016 # expanded by the container's shell
  compose exec -T haproxy sh -c 'sed -e "s/^    description baseline/    description backlog-64/" \
    -e "s/^    bind :8080$/    bind :8080 backlog 64/" /usr/local/etc/haproxy/haproxy.cfg >/var/lib/haproxy/backlog-64.cfg \
    && mv -f /var/lib/haproxy/backlog-64.cfg /var/lib/haproxy/live.cfg'
  compose kill -s USR2 haproxy >/dev/null 2>&1
  wait_for 30 "HAProxy to run the backlog-64 config" description_is backlog-64
  backlog=$(fe_main_backlog)
  compose exec -T haproxy ln -sfn /usr/local/etc/haproxy/haproxy.cfg /var/lib/haproxy/live.cfg
  compose kill -s USR2 haproxy >/dev/null 2>&1
  wait_for 30 "HAProxy back on the baseline" description_is baseline
  echo "after a reload to 'bind :8080 backlog 64': ss shows backlog ${backlog}"
  assert_eq 5000 "${backlog}" "fe_main backlog after a reload asking for 64 (the old socket's)"
}

# k6_counts SUMMARY...: "REQUESTS FAILED" summed over k6 summaries (paths
# relative to the repository).
k6_counts() {
  in_image NODE_IMAGE node -e '
    let requests = 0, failed = 0;
    for (const f of process.argv.slice(1)) {
      const m = JSON.parse(require("fs").readFileSync(f)).metrics;
      requests += m.http_reqs.values.count;
      failed += m.http_req_failed.values.passes;
    }
    console.log(requests, failed);' "$@"
}

# load_during NAME KEEPALIVE SECONDS COMMAND...: 20 k6 clients on /fast for
# SECONDS while COMMAND runs (started 3 s into the load); then prints the
# requests k6 sent and fails on any failed one, with HAProxy's log of them.
load_during() {
  local name="$1" keepalive="$2" seconds="$3" dir="${E2E_SUMMARIES}/$1" since pid counts
  shift 3
  mkdir -p "${LAB_ROOT}/${dir}"
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  TESTID="${E2E_TESTID}-${name}" LOADGEN_SUMMARY_DIR="${dir#results/}" VUS=20 DURATION="${seconds}s" \
    LOAD_PATH=/fast KEEPALIVE="${keepalive}" compose --profile load run --rm --no-deps loadgen >/dev/null 2>&1 &
  pid=$!
  sleep 3
  "$@"
  wait "${pid}" || fail "the load generator exited non-zero"
  counts=$(k6_counts "${dir}/loadgen-1.json")
  echo "${name}: ${counts% *} requests (keep-alive ${keepalive}), ${counts#* } failed"
  assert_ge 1000 "${counts% *}" "requests sent during ${name}"
  if [[ "${counts#* }" != 0 ]]; then
    compose logs --no-log-prefix --since "${since}" haproxy | grep ' fe_main ' | head -n 10
    fail "${name}: ${counts#* } of ${counts% *} requests failed (HAProxy's log of them above)"
  fi
}

# reloads N: N hitless reloads, one a second, as a teacher would type them.
reloads() {
  local i
  for ((i = 0; i < $1; i++)); do
    compose kill -s USR2 haproxy >/dev/null 2>&1
    sleep 1
  done
}

reloads_counted() { # SINCE: reloads the master logged as done since SINCE
  compose logs --no-log-prefix --since "$1" haproxy | grep -c '^\[NOTICE\].*Loading success'
}

# 20 reloads under keep-alive load lose no request: the new worker starts with
# libc's addresses (init-addr libc,none), not empty server slots (503 <NOSRV>).
test_e2e_04a_20_reloads_under_keepalive_load_lose_nothing() {
  local since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  load_during reloads-keepalive true 27 reloads 20
  assert_eq 20 "$(reloads_counted "${since}")" "reloads HAProxy logged"
}

test_e2e_04b_20_reloads_under_connection_per_request_load_lose_nothing() {
  local since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  load_during reloads-close false 27 reloads 20
  assert_eq 20 "$(reloads_counted "${since}")" "reloads HAProxy logged"
}

# be_fast servers UP that answered requests (show stat: stot > 0, status UP).
fast_servers_used() {
  haproxy_cli "show stat" | awk -F, '$1 == "be_fast" && $2 != "BACKEND" && $8 > 0 && $18 ~ /^UP/' | wc -l
}

scale_fast_1_3_1() {
  compose up -d --no-recreate --scale backend-fast=3 backend-fast >/dev/null 2>&1
  wait_for 30 "3 servers UP in be_fast" servers_up be_fast 3
  sleep 5
  echo "be_fast servers that served requests at 3 replicas: $(fast_servers_used)"
  assert_eq 3 "$(fast_servers_used)" "be_fast servers that served requests"
  # Replicas 2 and 3 get SIGTERM: they fail their health check and drain.
  compose up -d --no-recreate --scale backend-fast=1 backend-fast >/dev/null 2>&1
  wait_for 30 "1 server UP in be_fast" servers_up be_fast 1
}

# Scaling under load loses nothing: a new replica serves once resolved and
# answering; a removed one drains (still serving while HAProxy's check marks
# it DOWN), and a refused connection is redispatched to another server.
test_e2e_04c_scale_1_3_1_under_load_loses_nothing() {
  load_during scale-1-3-1 true 40 scale_fast_1_3_1
  servers_up be_fast 1 || { haproxy_servers be_fast; fail "be_fast should end with one server UP"; }
}

# fe_main_requests: HAProxy's own count of requests on fe_main (runtime API).
fe_main_requests() { haproxy_stat_sum fe_main FRONTEND req_tot; }

test_e2e_05_k6_two_replicas_counted_in_prometheus() {
  local total instances before after
  mkdir -p "${LAB_ROOT}/${E2E_SUMMARIES}"
  # From the runtime API, not Prometheus: a reload (test 04) resets the
  # counters and Prometheus may not have scraped the new worker yet.
  before=$(fe_main_requests)
  TESTID="${E2E_TESTID}" LOADGEN_REPLICAS=2 VUS=4 DURATION=8s LOAD_PATH=/fast \
    LOADGEN_SUMMARY_DIR="${E2E_SUMMARIES#results/}" \
    compose --profile load up --no-deps --scale loadgen=2 loadgen
  assert_eq "0 0" "$(compose ps -a loadgen --format '{{.ExitCode}}' | sort | xargs)" "loadgen exit codes"
  total=$(k6_counts "${E2E_SUMMARIES}/loadgen-1.json" "${E2E_SUMMARIES}/loadgen-2.json")
  total="${total% *}"
  echo "k6 summaries: ${total} requests"
  assert_ge 100 "${total}" "requests sent by the two replicas"
  after=$(fe_main_requests)
  echo "HAProxy fe_main requests: ${before} -> ${after}"
  assert_ge "${total}" $((after - before)) "requests HAProxy counted during the load"
  wait_for 30 "k6 remote write" prom_at_least "sum(k6_http_reqs_total{testid=\"${E2E_TESTID}\"})" "${total}"
  instances=$(prom_query "count(count by (instance) (k6_http_reqs_total{testid=\"${E2E_TESTID}\"}))")
  assert_eq 2 "${instances}" "loadgen replicas reporting to Prometheus"
  wait_for 30 "HAProxy's exporter" prom_at_least \
    'sum(haproxy_frontend_http_requests_total{job="haproxy",proxy="fe_main"})' "${after}"
}

# readme_commands SECTION: the bash blocks of README's "## SECTION", one
# script, continuation lines kept.
readme_commands() {
  awk -v section="## $1" '
    $0 == section { inside = 1; next }
    inside && /^## / { exit }
    inside && /^```bash$/ { block = 1; next }
    inside && /^```$/ { block = 0; next }
    inside && block { print }' "${LAB_ROOT}/README.md"
}

# README's Load section, run as a user types it on Linux: without the LAB_UID
# the scripts export (the section's first command exports it). Every file the
# load generators write must belong to the user running the commands.
test_e2e_05a_readme_load_commands_work_as_written() {
  local script moved=() dir rc=0 listing="" others=""
  script=$(readme_commands Load)
  grep -q 'export LAB_UID' <<<"${script}" || fail "README's Load section exports no LAB_UID"
  echo "${script}"
  # The README writes results/demo and results/demo-hold: a user's own are
  # moved aside for the test and put back whatever happens.
  for dir in demo demo-hold; do
    if [[ -e "${LAB_ROOT}/results/${dir}" ]]; then
      mv "${LAB_ROOT}/results/${dir}" "${LAB_ROOT}/results/${dir}.before-e2e-$$"
      moved+=("${dir}")
    fi
  done
  (cd "${LAB_ROOT}" && env -u LAB_UID -u LAB_GID bash -euo pipefail -c "${script}") >/dev/null 2>&1 || rc=$?
  listing=$(cd "${LAB_ROOT}/results" && compgen -G 'demo/loadgen-*.json'; compgen -G 'demo-hold/holder-*.json') || true
  listing=$(LC_ALL=C sort <<<"${listing}" | paste -sd' ' -)
  others=$(find "${LAB_ROOT}/results/demo" "${LAB_ROOT}/results/demo-hold" ! -user "$(id -u)" 2>/dev/null | head -n 3)
  rm -rf "${LAB_ROOT}/results/demo" "${LAB_ROOT}/results/demo-hold"
  for dir in "${moved[@]}"; do mv "${LAB_ROOT}/results/${dir}.before-e2e-$$" "${LAB_ROOT}/results/${dir}"; done
  assert_eq 0 "${rc}" "exit status of README's Load commands"
  assert_eq "demo-hold/holder-1.json demo-hold/holder-2.json demo/loadgen-1.json demo/loadgen-2.json demo/loadgen-3.json" \
    "${listing}" "summaries the README's commands promise"
  assert_eq "" "${others}" "files the load generators wrote that do not belong to uid $(id -u)"
}

# haproxy-exporter reads HAProxy through the stats socket in the volume they
# share (nothing published): the source of the dashboard's maxconn panels.
test_e2e_06_haproxy_exporter_reads_the_stats_socket() {
  wait_for 40 "haproxy-exporter scraped" prom_at_least 'haproxy_up{job="haproxy-exporter"}' 1
  wait_for 20 "frontend requests via haproxy-exporter" prom_at_least \
    'sum(haproxy_frontend_http_requests_total{job="haproxy-exporter",frontend="fe_main"})' 1
}

test_e2e_07_scale_back_to_1_haproxy_drops_the_others() {
  e2e_up --scale backend-slow=1
  wait_for 30 "1 server UP in be_slow" servers_up be_slow 1 || { haproxy_servers be_slow; return 1; }
  haproxy_servers be_slow | grep -c MAINT | xargs test 9 -eq || fail "9 free slots in MAINT expected"
}

# --- scripts/scenario.sh on the real stack -----------------------------------

# newest_run SCENARIO: the newest results folder of SCENARIO (relative path).
newest_run() {
  local dir last=""
  # Globs sort by name, and run folders are named by UTC time.
  for dir in "${LAB_ROOT}/results/$1"/*/; do [[ -d "${dir}" ]] && last="${dir%/}"; done
  echo "${last#"${LAB_ROOT}/"}"
}

# summary_field RUN JS_EXPR: evaluate JS_EXPR on RUN/summary.json (as "s").
summary_field() {
  in_image NODE_IMAGE node -e "const s = JSON.parse(require('fs').readFileSync('$1/summary.json')); console.log($2)"
}

assert_run_files() { # RUN
  local f
  for f in plan.json summary.csv summary.json report.md chart.svg; do
    [[ -s "${LAB_ROOT}/$1/${f}" ]] || fail "$1/${f} missing"
  done
  compgen -G "${LAB_ROOT}/$1/steps/*/loadgen-1.json" >/dev/null \
    || compgen -G "${LAB_ROOT}/$1/steps/*/holder-1.json" >/dev/null || fail "$1: no load-generator summaries"
  compgen -G "${LAB_ROOT}/$1/configs/*.cfg" >/dev/null || fail "$1: no rendered configs"
  grep -q '^global' "$(compgen -G "${LAB_ROOT}/$1/configs/*.cfg" | head -n 1)" || fail "$1: config is not HAProxy's"
}

# The lab is back where it was: baseline config, no load generator, 1 + 1 backends.
assert_lab_restored() {
  assert_eq baseline "$(haproxy_info description)" "HAProxy config after the scenario"
  assert_eq "" "$(compose --profile load --profile hold ps -q loadgen holder)" "load generators left"
  assert_eq "backend-fast=1,backend-slow=1" \
    "$(backend_scale)" \
    "backend scale after the scenario"
}

test_e2e_08_maxconn_sweep_reproduces_the_article() {
  local run
  e2e_up --scale backend-slow=1
  scripts/scenario.sh maxconn-sweep
  run=$(newest_run maxconn-sweep)
  assert_run_files "${run}"
  cat "${LAB_ROOT}/${run}/summary.csv"
  # successful hits within 3% of 180/360/540/720/900; failures on every step
  # where maxconn < 100 clients and none on the last.
  assert_eq "true" "$(summary_field "${run}" 's.ok && s.rows.length === 5 && s.rows.every((r) => Math.abs(r.measured.successful - r.published.successful) <= 0.03 * r.published.successful)')" \
    "successful hits within 3% of the article"
  assert_eq "true,true,true,true,false" "$(summary_field "${run}" 's.rows.map((r) => r.measured.failed > 0).join()')" \
    "failures exactly where maxconn < clients"
  grep -q "maxconn needed = clients × service time" "${LAB_ROOT}/${run}/report.md" || fail "no Little's law reading"
  assert_lab_restored
}

# "be_slow slow1" per server with an address, as JSON pairs.
servers_with_address() {
  local be
  for be in be_slow be_fast; do
    haproxy_servers "${be}" | awk -v be="${be}" '$NF != "-" { print be, $1 }'
  done | awk 'BEGIN { printf "[" } { printf "%s[\"%s\",\"%s\"]", (NR > 1 ? "," : ""), $1, $2 } END { print "]" }'
}

panels_after_sweep() { # RUN
  docker run --rm --network "${COMPOSE_PROJECT_NAME}_lab" -v "${LAB_ROOT}:/lab:ro" -w /lab \
    "$(env_value NODE_IMAGE)" node tests/lib/panels-after-sweep.mjs http://prometheus:9090 \
    "$1" "$(servers_with_address)" grafana/dashboards/haproxy-lab.json
}

# What a user reads on the dashboard after the sweep above: one named bar
# pair per step equal to k6's counts, HAProxy's series with no gap while
# maxconn is reached, the maxconn line at show info's value, and only the
# servers that have an address (retried: Prometheus scrapes every 5 s).
test_e2e_08a_dashboard_panels_after_the_sweep() {
  local run
  run=$(newest_run maxconn-sweep)
  wait_for 30 "the dashboard's panels to match the run" panels_after_sweep "${run}"
}

test_e2e_09_quick_fullconn_throughput_complete() {
  local scenario run
  for scenario in fullconn throughput; do
    scripts/scenario.sh "${scenario}" --quick
    run=$(newest_run "${scenario}")
    assert_run_files "${run}"
    assert_eq "null" "$(summary_field "${run}" 's.incomplete')" "${scenario} incomplete flag"
    assert_eq "0" "$(summary_field "${run}" 's.rows.filter((r) => !r.measured).length')" "${scenario} steps without data"
    assert_lab_restored
  done
}

# tuning --quick: every step ran on the listening socket it asked for (the
# runner restarts HAProxy when a reload cannot change it, and fails the step
# if ss disagrees): fe_main's backlog 128 in every step. The accept queue is
# measured: at maxconn 2000 it fills (backlog + 1), HAProxy's kernel drops
# SYNs and the clients retransmit them; at maxconn 5000 far fewer. After the
# run the baseline's socket (backlog 5000) is back.
test_e2e_09e_tuning_quick_sockets_read_back_and_accept_queue_measured() {
  local run
  scripts/scenario.sh tuning --quick
  run=$(newest_run tuning)
  assert_run_files "${run}"
  assert_eq "128,128,128,128,128" "$(summary_field "${run}" 's.rows.map((r) => r.measured.backlog).join()')" \
    "fe_main backlog read back with ss after each step"
  # Full: the kernel admits backlog + 1 (129), a racing CPU one or two more.
  assert_eq "true" "$(summary_field "${run}" 's.rows[0].measured.accept_queue_max >= 128 && s.rows[0].measured.accept_queue_max <= 132')" \
    "accept queue full at maxconn 2000 (longest sampled $(summary_field "${run}" 's.rows[0].measured.accept_queue_max'), backlog 128)"
  assert_eq "true" "$(summary_field "${run}" 's.rows[0].measured.listen_overflows > 0 && s.rows[0].measured.syn_retrans > 0')" \
    "listen overflows and client SYN retransmits at maxconn 2000 ($(summary_field "${run}" 'JSON.stringify(s.rows[0].measured, ["listen_overflows", "syn_retrans"])'))"
  # At maxconn 5000 no client waits for a slot; a few SYNs of the 1 s burst
  # may still overflow the 128 backlog while a busy CPU delays HAProxy's
  # accepts (0 to 262 seen here), far fewer than the 371 clients x 2 drops
  # at maxconn 2000.
  assert_eq "true" "$(summary_field "${run}" 's.rows[2].measured.listen_overflows * 2 < s.rows[0].measured.listen_overflows && s.rows[2].measured.syn_retrans * 2 < s.rows[0].measured.syn_retrans')" \
    "at maxconn 5000 under half of maxconn 2000's overflows and retransmits ($(summary_field "${run}" 'JSON.stringify(s.rows.map((r) => [r.id, r.measured.listen_overflows, r.measured.syn_retrans]))'))"
  assert_eq 5000 "$(fe_main_backlog)" "fe_main backlog after the run (the baseline's)"
  assert_lab_restored
}

# The long-lived scenarios, quick: every verdict passes (scenario.sh exits 0),
# e.g. the client-timeout trap fails 35-65% of requests and its fix none, the
# backend-timeout plateau is within 15% of rate × timeout, a tipping point is found.
test_e2e_09a_long_lived_scenarios_quick() {
  local scenario run
  for scenario in tipping-point long-lived client-timeout backend-timeout; do
    scripts/scenario.sh "${scenario}" --quick
    run=$(newest_run "${scenario}")
    assert_run_files "${run}"
    assert_eq "true" "$(summary_field "${run}" 's.ok && s.incomplete === null')" "${scenario} ok"
    assert_lab_restored
  done
  run=$(newest_run client-timeout)
  assert_eq "true" "$(summary_field "${run}" '((t, f) => t >= 35 && t <= 65 && f === 0)(...s.rows.map((r) => r.measured.failure_pct))')" \
    "client-timeout: about half fail, then none"
  run=$(newest_run backend-timeout)
  assert_eq "true" "$(summary_field "${run}" '((m) => Math.abs(m.plateau_conns - 100) <= 15 && m.sd_aborts > 0)(s.rows[0].measured) && s.rows[1].measured.sd_aborts === 0')" \
    "backend-timeout: plateau at 50/s × 2 s, SD aborts only in the trap"
  assert_eq 0 "$(compose exec -T backend-slow printenv SERVER_TIMEOUT_MS)" "backend server timeout after the scenario"
  run=$(newest_run tipping-point)
  assert_eq "true" "$(summary_field "${run}" 's.tipping_point !== undefined && s.tipping_point.above > s.tipping_point.below')" "tipping point found"
  grep -q '<title>tipping-point: offered requests/sec vs p99 latency ms' "${LAB_ROOT}/${run}/chart.svg" || fail "no latency-vs-rate chart"
}

# Held connections, quick: 2 holder replicas (2 client IPs) merged into one
# report, every level held with no failure, bytes per connection measured.
test_e2e_09b_connections_quick_two_holder_replicas() {
  local run
  scripts/scenario.sh connections --quick --replicas 2
  run=$(newest_run connections)
  assert_run_files "${run}"
  [[ -s "${LAB_ROOT}/${run}/limits.json" ]] || fail "no limits.json"
  compgen -G "${LAB_ROOT}/${run}/steps/03-*/holder-2.json" >/dev/null || fail "no second holder replica"
  assert_eq "60,300,600" "$(summary_field "${run}" 's.rows.map((r) => r.measured.client_held).join()')" "connections held per level"
  assert_eq "true" "$(summary_field "${run}" 's.ok && s.rows.every((r) => r.measured.failed === 0 && Number.isFinite(r.measured.bytes_haproxy))')" \
    "no failure, HAProxy bytes per connection measured (small levels are within the memory noise)"
  grep -q 'memory per connection' "${LAB_ROOT}/${run}/report.md" || fail "no memory reading"
  assert_lab_restored
}

# A target the machine cannot hold is refused before anything starts.
test_e2e_09c_connections_refuses_what_cannot_fit() {
  local before
  before=$(find "${LAB_ROOT}/results" -mindepth 1 | wc -l)
  assert_fails_with '^scenario: 100000000 concurrent connections do not fit here: .* allows at most [0-9]+ \(.*\); try --target [0-9]+ or --target max$' \
    scripts/scenario.sh connections --target 100000000
  assert_eq "${before}" "$(find "${LAB_ROOT}/results" -mindepth 1 | wc -l)" "files under results/ after a refusal"
  assert_eq baseline "$(haproxy_info description)" "HAProxy config after a refusal"
}

# HAProxy under a too small memory limit: OOM-killed, connections cut; then
# the fix holds them all, and HAProxy is back on its own limit afterwards.
test_e2e_09d_oom_kill_and_fix() {
  local run
  scripts/scenario.sh oom --quick
  run=$(newest_run oom)
  assert_run_files "${run}"
  assert_eq "1,0" "$(summary_field "${run}" 's.rows.map((r) => r.measured.oom_killed).join()')" "OOM kill in the trap only"
  assert_eq "true" "$(summary_field "${run}" 's.ok')" "oom verdicts"
  assert_eq "$(docker inspect -f '{{.HostConfig.Memory}}' "$(compose ps -q haproxy)")" "2147483648" "HAProxy memory limit after the scenario"
  assert_lab_restored
}

second_step_started() { # OLD_RUN
  local run
  run=$(newest_run maxconn-sweep)
  [[ -n "${run}" && "${run}" != "$1" ]] && compgen -G "${LAB_ROOT}/${run}/steps/02-*" >/dev/null
}

# Ctrl-C in the middle of a step: baseline config back, no load generator,
# partial results kept and marked incomplete, exit 130.
test_e2e_10_interrupt_restores_the_lab_and_keeps_partial_results() {
  local pid rc=0 run before
  before=$(newest_run maxconn-sweep)
  set -m # a background job with its own process group receives SIGINT like a terminal's Ctrl-C
  scripts/scenario.sh maxconn-sweep --quick &
  pid=$!
  wait_for 120 "step 2 of a new run to start" second_step_started "${before}"
  sleep 4
  kill -INT "${pid}"
  wait "${pid}" || rc=$?
  set +m
  assert_eq 130 "${rc}" "exit code after Ctrl-C"
  run=$(newest_run maxconn-sweep)
  [[ -s "${LAB_ROOT}/${run}/INCOMPLETE" ]] || fail "${run}/INCOMPLETE missing"
  assert_eq "true" "$(summary_field "${run}" 'Boolean(s.incomplete) && s.rows[0].measured !== null')" \
    "partial summary marked incomplete, first step kept"
  assert_lab_restored
}

# Grafana annotations: a stand-in "grafana" on the lab network records what
# the runner posts (no registry here has Grafana itself).
test_e2e_11_scenario_steps_become_grafana_annotations() {
  local fake="${COMPOSE_PROJECT_NAME}-fake-grafana" posts
  docker rm -f "${fake}" >/dev/null 2>&1 || true
  docker run -d --name "${fake}" --network "${COMPOSE_PROJECT_NAME}_lab" --network-alias grafana \
    "$(env_value NODE_IMAGE)" node -e '
      require("node:http").createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => { console.log(req.method, req.url, body); res.end("{\"id\":1}"); });
      }).listen(3000);' >/dev/null
  scripts/scenario.sh tuning --quick >/dev/null
  posts=$(docker logs "${fake}" 2>&1)
  docker rm -f "${fake}" >/dev/null
  echo "${posts}"
  assert_eq 10 "$(grep -c '^POST /api/annotations {' <<<"${posts}")" "annotations posted (start + region per step)"
  assert_eq 5 "$(grep -c '"timeEnd":[0-9]*,"tags":\["haproxy-lab","tuning","[a-z0-9-]*"\]' <<<"${posts}")" "region annotations with tags"
  grep -q '"text":"tuning step 1/5: maxconn 2000 (default)"' <<<"${posts}" || fail "step 1 start annotation"
}

# Every panel query of every provisioned dashboard returns data from the lab's
# Prometheus over the e2e run (which ran k6 loads and the scenarios above).
test_e2e_12_every_dashboard_panel_query_returns_data() {
  local files
  mapfile -t files < <(cd "${LAB_ROOT}" && ls grafana/dashboards/*.json)
  docker run --rm --network "${COMPOSE_PROJECT_NAME}_lab" -v "${LAB_ROOT}:/lab:ro" -w /lab \
    "$(env_value NODE_IMAGE)" node tests/lib/panel-queries.mjs http://prometheus:9090 \
    "${E2E_STARTED_MS}" "$(($(date +%s%N) / 1000000))" "${files[@]}"
}
