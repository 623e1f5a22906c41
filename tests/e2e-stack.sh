# shellcheck shell=bash
# End to end, the stack itself: up and healthy, scaling the backends seen by
# HAProxy, load counted by Prometheus through both exporters, the load
# commands of docs/how-it-works.md as written. Helpers and setup: tests/e2e.sh.

test_e2e_01_stack_up_all_healthy() {
  local start=${SECONDS} states
  e2e_up
  echo "up to all-healthy: $((SECONDS - start)) s"
  states=$(compose ps --format '{{.Service}} {{.Health}}')
  echo "${states}"
  assert_eq "${#E2E_SERVICES[@]}" "$(grep -c " healthy$" <<<"${states}")" "healthy services"
  http_get /fast | grep -q "I'm FAST" || fail "GET /fast through HAProxy"
}

# A test port held by another container (another session's lab): the group's
# setup stops on one line naming it, instead of every test failing on
# "port is already allocated".
test_e2e_01c_a_taken_test_port_is_named() {
  local holder="${COMPOSE_PROJECT_NAME}-port-holder" port=18999 out rc=0
  docker rm -f "${holder}" >/dev/null 2>&1 || true
  docker run -d --rm --name "${holder}" -p "127.0.0.1:${port}:8000" "$(env_value NODE_IMAGE)" \
    node -e 'require("node:net").createServer().listen(8000)' >/dev/null
  wait_for 20 "the holder listening on ${port}" bash -c "exec 3<>/dev/tcp/127.0.0.1/${port}" 2>/dev/null || true
  out=$(ports_free e2e "${port}" 2>&1) || rc=$?
  docker rm -f "${holder}" >/dev/null 2>&1 || true
  assert_eq 1 "${rc}" "ports_free's exit status with ${port} taken"
  assert_eq "e2e: 127.0.0.1:${port} is taken by ${holder} (another e2e session on this Docker?): let it end or stop it, then rerun" "${out}" "its line"
  ports_free e2e "${port}" || fail "with the holder gone, ports_free still finds ${port} taken"
}

# slow_up N: backend-slow at N replicas, each seen UP by HAProxy.
slow_up() {
  e2e_up --scale "backend-slow=$1"
  wait_for 30 "$1 servers UP in be_slow" servers_up be_slow "$1" || { haproxy_servers be_slow; return 1; }
}

test_e2e_02_scale_backend_slow_to_3_seen_by_haproxy() {
  slow_up 3
  haproxy_servers be_slow
}

test_e2e_03_requests_reach_all_3_replicas() {
  local replicas i counts
  slow_up 3
  counts=$(mktemp)
  for i in $(seq 1 30); do
    http_get "/ping?n=${i}" | tr -d '\r' | sed -n 's/^[Xx]-[Rr]eplica: //p'
  done | sort | uniq -c | tee /dev/stderr >"${counts}"
  replicas=$(wc -l <"${counts}")
  assert_eq 3 "${replicas}" "distinct replicas answering"
}

# From 3 replicas back to 1: HAProxy drops the two others' addresses, their
# slots return to the template's free ones (MAINT).
test_e2e_03a_scale_back_to_1_haproxy_drops_the_others() {
  slow_up 3
  slow_up 1
  haproxy_servers be_slow | grep -c MAINT | xargs test 9 -eq || fail "9 free slots in MAINT expected"
}

# k6_requests SUMMARY...: the requests k6 sent, summed over its summaries
# (paths relative to the repository) as the report reads them.
k6_requests() {
  in_image NODE_IMAGE node tests/e2e/checks/load-counts.mjs k6 "$@" | awk '{ print $1 }'
}

prom_at_least() { # PROMQL MIN
  local value
  value=$(prom_query "$1")
  echo "$1 = ${value:-no data} (want >= $2)" >&2
  [[ -n "${value}" ]] && awk -v v="${value}" -v m="$2" 'BEGIN { exit !(v >= m) }'
}

# fe_main_requests: HAProxy's own count of requests on fe_main (runtime API).
fe_main_requests() { haproxy_stat_sum fe_main FRONTEND req_tot; }

test_e2e_05_k6_two_replicas_counted_in_prometheus() {
  local total instances before after dir="${E2E_SUMMARIES}/two-replicas"
  e2e_up
  mkdir -p "${LAB_ROOT}/${dir}"
  # From the runtime API, not Prometheus: a reload (test 04) resets the
  # counters and Prometheus may not have scraped the new worker yet.
  before=$(fe_main_requests)
  printf '%s\n' "TESTID=${E2E_TESTID}" LOADGEN_REPLICAS=2 VUS=4 DURATION=8s LOAD_PATH=/fast \
    "LOADGEN_SUMMARY_DIR=${dir#results/}" >"${LAB_ROOT}/${dir}/load.env"
  LOAD_ENV_FILE="${LAB_ROOT}/${dir}/load.env" compose --profile load up --no-deps --scale loadgen=2 loadgen
  assert_eq "0 0" "$(compose ps -a loadgen --format '{{.ExitCode}}' | sort | xargs)" "loadgen exit codes"
  after=$(fe_main_requests)
  echo "HAProxy fe_main requests: ${before} -> ${after}"
  e2e_check load E2E_LOAD="two replicas" E2E_SUMMARIES="${dir}/loadgen-1.json ${dir}/loadgen-2.json" \
    E2E_MIN_REQUESTS=100 E2E_HAPROXY_REQUESTS=$((after - before))
  total=$(k6_requests "${dir}/loadgen-1.json" "${dir}/loadgen-2.json")
  wait_for 30 "k6 remote write" prom_at_least "sum(k6_http_reqs_total{testid=\"${E2E_TESTID}\"})" "${total}"
  instances=$(prom_query "count(count by (instance) (k6_http_reqs_total{testid=\"${E2E_TESTID}\"}))")
  assert_eq 2 "${instances}" "loadgen replicas reporting to Prometheus"
  wait_for 30 "HAProxy's exporter" prom_at_least \
    'sum(haproxy_frontend_http_requests_total{job="haproxy",proxy="fe_main"})' "${after}"
}

# doc_commands FILE SECTION: the bash blocks of FILE's "## SECTION", one
# script, continuation lines kept.
doc_commands() {
  awk -v section="## $2" '
    $0 == section { inside = 1; next }
    inside && /^## / { exit }
    inside && /^```bash$/ { block = 1; next }
    inside && /^```$/ { block = 0; next }
    inside && block { print }' "${LAB_ROOT}/$1"
}

# The Load section of docs/how-it-works.md, run as a user types it on Linux:
# without the LAB_UID the scripts export (the section's first command exports
# it). Every file the load generators write must belong to the user running
# the commands.
test_e2e_05a_docs_load_commands_work_as_written() {
  local script moved=() dir rc=0 listing="" others=""
  # The commands start their load with --no-deps, on a running lab.
  e2e_up
  script=$(doc_commands docs/how-it-works.md Load)
  [[ -n "${script}" ]] || fail "docs/how-it-works.md has no bash block under '## Load'"
  grep -q 'export LAB_UID' <<<"${script}" || fail "the Load section of docs/how-it-works.md exports no LAB_UID"
  echo "${script}"
  # The section writes results/demo and results/demo-hold, and the knobs'
  # files beside them: a user's own are moved aside for the test and put
  # back whatever happens.
  for dir in demo demo-hold demo.env demo-hold.env; do
    if [[ -e "${LAB_ROOT}/results/${dir}" ]]; then
      mv "${LAB_ROOT}/results/${dir}" "${LAB_ROOT}/results/${dir}.before-e2e-$$"
      moved+=("${dir}")
    fi
  done
  (cd "${LAB_ROOT}" && env -u LAB_UID -u LAB_GID bash -euo pipefail -c "${script}") >/dev/null 2>&1 || rc=$?
  listing=$(cd "${LAB_ROOT}/results" && compgen -G 'demo/loadgen-*.json'; compgen -G 'demo-hold/holder-*.json') || true
  listing=$(LC_ALL=C sort <<<"${listing}" | paste -sd' ' -)
  others=$(find "${LAB_ROOT}/results/demo" "${LAB_ROOT}/results/demo-hold" ! -user "$(id -u)" 2>/dev/null | head -n 3)
  rm -rf "${LAB_ROOT}/results/demo" "${LAB_ROOT}/results/demo-hold" "${LAB_ROOT}/results/demo.env" "${LAB_ROOT}/results/demo-hold.env"
  for dir in "${moved[@]}"; do mv "${LAB_ROOT}/results/${dir}.before-e2e-$$" "${LAB_ROOT}/results/${dir}"; done
  assert_eq 0 "${rc}" "exit status of the Load section's commands"
  assert_eq "demo-hold/holder-1.json demo-hold/holder-2.json demo/loadgen-1.json demo/loadgen-2.json demo/loadgen-3.json" \
    "${listing}" "summaries the Load section's commands promise"
  assert_eq "" "${others}" "files the load generators wrote that do not belong to uid $(id -u)"
}

# haproxy-exporter reads HAProxy through the stats socket in the volume they
# share (nothing published): the source of the dashboard's maxconn panels.
test_e2e_06_haproxy_exporter_reads_the_stats_socket() {
  local i
  e2e_up
  # Requests for its frontend counter to count (on a lab just started, none yet).
  for i in 1 2 3; do http_get /fast >/dev/null; done
  wait_for 40 "haproxy-exporter scraped" prom_at_least 'haproxy_up{job="haproxy-exporter"}' 1
  wait_for 20 "frontend requests via haproxy-exporter" prom_at_least \
    'sum(haproxy_frontend_http_requests_total{job="haproxy-exporter",frontend="fe_main"})' 1
}

# A client that sends its headers byte by byte (a "slowloris") is cut when
# "timeout http-request" (haproxy.cfg's defaults) runs out, with 408, not
# after the 42 s client timeout.
test_e2e_06b_slow_headers_are_cut_at_timeout_http_request() {
  local limit answer start elapsed headers="Host: lab\r\nUser-Agent: slow-sender\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n" i reader
  limit=$(sed -n 's/^ *timeout http-request \([0-9]*\)s$/\1/p' "${LAB_ROOT}/haproxy/haproxy.cfg")
  [[ "${limit}" =~ ^[0-9]+$ ]] || fail "haproxy/haproxy.cfg: expected 'timeout http-request Ns' in its defaults, found '${limit}'"
  e2e_up
  answer=$(mktemp)
  exec 5<>"/dev/tcp/127.0.0.1/$(env_value HAPROXY_HTTP_PORT)"
  cat <&5 >"${answer}" &
  reader=$!
  start=${SECONDS}
  printf 'GET /fast HTTP/1.1\r\n' >&5
  # One byte a second, until HAProxy answers (or a minute passes).
  for ((i = 0; i < ${#headers} && SECONDS - start < 60; i++)); do
    [[ ! -s "${answer}" ]] || break
    printf '%s' "${headers:i:1}" >&5 2>/dev/null || break
    sleep 1
  done
  elapsed=$((SECONDS - start))
  exec 5>&-
  wait "${reader}" 2>/dev/null || true
  assert_match '^HTTP/1\.[01] 408 ' "$(head -n 1 "${answer}")" "HAProxy's answer to headers sent a byte a second"
  ((elapsed >= limit - 1 && elapsed <= limit + 5)) \
    || fail "headers sent a byte a second: expected the cut after ${limit} s (timeout http-request), came after ${elapsed} s"
}

# container-exporter never holds the engine's socket: through
# docker-api-gate it lists and reads containers (GET), and creating,
# starting or removing one is refused (403), asked from inside it.
test_e2e_06c_container_exporter_reads_the_engine_and_cannot_change_it() {
  local id mounts answers
  e2e_up
  id=$(compose ps -q container-exporter)
  mounts=$(docker inspect -f '{{range .Mounts}}{{.Source}} {{end}}' "${id}")
  [[ "${mounts}" != *docker.sock* ]] || fail "container-exporter mounts the engine's socket: ${mounts}"
  # shellcheck disable=SC2016 # expanded by node
  answers=$(compose exec -T container-exporter node -e '
    const http = require("node:http");
    const ask = (method, path, body) => new Promise((done) => {
      const req = http.request({ socketPath: process.env.DOCKER_SOCKET, method, path, headers: { "Content-Type": "application/json" } },
        (res) => { res.resume(); res.on("end", () => done(`${method} ${path.replace(/\?.*/, "")} ${res.statusCode}`)); });
      req.on("error", (err) => done(`${method} ${path} ${err.code}`));
      req.end(body);
    });
    (async () => {
      const out = [];
      out.push(await ask("GET", "/containers/json"));
      out.push(await ask("GET", "/v1.41/info"));
      out.push(await ask("POST", "/containers/create", JSON.stringify({ Image: "scratch", HostConfig: { Privileged: true } })));
      out.push(await ask("POST", `/containers/${require("node:os").hostname()}/kill`));
      out.push(await ask("DELETE", `/containers/${require("node:os").hostname()}`));
      out.push(await ask("GET", "/images/json"));
      console.log(out.join("\n"));
    })();')
  assert_eq "GET /containers/json 200
GET /v1.41/info 200
POST /containers/create 403
POST /containers/$(docker inspect -f '{{.Config.Hostname}}' "${id}")/kill 403
DELETE /containers/$(docker inspect -f '{{.Config.Hostname}}' "${id}") 403
GET /images/json 403" "${answers}" "what the Docker API answers container-exporter"
}

# Every running service of the lab, as Docker runs it: no capability, no
# privilege to gain, a process limit, a read-only root (Grafana aside: no
# image here to find what it writes), and no process as root but
# docker-api-gate's (the engine's socket is root's).
test_e2e_01d_every_service_runs_hardened() {
  local id name caps opts read_only pids uids problems=""
  e2e_up
  for id in $(compose ps -q); do
    read -r name caps opts read_only pids < <(docker inspect -f \
      '{{index .Config.Labels "com.docker.compose.service"}} {{json .HostConfig.CapDrop}} {{json .HostConfig.SecurityOpt}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.PidsLimit}}' "${id}")
    [[ "${caps}" == '["ALL"]' ]] || problems+="${name}: cap_drop ${caps}; "
    [[ "${opts}" == *no-new-privileges* ]] || problems+="${name}: security_opt ${opts}; "
    [[ "${read_only}" == true || "${name}" == grafana ]] || problems+="${name}: root filesystem writable; "
    [[ "${pids}" =~ ^[1-9][0-9]*$ ]] || problems+="${name}: pids limit ${pids}; "
    uids=$(docker top "${id}" -eo pid,uid | awk 'NR > 1 { print $2 }' | sort -u | xargs)
    [[ " ${uids} " != *" 0 "* || "${name}" == docker-api-gate ]] || problems+="${name}: processes of uid ${uids}; "
  done
  assert_eq "" "${problems}" "services of the running lab that are not hardened"
}
