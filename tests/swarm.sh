# shellcheck shell=bash
# The lab on a Swarm of three machines, made on this one (scripts/swarm.sh
# practice up: Docker-in-Docker nodes), deployed as README shows it
# (scripts/swarm.sh deploy), checked from outside as a user would reach it
# (the HAProxy node's published ports), scenarios run on it (scripts/scenario.sh
# --swarm) and judged against the same scenarios on one host (the e2e group's
# lab), and torn down. On demand, not in the default run (about 14 minutes):
#   scripts/test.sh swarm
# The setup deploys once; each test reads the deployed lab, so any one runs
# alone (scripts/test.sh swarm PATTERN), the deploy included.
# shellcheck source=tests/e2e.sh
source "${LAB_ROOT}/tests/e2e.sh"
# ctrl_c and step_started.
# shellcheck source=tests/e2e-interrupt.sh
source "${LAB_ROOT}/tests/e2e-interrupt.sh"

readonly SWARM_NODES=3 SWARM_SLOW=2 SWARM_FAST=2
# The context scripts/swarm.sh practice up makes.
readonly SWARM_PRACTICE=haproxy-lab-practice
swarm_started=0

# swarm ARGS...: scripts/swarm.sh on the practice Swarm.
swarm() { SWARM_CONTEXT="${SWARM_PRACTICE}" "${LAB_ROOT}/scripts/swarm.sh" "$@"; }
# on_swarm ARGS...: docker on the practice Swarm's manager.
on_swarm() { docker --context "${SWARM_PRACTICE}" "$@"; }

swarm_setup() {
  swarm_started=1
  # The stack is the lab's own project (haproxy-lab_SERVICE below), also when
  # a group before this one in the same run set the test lab's (e2e_env).
  unset COMPOSE_PROJECT_NAME
  "${LAB_ROOT}/scripts/swarm.sh" practice down >/dev/null
  "${LAB_ROOT}/scripts/swarm.sh" practice up "${SWARM_NODES}" || return 1
  swarm deploy --scale "backend-slow=${SWARM_SLOW}" --scale "backend-fast=${SWARM_FAST}" || return 1
  SWARM_HAPROXY=$(on_swarm node inspect -f '{{.Status.Addr}}' node1)
}

swarm_teardown() {
  [[ ${swarm_started} -eq 1 ]] || return 0
  swarm_started=0
  "${LAB_ROOT}/scripts/swarm.sh" practice down >/dev/null || true
  # The one-host lab a test may have started: a test runs in a subshell, so
  # whether one did is asked of Docker.
  (e2e_env; compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1) || true
}

# tasks_on SERVICE: the nodes SERVICE's running tasks are on, sorted, one line.
tasks_on() {
  on_swarm service ps --filter desired-state=running --format '{{.Node}}' "haproxy-lab_$1" | sort -u | xargs
}

# listening_ports NODE: the tcp ports NODE's own network namespace listens
# on, loopback (127.0.0.0/8, ::1) left out, sorted (its /proc: the same in the official dind
# image and the stand-in).
listening_ports() {
  docker exec "$1" cat /proc/net/tcp /proc/net/tcp6 | awk '
    $4 == "0A" {
      split($2, a, ":"); ip = a[1]
      # Little-endian: 127.x.y.z ends in 7F (IPv4, or mapped in IPv6).
      loopback = (length(ip) == 8 || substr(ip, 1, 24) == "0000000000000000FFFF0000") && substr(ip, length(ip) - 1) == "7F"
      if (!loopback && ip != "00000000000000000000000001000000") print a[2]
    }' \
    | while read -r hex; do echo $((16#${hex})); done | sort -nu | xargs
}

# The practice nodes' engines answer on no address (each node runs
# privileged): besides Swarm's own ports (2377 on the manager, mutual TLS;
# 7946, its encrypted gossip) and the app's on HAProxy's node, nothing
# listens; no engine answers a container on the practice network; and the
# sockets this machine reaches them by are its user's alone.
test_swarm_00_practice_engines_answer_on_no_address() {
  local node sockets answers allowed practice_nodes=()
  # The folder of the manager's socket, which the context names.
  sockets=$(docker context inspect -f '{{.Endpoints.docker.Host}}' "${SWARM_PRACTICE}")
  sockets=$(dirname "$(dirname "${sockets#unix://}")")
  assert_eq 700 "$(stat -c %a "${sockets}")" "mode of ${sockets}, where the nodes' engines answer"
  allowed="2377|7946|$(env_value HAPROXY_HTTP_PORT)|$(env_value HAPROXY_HTTPS_PORT)"
  for node in $(docker ps --filter "label=${SWARM_PRACTICE}.node" --format '{{.Names}}' | sort); do
    assert_eq "" "$(listening_ports "${node}" | tr ' ' '\n' | grep -vxE "${allowed}" | xargs)" \
      "tcp ports ${node} listens on besides Swarm's (2377, 7946) and the app's (loopback aside)"
  done
  mapfile -t practice_nodes < <(docker ps --filter "label=${SWARM_PRACTICE}.node" --format '{{.Names}}')
  # shellcheck disable=SC2016 # expanded by node
  answers=$(docker run --rm --network "${SWARM_PRACTICE}" "$(env_value NODE_IMAGE)" node -e '
    const net = require("node:net");
    const tries = process.argv.slice(1).flatMap((host) => [2375, 2376].map((port) => new Promise((done) => {
      const socket = net.connect({ host, port, timeout: 3000 });
      socket.on("connect", () => { socket.destroy(); done(`${host}:${port} answers`); });
      socket.on("error", () => done(""));
      socket.on("timeout", () => { socket.destroy(); done(""); });
    })));
    Promise.all(tries).then((found) => console.log(found.filter(Boolean).join(" ")));' \
    "${practice_nodes[@]}")
  assert_eq "" "${answers}" "Docker engines answering a container on the practice network (tcp 2375, 2376)"
}

test_swarm_01_haproxy_runs_alone_on_its_node_the_backends_on_the_others() {
  local service
  for service in haproxy prometheus haproxy-exporter collector; do
    assert_eq "node1" "$(tasks_on "${service}")" "${service}'s node (the one labelled haproxy-lab.role=haproxy)"
  done
  assert_eq "node1" "$(on_swarm service ps --format '{{.Node}}' haproxy-lab_certs | sort -u | xargs)" "certs' node (it fills HAProxy's certificate volume)"
  for service in backend-slow backend-fast; do
    assert_eq "node2 node3" "$(tasks_on "${service}")" "${service}'s nodes (every node but HAProxy's, spread)"
  done
  assert_eq "node1 node2 node3" "$(tasks_on container-exporter)" "container-exporter's nodes (one per node)"
}

# stat_servers BACKEND: "name address" of BACKEND's servers UP, from
# HAProxy's "show stat" (its stats page is not published on a Swarm).
stat_servers() {
  stack_haproxy_api "show stat" \
    | awk -F, -v be="$1" 'NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
      $1 == be && $2 != "BACKEND" && $2 != "FRONTEND" && $col["status"] == "UP" { print $2, $col["addr"] }'
}

# servers_up_are BACKEND N: HAProxy has N servers of BACKEND UP.
servers_up_are() { [[ $(stat_servers "$1" | grep -c .) -eq $2 ]]; }

# task_addresses SERVICE: the overlay addresses of SERVICE's tasks, sorted.
task_addresses() {
  local id
  for id in $(on_swarm service ps -q --filter desired-state=running "haproxy-lab_$1"); do
    on_swarm inspect -f '{{range .NetworksAttachments}}{{range .Addresses}}{{.}} {{end}}{{end}}' "${id}"
  done | tr ' ' '\n' | sed -n 's|/.*||p' | sort | xargs
}

# From outside, HAProxy's node answers on the app's ports alone: its stats
# page and metrics, Prometheus and Grafana are not published (they would be
# on every address of the node), and the Grafana that runs lets anonymous
# visitors only view (no Grafana image here: its config, read from Swarm).
test_swarm_01b_only_the_apps_ports_answer_from_outside() {
  local port answered="" role
  for port in HAPROXY_HTTP_PORT HAPROXY_HTTPS_PORT HAPROXY_STATS_PORT HAPROXY_METRICS_PORT PROMETHEUS_PORT GRAFANA_PORT; do
    if (exec 3<>"/dev/tcp/${SWARM_HAPROXY}/$(env_value "${port}")") 2>/dev/null; then answered+="${port} "; fi
  done
  assert_eq "HAPROXY_HTTP_PORT HAPROXY_HTTPS_PORT" "$(xargs <<<"${answered}")" "ports of HAProxy's node that answer from outside"
  role=$(compose -f compose.yaml -f compose.swarm.yaml config --format json \
    | in_image NODE_IMAGE node -e 'console.log(JSON.parse(require("node:fs").readFileSync(0, "utf8")).services.grafana.environment.GF_AUTH_ANONYMOUS_ORG_ROLE)')
  assert_eq Viewer "${role}" "the role of Grafana's anonymous visitors on a Swarm"
}

test_swarm_02_haproxy_sees_every_backend_replica_on_every_node() {
  local backend service count want
  for backend in be_slow:backend-slow:${SWARM_SLOW} be_fast:backend-fast:${SWARM_FAST}; do
    IFS=: read -r backend service count <<<"${backend}"
    want=$(task_addresses "${service}")
    wait_for 30 "${backend}: ${count} servers UP" servers_up_are "${backend}" "${count}" || true
    assert_eq "${count}" "$(stat_servers "${backend}" | grep -c .)" "${backend}'s servers UP (server-template over dnsrr: one per replica)"
    assert_eq "${want}" "$(stat_servers "${backend}" | awk '{ sub(/:.*/, "", $2); print $2 }' | sort | xargs)" \
      "${backend}'s server addresses (the tasks' overlay addresses)"
  done
}

test_swarm_03_requests_through_haproxy_reach_replicas_on_every_worker() {
  local i replica seen="" task container node_id ids=() nodes=""
  local -A node_of=()
  for ((i = 0; i < 40; i++)); do
    replica=$(curl -fsS -m 5 -D - -o /dev/null "http://${SWARM_HAPROXY}:$(env_value HAPROXY_HTTP_PORT)/fast" \
      | tr -d '\r' | sed -n 's/^[Xx]-[Rr]eplica: //p')
    [[ -n "${replica}" ]] || fail "request ${i} through HAProxy: no X-Replica header"
    seen+="${replica}"$'\n'
  done
  # A replica is its container's hostname, the container id's first 12
  # characters; Swarm says which node runs each task's container.
  for task in $(on_swarm service ps -q --filter desired-state=running haproxy-lab_backend-fast); do
    read -r container node_id < <(on_swarm inspect -f '{{.Status.ContainerStatus.ContainerID}} {{.NodeID}}' "${task}")
    node_of[${container:0:12}]=$(on_swarm node inspect -f '{{.Description.Hostname}}' "${node_id}")
  done
  mapfile -t ids < <(sort -u <<<"${seen}" | grep .)
  for replica in "${ids[@]}"; do nodes+="${node_of[${replica}]:-not-a-task} "; done
  assert_eq "${SWARM_FAST}" "${#ids[@]}" "backend-fast replicas that answered 40 requests"
  assert_eq "node2 node3" "$(tr ' ' '\n' <<<"${nodes}" | sort -u | xargs)" "nodes whose replicas answered"
}

# prometheus_get PATH: Prometheus's answer, asked inside its container (a
# Swarm deploy publishes no admin port).
prometheus_get() {
  on_swarm exec "$(on_swarm ps -q --filter label=com.docker.swarm.service.name=haproxy-lab_prometheus | head -n 1)" \
    wget -q -T 5 -O - "http://127.0.0.1:9090$1"
}

# targets_all_up: every active target of Prometheus is up.
targets_all_up() {
  local targets
  targets=$(prometheus_get "/api/v1/targets?state=active") || return 1
  grep -q '"health":"up"' <<<"${targets}" && ! grep -Eq '"health":"(down|unknown)"' <<<"${targets}"
}

# scraped_everywhere: every target up, and DNS discovery has found every
# backend replica and every node's container-exporter (until its first
# refresh the jobs are missing, not down, so "all up" alone passes without them).
scraped_everywhere() {
  local up
  targets_all_up || return 1
  up=$(prometheus_get "/api/v1/query?query=$(urlencode 'sum by (job) (up)')") || return 1
  grep -q "\"job\":\"backend\"},\"value\":\[[0-9.]*,\"$((SWARM_SLOW + SWARM_FAST))\"\]" <<<"${up}" \
    && grep -q "\"job\":\"containers\"},\"value\":\[[0-9.]*,\"${SWARM_NODES}\"\]" <<<"${up}"
}

test_swarm_04_prometheus_scrapes_haproxy_and_the_backends_across_nodes() {
  local up
  wait_for 60 "Prometheus: every target up, on every node" scraped_everywhere || true
  up=$(prometheus_get "/api/v1/query?query=$(urlencode 'sum by (job) (up)')")
  assert_match '"job":"haproxy"\},"value":\[[0-9.]+,"1"\]' "${up}" "Prometheus: HAProxy's targets up (job haproxy)"
  assert_match '"job":"haproxy-exporter"\},"value":\[[0-9.]+,"1"\]' "${up}" "Prometheus: haproxy-exporter up"
  assert_match "\"job\":\"backend\"\\},\"value\":\\[[0-9.]+,\"$((SWARM_SLOW + SWARM_FAST))\"\\]" "${up}" \
    "Prometheus: every backend replica up, on both workers (job backend)"
  assert_match "\"job\":\"containers\"\\},\"value\":\\[[0-9.]+,\"${SWARM_NODES}\"\\]" "${up}" \
    "Prometheus: container-exporter up on every node (job containers)"
}

test_swarm_05_bad_input_one_line_nothing_changed() {
  assert_fails_with '^swarm: --scale needs SERVICE=N, e.g. --scale backend-slow=3$' swarm deploy --scale backend-slow
  assert_fails_with '^swarm: --scale grafana: the stack has no such service$' swarm deploy --without grafana --scale grafana=2
  assert_fails_with "^swarm: practice up takes a node count from 2 to 9, not '12'$" "${LAB_ROOT}/scripts/swarm.sh" practice up 12
  assert_fails_with "^swarm: a practice Swarm exists" "${LAB_ROOT}/scripts/swarm.sh" practice up 3
  assert_fails_with "^swarm: cannot reach the Docker engine of context 'no-such-context'" \
    env SWARM_CONTEXT=no-such-context "${LAB_ROOT}/scripts/swarm.sh" status
  assert_eq "${SWARM_SLOW}" "$(on_swarm service ps -q --filter desired-state=running haproxy-lab_backend-slow | grep -c .)" \
    "backend-slow's replicas after the refused deploys"
}

# swarm_run SCENARIO ARGS...: scripts/scenario.sh SCENARIO ARGS --swarm on
# the practice Swarm, its output shown; its run folder on stdout, or a failed
# test when it made none.
swarm_run() {
  local before run rc=0
  before=$(newest_run "$1")
  SWARM_CONTEXT="${SWARM_PRACTICE}" scripts/scenario.sh "$@" --swarm >&2 || rc=$?
  run=$(newest_run "$1")
  [[ "${run}" != "${before}" ]] || fail "scripts/scenario.sh $* --swarm made no run folder (exit ${rc})"
  assert_eq 0 "${rc}" "exit status of scripts/scenario.sh $* --swarm" >&2
  echo "${run}"
}

# one_host_run SCENARIO ARGS...: the same on one host, the e2e group's lab
# (its own project and ports, started here, left up for the next test, stopped
# by the teardown); its run folder on stdout.
one_host_run() {
  local before run rc=0
  (
    e2e_env
    e2e_up >&2
    before=$(newest_run "$1")
    scripts/scenario.sh "$@" >&2 || rc=$?
    run=$(newest_run "$1")
    [[ "${run}" != "${before}" ]] || fail "scripts/scenario.sh $* made no run folder on one host (exit ${rc})"
    echo "${run}"
  )
}

# judged_as_on_one_host SCENARIO ARGS...: the scenario on the Swarm and on
# one host: the same verdict for every step, the Swarm's load generators on
# the other nodes, every one of them running some
# (tests/e2e/checks/swarm-equals-one-host.test.mjs).
judged_as_on_one_host() {
  local on_swarm on_one_host haproxy service filters=()
  on_swarm=$(swarm_run "$@")
  on_one_host=$(one_host_run "$@")
  cat "${LAB_ROOT}/${on_swarm}/summary.csv"
  haproxy=$(on_swarm node inspect -f '{{.Description.Hostname}}' "$(on_swarm node ls -q --filter node.label=haproxy-lab.role=haproxy)")
  e2e_check swarm-equals-one-host E2E_RUN="${on_swarm}" E2E_ONE_HOST="${on_one_host}" E2E_HAPROXY_NODE="${haproxy}" \
    E2E_CLIENT_NODES="$(on_swarm node ls --format '{{.Hostname}}' | grep -vx "${haproxy}" | xargs)"
  assert_eq "backend-fast=${SWARM_FAST},backend-slow=${SWARM_SLOW}" "$(stack_scale)" "the backends' scale on the Swarm after the run"
  read_load_tools
  for service in "${E2E_LOAD_SERVICES[@]}"; do filters+=(--filter "name=haproxy-lab_${service}"); done
  assert_eq "" "$(on_swarm service ls -q "${filters[@]}")" "load generators left on the Swarm (${E2E_LOAD_SERVICES[*]})"
}

# stack_scale: the backends' replicas on the Swarm, "backend-fast=N,backend-slow=N".
stack_scale() {
  on_swarm service ls --filter label=com.docker.stack.namespace=haproxy-lab --format '{{.Name}} {{.Replicas}}' \
    | awk '$1 ~ /_backend-(fast|slow)$/ { sub(/^haproxy-lab_/, "", $1); split($2, r, "/"); print $1 "=" r[2] }' | sort | paste -sd, -
}

# Two load-generator replicas a step: Swarm spreads them over both workers.
test_swarm_06_maxconn_sweep_quick_judged_as_on_one_host() {
  judged_as_on_one_host maxconn-sweep --quick --replicas 2
}

test_swarm_07_connections_quick_judged_as_on_one_host() {
  judged_as_on_one_host connections --quick --replicas 2
}

# swarm_holding: step 2 of the Swarm run started and its holders run.
swarm_holding() {
  step_started 2 && on_swarm service ps --filter desired-state=running --format '{{.CurrentState}}' haproxy-lab_holder 2>/dev/null | grep -q '^Running'
}

# stack_haproxy_description: the description of the config HAProxy runs on
# the Swarm.
stack_haproxy_description() { stack_haproxy_api "show info" | sed -n 's/^description: //p'; }

# stack_haproxy_api COMMAND: COMMAND's answer from HAProxy's runtime API on
# the Swarm, asked inside its container (never published).
stack_haproxy_api() {
  local id api
  id=$(on_swarm ps -q --filter label=com.docker.swarm.service.name=haproxy-lab_haproxy | head -n 1)
  api=$(topology_value instance haproxy runtime_api)
  # shellcheck disable=SC2016 # expanded by the container's bash
  on_swarm exec -i "${id}" bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" && echo "$2" >&3 && cat <&3' _ "${api}" "$1"
}

# Ctrl-C while the holders hold on the Swarm: exit 130, the partial results
# kept and marked, the stopped holders' summaries among them (as a stopped
# holder writes its own on one host), and the stack as it was: no holder
# service, HAProxy on its baseline, the backends at their scale, nothing of
# the run left in the collector.
test_swarm_08_interrupt_puts_the_stack_back_and_keeps_partial_results() {
  local rc=0 run before tools description scale left
  before=$(newest_run connections)
  ctrl_c 240 swarm_holding -- env SWARM_CONTEXT="${SWARM_PRACTICE}" scripts/scenario.sh connections --quick --replicas 2 --swarm || rc=$?
  tools=$(on_swarm service ls -q --filter name=haproxy-lab_holder --filter name=haproxy-lab_limits)
  description=$(stack_haproxy_description)
  scale=$(stack_scale)
  run=$(newest_run connections)
  left=$(on_swarm exec "$(on_swarm ps -q --filter label=com.docker.swarm.service.name=haproxy-lab_collector | head -n 1)" \
    find /out -mindepth 1 -path "/out/${run#results/}*")
  assert_eq 130 "${rc}" "exit code after Ctrl-C on the Swarm"
  [[ "${run}" != "${before}" ]] || fail "no new connections run folder"
  assert_eq "" "${tools}" "load-tool services left on the Swarm"
  assert_eq baseline "${description}" "HAProxy's config on the Swarm after the interrupted run"
  assert_eq "backend-fast=${SWARM_FAST},backend-slow=${SWARM_SLOW}" "${scale}" "the backends' scale on the Swarm after the interrupted run"
  assert_eq "" "${left}" "the run's files left in the collector"
  compgen -G "${LAB_ROOT}/${run}/steps/02-*/holder-1.json" >/dev/null || fail "${run}/steps/02-*: the interrupted step's holder summaries are not kept"
  e2e_check interrupted E2E_RUN="${run}"
}
