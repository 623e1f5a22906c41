# shellcheck shell=bash
# End to end, what Grafana shows: the dashboard's panels after a sweep, each
# scenario step as an annotation, every panel query returning data. Each test
# makes the data it reads (Prometheus starts empty with the session): the
# panels after a sweep read a maxconn-sweep run of the session (sweep_run:
# test 08's, else a --quick one). Helpers and setup: tests/e2e.sh.

# "be_slow slow1" per server with an address, as JSON pairs.
servers_with_address() {
  local be
  for be in be_slow be_fast; do
    haproxy_servers "${be}" | awk -v be="${be}" '$NF != "-" { print be, $1 }'
  done | awk 'BEGIN { printf "[" } { printf "%s[\"%s\",\"%s\"]", (NR > 1 ? "," : ""), $1, $2 } END { print "]" }'
}

# on_lab_network ARGS...: node ARGS in the lab's node image on the lab's
# network (Prometheus answers at http://prometheus:9090), repository read-only.
on_lab_network() {
  docker run --rm --network "${COMPOSE_PROJECT_NAME}_lab" -v "${LAB_ROOT}:/lab:ro" -w /lab \
    "$(env_value NODE_IMAGE)" node "$@"
}

panels_after_sweep() { # RUN
  on_lab_network tests/lib/panels-after-sweep.mjs http://prometheus:9090 \
    "$1" "$(servers_with_address)" grafana/dashboards/haproxy-lab.json
}

# What a user reads on the dashboard after a sweep: one named bar pair per
# step equal to k6's counts, HAProxy's series with no gap while maxconn is
# reached, the maxconn line at show info's value, and only the servers that
# have an address (retried: Prometheus scrapes every 5 s).
test_e2e_08a_dashboard_panels_after_the_sweep() {
  local run
  e2e_up
  run=$(sweep_run)
  echo "the sweep: ${run}"
  wait_for 30 "the dashboard's panels to match the run" panels_after_sweep "${run}"
}

# Grafana annotations: a stand-in "grafana" on the lab network records what
# the runner posts (no registry here has Grafana itself). client-timeout
# --quick: two steps, under a minute; the same run is client-timeout's e2e
# test (its verdicts judged: tests/e2e/checks/verdicts.test.mjs), one
# run for both.
test_e2e_11_scenario_steps_become_grafana_annotations() {
  local fake="${COMPOSE_PROJECT_NAME}-fake-grafana" posts secret
  e2e_up
  docker rm -f "${fake}" >/dev/null 2>&1 || true
  docker run -d --name "${fake}" --network "${COMPOSE_PROJECT_NAME}_lab" --network-alias grafana \
    "$(env_value NODE_IMAGE)" node -e '
      require("node:http").createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
          if (req.headers.authorization) console.log("AUTH", req.headers.authorization);
          console.log(req.method, req.url, body);
          res.end("{\"id\":1}");
        });
      }).listen(3000);' >/dev/null
  scenario_judged verdicts client-timeout --quick
  posts=$(docker logs "${fake}" 2>&1)
  docker rm -f "${fake}" >/dev/null
  echo "${posts}"
  assert_eq 4 "$(grep -c '^POST /api/annotations {' <<<"${posts}")" "annotations posted (start + region per step)"
  # Grafana's anonymous visitors only view: each post signs in as its admin,
  # with the password the certs service made.
  secret=$(compose exec -T prometheus cat /run/grafana-secret/grafana-admin-password)
  [[ "${secret}" =~ ^[0-9a-f]{32}$ ]] || fail "Grafana's admin password (grafana-secret volume): expected 32 hex characters, found '${secret}'"
  assert_eq "4 AUTH Basic $(printf 'admin:%s' "${secret}" | base64)" "$(grep '^AUTH ' <<<"${posts}" | sort | uniq -c | xargs)" \
    "the annotations' Authorization headers (count, value)"
  assert_eq 2 "$(grep -c '"timeEnd":[0-9]*,"tags":\["haproxy-lab","client-timeout","[a-z0-9-]*"\]' <<<"${posts}")" "region annotations with tags"
  grep -q '"text":"client-timeout step 1/2: client timeout = sleep / 2 (trap)"' <<<"${posts}" || fail "step 1 start annotation"
}

# dashboard_data SECONDS: what every panel needs, made in SECONDS: k6 load
# that succeeds (110 clients on /slow: over 100 connections on each side of
# HAProxy and 100 VUs, as the bytes-per-connection panel asks) and load that
# fails (404s), TLS requests (the TLS panels), and a server limit (maxconn) for the server-limit line, which
# only fullconn's configs set otherwise (the runtime API's, until a reload).
dashboard_data() {
  local dir="${E2E_SUMMARIES}/dashboard" pid tls_pid
  mkdir -p "${LAB_ROOT}/${dir}"
  haproxy_cli "set maxconn server be_slow/slow1 500" >/dev/null
  compose --profile load run --rm --no-deps -e TESTID="${E2E_TESTID}-dashboard-ok" -e LOADGEN_SUMMARY_DIR="${dir#results/}/ok" \
    -e VUS=110 -e DURATION="$1s" -e LOAD_PATH=/slow loadgen >/dev/null 2>&1 &
  pid=$!
  # TLS on fe_tls, a connection per request, sessions resumed after the first
  # (the TLS panels: full and resumed handshakes, reuse %).
  compose --profile attack run --rm --no-deps -e TESTID="${E2E_TESTID}-dashboard-tls" -e LOADGEN_SUMMARY_DIR="${dir#results/}/tls" \
    -e TARGET=https://ecdsa.haproxy:8443 -e RATE=20 -e DURATION="$1" -e KEEPALIVE=false vegeta >/dev/null 2>&1 &
  tls_pid=$!
  compose --profile load run --rm --no-deps -e TESTID="${E2E_TESTID}-dashboard-404" -e LOADGEN_SUMMARY_DIR="${dir#results/}/404" \
    -e VUS=2 -e DURATION="$1s" -e LOAD_PATH=/no-such-page loadgen >/dev/null 2>&1
  wait "${pid}" || fail "the load generator on /slow exited non-zero"
  wait "${tls_pid}" || fail "the TLS load (vegeta) exited non-zero"
}

panel_queries() {
  local files
  mapfile -t files < <(cd "${LAB_ROOT}" && ls grafana/dashboards/*.json)
  on_lab_network tests/lib/panel-queries.mjs http://prometheus:9090 \
    "${E2E_STARTED_MS}" "$(($(date +%s%N) / 1000000))" "${files[@]}"
}

# Every panel query of every provisioned dashboard returns data from the lab's
# Prometheus over this e2e session, with the labels its legend names; the
# test makes the data it needs (20 s), a whole run also has the scenarios'
# (retried: Prometheus scrapes every 5 s).
test_e2e_12_every_dashboard_panel_query_returns_data() {
  e2e_up
  dashboard_data 20
  wait_for 30 "every panel query to return data" panel_queries
}
