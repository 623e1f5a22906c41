# shellcheck shell=bash
# End to end, changing HAProxy and the backends while they serve: hitless
# reloads (an in-flight request, 20 under load), scaling under load, and the
# listening socket a reload keeps. Helpers and setup: tests/e2e.sh.

worker_pid_differs() { # OLD_PID
  local pid
  pid=$(haproxy_info Pid)
  [[ -n "${pid}" && "${pid}" != "$1" ]]
}

test_e2e_04_hitless_reload_keeps_inflight_request() {
  local before after response inflight
  e2e_up
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

# reload_into_variant NAME SED_EXPR: HAProxy reloaded on the baseline config
# changed by SED_EXPR and described as NAME (show info), in its writable dir.
reload_into_variant() {
  compose exec -T haproxy sh -c "sed -e 's/^    description baseline/    description $1/' -e '$2' \
    /usr/local/etc/haproxy/haproxy.cfg >/var/lib/haproxy/$1.cfg && mv -f /var/lib/haproxy/$1.cfg /var/lib/haproxy/live.cfg"
  compose kill -s USR2 haproxy >/dev/null 2>&1
  wait_for 30 "HAProxy to run the $1 config" description_is "$1"
}

# reload_onto_baseline: HAProxy reloaded on haproxy.cfg again.
reload_onto_baseline() {
  compose exec -T haproxy ln -sfn /usr/local/etc/haproxy/haproxy.cfg /var/lib/haproxy/live.cfg
  compose kill -s USR2 haproxy >/dev/null 2>&1
  wait_for 30 "HAProxy back on the baseline" description_is baseline
}

# Why the runner restarts HAProxy for a step that changes a listening socket:
# a reload (USR2) hands the old worker's sockets to the new one, which keeps
# their backlog. The new config runs (show info says so), the socket does not.
test_e2e_04d_a_reload_keeps_the_listening_sockets_backlog() {
  local backlog
  e2e_up
  assert_eq 5000 "$(fe_main_backlog)" "fe_main backlog before (the baseline's maxconn)"
  reload_into_variant backlog-64 's/^    bind :8080$/    bind :8080 backlog 64/'
  backlog=$(fe_main_backlog)
  reload_onto_baseline
  echo "after a reload to 'bind :8080 backlog 64': ss shows backlog ${backlog}"
  assert_eq 5000 "${backlog}" "fe_main backlog after a reload asking for 64 (the old socket's)"
}

# load_during NAME KEEPALIVE SECONDS COMMAND...: 20 k6 clients on /fast for
# SECONDS while COMMAND runs (started 3 s into the load); then judges k6's
# summary (tests/e2e/checks/load.test.mjs: at least 1000 requests, none
# failed), with HAProxy's log of the failed ones when some did.
load_during() {
  local name="$1" keepalive="$2" seconds="$3" dir="${E2E_SUMMARIES}/$1" since pid
  shift 3
  mkdir -p "${LAB_ROOT}/${dir}"
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  compose --profile load run --rm --no-deps -e TESTID="${E2E_TESTID}-${name}" -e LOADGEN_SUMMARY_DIR="${dir#results/}" \
    -e VUS=20 -e DURATION="${seconds}s" -e LOAD_PATH=/fast -e KEEPALIVE="${keepalive}" loadgen >/dev/null 2>&1 &
  pid=$!
  sleep 3
  "$@"
  wait "${pid}" || fail "the load generator exited non-zero"
  if ! e2e_check load E2E_LOAD="${name} (keep-alive ${keepalive})" E2E_SUMMARIES="${dir}/loadgen-1.json" \
    E2E_MIN_REQUESTS=1000 E2E_MAX_FAILED=0; then
    echo "HAProxy's log of fe_main during ${name} (first 10 lines):"
    service_log "${since}" haproxy | grep ' fe_main ' | head -n 10
    fail "${name}: requests failed or too few sent (k6's summary above)"
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

# reloads_under_load KEEPALIVE: 20 reloads during 27 s of load, each one
# counted by HAProxy's master (show proc: reloads, none failed) and logged
# as done (its log as the engine stored it, read by the runner's reader).
reloads_under_load() {
  local since name="reloads-keepalive" before after log
  [[ "$1" == true ]] || name="reloads-close"
  e2e_up
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  before=$(haproxy_reloads)
  load_during "${name}" "$1" 27 reloads 20
  after=$(haproxy_reloads)
  echo "HAProxy's master: reloads and failed ones ${before} before, ${after} after"
  [[ "${before} ${after}" =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]] \
    || fail "HAProxy's master CLI (show proc) gave no reload counts: '${before}', '${after}'"
  assert_eq 20 $((${after% *} - ${before% *})) "reloads HAProxy's master counted (show proc)"
  assert_eq "${before#* }" "${after#* }" "failed reloads HAProxy's master counted"
  log="${E2E_SUMMARIES}/${name}/haproxy-log.txt"
  service_log "${since}" haproxy >"${LAB_ROOT}/${log}"
  e2e_check reloads E2E_LOG="${log}" E2E_RELOADS=20
}

# 20 reloads under keep-alive load lose no request: the new worker starts with
# libc's addresses (init-addr libc,none), not empty server slots (503 <NOSRV>).
test_e2e_04a_20_reloads_under_keepalive_load_lose_nothing() {
  reloads_under_load true
}

test_e2e_04b_20_reloads_under_connection_per_request_load_lose_nothing() {
  reloads_under_load false
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
  e2e_up
  wait_for 30 "1 server UP in be_fast" servers_up be_fast 1
  load_during scale-1-3-1 true 40 scale_fast_1_3_1
  servers_up be_fast 1 || { haproxy_servers be_fast; fail "be_fast should end with one server UP"; }
}

# join_refusing_members N: N containers that listen on nothing join
# backend-fast's name in Docker's DNS, as a replica does before its server
# listens.
join_refusing_members() {
  local i
  for ((i = 1; i <= $1; i++)); do
    docker run -d --rm --name "${COMPOSE_PROJECT_NAME}-refusing-${i}" --network "${COMPOSE_PROJECT_NAME}_lab" \
      --network-alias backend-fast "$(env_value NODE_IMAGE)" sleep 60 >/dev/null
  done
}

# A server that refuses connections is taken out at its first refusal
# (observe layer4, on-error fail-check: the resolvers gave it just now, so one
# failed check takes it DOWN) and the request goes to another: here
# the health checks run 30 s apart, so only the traffic can find the two
# refusing members, which would otherwise get a third of the requests each.
test_e2e_04e_a_refusing_server_is_taken_out_at_its_first_refusal() {
  local since marked
  e2e_up
  reload_into_variant checks-30s 's/ check inter 1s / check inter 30s /'
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  load_during refusing-members true 15 join_refusing_members 2
  remove_refusing_members
  marked=$(service_log "${since}" haproxy | grep -Eo 'be_fast/fast[0-9]+ is DOWN, reason: Health analyze' | sort -u | wc -l)
  reload_onto_baseline
  assert_eq 2 "${marked}" "be_fast servers HAProxy marked DOWN at a refused connection (its log: reason: Health analyze)"
}
