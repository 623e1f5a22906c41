# shellcheck shell=bash
# End to end: the stack for real (everything but Grafana, which no registry
# here has), in its own compose project and ports so a running lab is left alone.

readonly E2E_SERVICES=(haproxy backend-slow backend-fast prometheus)
E2E_TESTID="e2e-$(date +%s)-$$"
E2E_SUMMARIES="results/.${E2E_TESTID}"
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
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  rm -rf "${LAB_ROOT:?}/${E2E_SUMMARIES}"
}

# up ARGS...: the e2e services, waited for healthy.
e2e_up() { compose up -d --wait --wait-timeout 180 "$@" "${E2E_SERVICES[@]}"; }

# servers_up BACKEND N: exactly N servers of BACKEND are UP, each with an address.
servers_up() {
  local servers
  servers=$(haproxy_servers "$1")
  echo "${servers}" >&2
  [[ $(grep -c ' UP [0-9]' <<<"${servers}") -eq $2 ]] && [[ $(grep -c ' UP' <<<"${servers}") -eq $2 ]]
}

worker_pid_differs() { # OLD_PID
  local pid
  pid=$(haproxy_cli "show info" | sed -n 's/^Pid: //p')
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
  assert_eq 4 "$(grep -c ' healthy$' <<<"${states}")" "healthy services"
  http_get /fast | grep -q "I'm FAST" || fail "GET /fast through HAProxy"
}

test_e2e_02_scale_backend_slow_to_3_seen_by_haproxy() {
  e2e_up --scale backend-slow=3
  wait_for 30 "3 servers UP in be_slow" servers_up be_slow 3
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
  before=$(haproxy_cli "show info" | sed -n 's/^Pid: //p')
  http_get /slow >"${inflight}" &
  local pid=$!
  sleep 1
  compose kill -s USR2 haproxy
  wait "${pid}" || fail "the in-flight request failed during the reload"
  response=$(head -n 1 "${inflight}")
  assert_match ' 200 ' "${response}" "in-flight request across the reload"
  wait_for 10 "a new worker" worker_pid_differs "${before}"
  after=$(haproxy_cli "show info" | sed -n 's/^Pid: //p')
  echo "worker pid ${before} -> ${after}"
  [[ "${after}" != "${before}" ]] || fail "worker pid unchanged: no reload happened"
}

# fe_main_requests: HAProxy's own count of requests on fe_main (runtime API).
fe_main_requests() {
  haproxy_cli "show stat" | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == "fe_main" && $2 == "FRONTEND" { print $col["req_tot"] }'
}

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
  total=$(in_image NODE_IMAGE node -e '
    let n = 0;
    for (const f of process.argv.slice(1)) n += JSON.parse(require("fs").readFileSync(f)).metrics.http_reqs.values.count;
    console.log(n);' "${E2E_SUMMARIES}/loadgen-1.json" "${E2E_SUMMARIES}/loadgen-2.json")
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

test_e2e_06_haproxy_exporter_profile() {
  compose --profile exporter up -d --no-deps haproxy-exporter
  wait_for 40 "haproxy-exporter scraped" prom_at_least 'haproxy_up{job="haproxy-exporter"}' 1
  wait_for 20 "frontend requests via haproxy-exporter" prom_at_least \
    'sum(haproxy_frontend_http_requests_total{job="haproxy-exporter",frontend="fe_main"})' 1
}

test_e2e_07_scale_back_to_1_haproxy_drops_the_others() {
  e2e_up --scale backend-slow=1
  wait_for 30 "1 server UP in be_slow" servers_up be_slow 1
  haproxy_servers be_slow | grep -c MAINT | xargs test 9 -eq || fail "9 free slots in MAINT expected"
}
