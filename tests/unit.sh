# shellcheck shell=bash
# Unit tests, each in the lab image that runs the code: the backend with
# node:test, the load generator's entrypoint and shared k6 module with k6.

test_unit_backend_node_test() {
  in_image NODE_IMAGE node --test 'backend/test/**/*.test.mjs'
}

# loadgen ENV=VALUE...: run loadgen/run.sh closed.js in the k6 image, offline
# (no network: requests fail at once), summaries into $summaries. 3 s, as
# k6 samples the vus_max gauge once a second.
loadgen() {
  local args=() kv
  for kv in "$@"; do args+=(-e "${kv}"); done
  docker run --rm --network none --user "${LAB_UID}:${LAB_GID}" \
    -v "${LAB_ROOT}/loadgen:/loadgen:ro" -v "${summaries}:/results" \
    -e TARGET=http://127.0.0.1:9 -e DURATION=3s "${args[@]}" \
    --entrypoint /bin/sh "$(env_value K6_IMAGE)" /loadgen/run.sh /loadgen/closed.js
}

# vus_max FILE: the most VUs a replica ran, from its k6 summary.
vus_max() {
  in_image NODE_IMAGE node -e \
    'console.log(JSON.parse(require("fs").readFileSync(0)).metrics.vus_max.values.value)' <"$1"
}

test_unit_loadgen_replicas_split_one_test() {
  summaries=$(mktemp -d)
  loadgen LOADGEN_REPLICAS=3 LOADGEN_INDEX=1 VUS=7 LOADGEN_SUMMARY_DIR=t >/dev/null 2>&1
  loadgen LOADGEN_REPLICAS=3 LOADGEN_INDEX=2 VUS=7 LOADGEN_SUMMARY_DIR=t >/dev/null 2>&1
  loadgen LOADGEN_REPLICAS=3 LOADGEN_INDEX=3 VUS=7 LOADGEN_SUMMARY_DIR=t >/dev/null 2>&1
  local a b c
  a=$(vus_max "${summaries}/t/loadgen-1.json")
  b=$(vus_max "${summaries}/t/loadgen-2.json")
  c=$(vus_max "${summaries}/t/loadgen-3.json")
  echo "VUs per replica: ${a} ${b} ${c}"
  assert_eq 7 $((a + b + c)) "VUs of the three replicas together"
  rm -rf "${summaries}"
}

# histogram_counts FILE: "requests N, in the histogram N, bucket counters
# left N" from a replica's k6 summary.
histogram_counts() {
  in_image NODE_IMAGE node -e '
    const s = JSON.parse(require("fs").readFileSync(0));
    const inHistogram = Object.values(s.latency_histogram.counts).reduce((t, n) => t + n, 0);
    const left = Object.keys(s.metrics).filter((k) => k.startsWith("latency_doubling_")).length;
    console.log("requests " + s.metrics.http_reqs.values.count + ", in the histogram " + inHistogram + ", bucket counters left " + left);' <"$1"
}

# Every request a replica sent is in its latency histogram once (the report
# merges the replicas' histograms), and the bucket counters behind it are
# taken out of the summary.
test_unit_loadgen_histogram_counts_every_request() {
  summaries=$(mktemp -d)
  loadgen VUS=2 LOADGEN_SUMMARY_DIR=h >/dev/null 2>&1
  local got requests counted
  got=$(histogram_counts "${summaries}/h/loadgen-1.json")
  requests=$(grep -o '^requests [0-9]*' <<<"${got}" | cut -d' ' -f2)
  counted=$(grep -o 'in the histogram [0-9]*' <<<"${got}" | grep -o '[0-9]*$')
  echo "${got}"
  assert_ge 100 "${requests}" "requests sent in 3 s offline"
  assert_match ', bucket counters left 0$' "${got}" "k6's summary without its bucket counters"
  # A request a VU was in when the load stopped (gracefulStop 0s) is counted
  # by k6 but its iteration is cut before it reaches the histogram: at most
  # one per VU.
  assert_ge "$((requests - 2))" "${counted}" "requests in k6's latency histogram (of ${requests}, 2 VUs)"
  assert_ge "${counted}" "${requests}" "requests sent, at least those in the histogram"
  rm -rf "${summaries}"
}

test_unit_loadgen_bad_input_is_one_clear_error() {
  summaries=$(mktemp -d)
  assert_fails_with 'VUS must be a positive integer \(got \\?"abc\\?"\)' loadgen VUS=abc
  assert_fails_with 'DURATION must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, at least 1ms \(got \\?"1d\\?"\)' loadgen DURATION=1d
  assert_fails_with 'KEEPALIVE must be true or false \(got \\?"yes\\?"\)' loadgen KEEPALIVE=yes
  assert_fails_with 'LOADGEN_EXTRA_ARGS must not set --vus: the wrapper sets it itself \(from VUS: set that instead\)' \
    loadgen "LOADGEN_EXTRA_ARGS=--vus 5"
  assert_fails_with 'LOADGEN_EXTRA_ARGS must not set -u: the wrapper sets it itself \(from VUS: set that instead\)' \
    loadgen "LOADGEN_EXTRA_ARGS=--http-debug -u5"
  assert_fails_with "LOADGEN_REPLICAS must be a positive integer \(got 'x'\)" loadgen LOADGEN_REPLICAS=x
  assert_fails_with 'replica 3 of 2: scale loadgen to LOADGEN_REPLICAS' loadgen LOADGEN_REPLICAS=2 LOADGEN_INDEX=3
  rm -rf "${summaries}"
}

# k6_run_seconds FILE: how long the test of a replica's k6 summary ran, in seconds.
k6_run_seconds() {
  in_image NODE_IMAGE node -e \
    'console.log(JSON.parse(require("fs").readFileSync(0)).state.testRunDurationMs / 1000)' <"$1"
}

# k6 reads a duration as every load tool does: bare seconds (which k6 itself
# refuses) run as long as their Go spelling, and LOADGEN_EXTRA_ARGS reaches
# k6 run (--http-debug prints each request).
test_unit_loadgen_takes_bare_seconds_and_extra_flags() {
  local out ran
  summaries=$(mktemp -d)
  out=$(loadgen LOADGEN_SUMMARY_DIR=t DURATION=2 TIMEOUT=0.5 "LOADGEN_EXTRA_ARGS=--http-debug --user-agent lab-test" 2>&1) \
    || fail "k6 with DURATION=2 and LOADGEN_EXTRA_ARGS failed: ${out}"
  ran=$(k6_run_seconds "${summaries}/t/loadgen-1.json")
  echo "DURATION=2: the test ran ${ran} s"
  awk -v s="${ran}" 'BEGIN { exit !(s >= 2 && s < 3) }' || fail "DURATION=2: expected a test of 2 s, found ${ran} s"
  assert_match 'User-Agent: lab-test' "${out}" "k6's --http-debug output with LOADGEN_EXTRA_ARGS"
  rm -rf "${summaries}"
}

# The module every load tool reads its knobs with (loadgen/lib/values.mjs),
# under node: durations, KEEPALIVE, a tool's extra flags.
test_unit_load_values_node_test() {
  in_image NODE_IMAGE node --test 'loadgen/lib/test/**/*.test.mjs'
}

# The same tables (durations, KEEPALIVE, extra flags) in k6's own
# JavaScript runtime, which the k6 scripts read their knobs in
# (loadgen/lib/test/values.k6.js): one module, read alike by both runtimes.
test_unit_k6_reads_values_as_node_does() {
  local out
  out=$(docker run --rm --network none -v "${LAB_ROOT}/loadgen:/loadgen:ro" --entrypoint k6 "$(env_value K6_IMAGE)" \
    run --quiet --summary-mode=disabled --log-format raw /loadgen/lib/test/values.k6.js 2>&1) || fail "k6 read the table apart from node: ${out}"
  echo "${out}"
  assert_match 'k6 reads all [0-9]+ cases as node does' "${out}" "k6's reading of loadgen/lib/test/cases.mjs"
}

test_unit_histogram_node_test() {
  in_image NODE_IMAGE node --test 'loadgen/lib/test/**/*.test.mjs'
}

test_unit_wrapper_node_test() {
  in_image NODE_IMAGE node --test 'loadgen/wrapper/test/**/*.test.mjs'
}

# Each load tool's own tests (loadgen/TOOL/test, for the tools that have
# them) in the image its compose service runs, built by compose when absent:
# the real tool runs in them (vegeta attacks a local server through
# loadgen/vegeta/attack.mjs, h2load through loadgen/h2load/run.mjs), so
# nothing may be skipped. The tools are the engine's table's (cli.mjs tools).
test_unit_load_tools_own_tests_in_their_images() {
  local rows images row tool service profile image out ran=()
  rows=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs tools)
  # "SERVICE IMAGE" of every service (compose config --images lists a
  # service's dependencies' too).
  # shellcheck disable=SC2016 # a JavaScript template, not a shell expansion
  images=$(compose --profile '*' config --format json | in_image NODE_IMAGE node -e '
    const services = JSON.parse(require("fs").readFileSync(0, "utf8")).services;
    for (const [name, s] of Object.entries(services)) console.log(`${name} ${s.image}`);')
  while read -r row; do
    read -r tool service profile <<<"${row}"
    [[ -d "${LAB_ROOT}/loadgen/${tool}/test" ]] || continue
    image=$(awk -v s="${service}" '$1 == s { print $2 }' <<<"${images}")
    [[ -n "${image}" ]] || fail "${tool}: compose config has no image for its service ${service}"
    docker image inspect "${image}" >/dev/null 2>&1 || compose --profile "${profile}" build -q "${service}" </dev/null
    out=$(docker run --rm --network none -v "${LAB_ROOT}:/lab:ro" -w /lab "${image}" \
      node --test --test-reporter=spec "loadgen/${tool}/test/**/*.test.mjs" </dev/null 2>&1) \
      || { echo "${out}"; fail "${tool}: node --test loadgen/${tool}/test in ${image} (the ${service} service's image) failed (above)"; }
    echo "${tool} in ${image}:"
    tail -n 8 <<<"${out}"
    assert_match $'(^|\n)ℹ skipped 0(\n|$)' "${out}" "node --test loadgen/${tool}/test in ${image}, the real ${tool} included"
    ran+=("${tool}")
  done <<<"${rows}"
  echo "ran the own tests of: ${ran[*]}"
  assert_ge 1 "${#ran[@]}" "load tools with tests of their own (loadgen/TOOL/test)"
}

test_unit_certificates_node_test() {
  in_image NODE_IMAGE node --test 'tls/test/**/*.test.mjs'
}

# The container exporter's CPU allowance (--cpus, quota, cpuset, else the
# machine's cores) and one scrape against a fake Docker engine.
test_unit_container_exporter_node_test() {
  in_image NODE_IMAGE node --test 'prometheus/test/**/*.test.mjs'
}

# on_cgroup_layouts LAYOUT PROGRAM: the lines of PROGRAM (scripts/probes/) for the
# containers aaa bbb ccc ddd eee and gone (no folder: stopped), joined by
# ';', on a cgroup tree the function LAYOUT writes under the root it is given:
# aaa v1 cgroupfs, bbb v1 systemd, ccc v2 systemd, ddd v2 cgroupfs, eee v1
# under an engine's --cgroup-parent (a practice Swarm node's).
on_cgroup_layouts() {
  local root out
  root=$(mktemp -d)
  "$1" "${root}"
  out=$(sh "${LAB_ROOT}/scripts/probes/$2" "${root}" aaa bbb ccc ddd eee gone | paste -sd';' -)
  rm -rf "${root}"
  echo "${out}"
}

# The runner's CPU reader on the cgroup layouts Docker makes: v1 (cgroupfs
# and systemd drivers, cpuacct alone or with cpu) in ns, v2 in us; a
# container with no folder (stopped) gives no line.
cpu_layout() {
  mkdir -p "$1/cpuacct/docker/aaa" "$1/cpu,cpuacct/system.slice/docker-bbb.scope" "$1/system.slice/docker-ccc.scope" "$1/docker/ddd"
  echo 1500 >"$1/cpuacct/docker/aaa/cpuacct.usage"
  echo 2500 >"$1/cpu,cpuacct/system.slice/docker-bbb.scope/cpuacct.usage"
  printf 'usage_usec 7\nuser_usec 5\n' >"$1/system.slice/docker-ccc.scope/cpu.stat"
  printf 'usage_usec 9\n' >"$1/docker/ddd/cpu.stat"
  mkdir -p "$1/cpuacct/haproxy-lab-practice-node1/eee" "$1/cpu/haproxy-lab-practice-node1/eee"
  echo 4200 >"$1/cpuacct/haproxy-lab-practice-node1/eee/cpuacct.usage"
  printf 'nr_periods 10\nnr_throttled 3\n' >"$1/cpu/haproxy-lab-practice-node1/eee/cpu.stat"
}
test_unit_cgroup_cpu_reads_v1_and_v2_layouts() {
  assert_eq "aaa 1500 ns;bbb 2500 ns;ccc 7 us;ddd 9 us;eee 4200 ns;eee 10 periods;eee 3 throttled" "$(on_cgroup_layouts cpu_layout cgroup-cpu.sh)" "cgroup readings by layout"
}

# The runner's memory reader, docker stats' figure: usage less inactive file
# pages (v1's total_ one, not the cgroup's own inactive_file).
memory_layout() {
  mkdir -p "$1/memory/docker/aaa" "$1/memory/system.slice/docker-bbb.scope" "$1/system.slice/docker-ccc.scope" "$1/docker/ddd"
  echo 10000 >"$1/memory/docker/aaa/memory.usage_in_bytes"
  printf 'cache 5000\ninactive_file 100\ntotal_inactive_file 3000\n' >"$1/memory/docker/aaa/memory.stat"
  echo 8000 >"$1/memory/system.slice/docker-bbb.scope/memory.usage_in_bytes"
  printf 'total_inactive_file 9000\n' >"$1/memory/system.slice/docker-bbb.scope/memory.stat"
  echo 7000 >"$1/system.slice/docker-ccc.scope/memory.current"
  printf 'anon 5000\ninactive_file 2500\n' >"$1/system.slice/docker-ccc.scope/memory.stat"
  echo 600 >"$1/docker/ddd/memory.current"
  printf 'inactive_file 0\n' >"$1/docker/ddd/memory.stat"
  mkdir -p "$1/memory/haproxy-lab-practice-node1/eee"
  echo 5000 >"$1/memory/haproxy-lab-practice-node1/eee/memory.usage_in_bytes"
  printf 'total_inactive_file 1000\n' >"$1/memory/haproxy-lab-practice-node1/eee/memory.stat"
}
test_unit_cgroup_memory_reads_v1_and_v2_layouts() {
  assert_eq "aaa 7000;bbb 8000;ccc 4500;ddd 600;eee 4000" "$(on_cgroup_layouts memory_layout cgroup-memory.sh)" \
    "memory readings by layout (usage less inactive file pages)"
}

# The CPU quota a container's cgroup enforces (a ceiling step's allowance, read
# back): v1's cfs_quota_us and period, v2's cpu.max ("max" = no quota).
quota_layout() {
  mkdir -p "$1/cpu/docker/aaa" "$1/cpu,cpuacct/system.slice/docker-bbb.scope" "$1/system.slice/docker-ccc.scope" "$1/docker/ddd"
  echo 20000 >"$1/cpu/docker/aaa/cpu.cfs_quota_us"
  echo 100000 >"$1/cpu/docker/aaa/cpu.cfs_period_us"
  echo -1 >"$1/cpu,cpuacct/system.slice/docker-bbb.scope/cpu.cfs_quota_us"
  echo 100000 >"$1/cpu,cpuacct/system.slice/docker-bbb.scope/cpu.cfs_period_us"
  echo '50000 100000' >"$1/system.slice/docker-ccc.scope/cpu.max"
  echo 'max 100000' >"$1/docker/ddd/cpu.max"
  mkdir -p "$1/cpu/haproxy-lab-practice-node1/eee"
  echo 30000 >"$1/cpu/haproxy-lab-practice-node1/eee/cpu.cfs_quota_us"
  echo 100000 >"$1/cpu/haproxy-lab-practice-node1/eee/cpu.cfs_period_us"
}
test_unit_cgroup_quota_reads_v1_and_v2_layouts() {
  assert_eq "aaa 20000 100000;bbb -1 100000;ccc 50000 100000;ddd -1 100000;eee 30000 100000" "$(on_cgroup_layouts quota_layout cgroup-quota.sh)" \
    "cgroup CPU quotas by layout"
}

# HAProxy as N processes: the runner reads the engine's expansion of the
# table (cli.mjs topology), one instance per process, for the process count
# compose sees; a run reads its plan's own.
test_unit_topology_processes_from_the_engine() {
  assert_eq "haproxy haproxy-p2 haproxy-p3" "$(HAPROXY_PROCESSES=3 haproxy_instances | paste -sd' ' -)" "instances"
  assert_eq "haproxy" "$(HAPROXY_PROCESSES=3 haproxy_containers | paste -sd' ' -)" "containers"
  assert_eq "127.0.0.1:10198" "$(HAPROXY_PROCESSES=3 topology_value instance haproxy-p3 master_cli)" "process 3's master CLI"
  assert_eq "haproxy haproxy-p2 haproxy-p3" "$(HAPROXY_PROCESSES=3 container_processes haproxy | paste -sd' ' -)" "the processes of the container"
  assert_eq "haproxy" "$(HAPROXY_PROCESSES=1 haproxy_instances | paste -sd' ' -)" "one process: the lab as before"
  local run
  run=$(mktemp -d)
  printf 'instance planned service=haproxy runtime_api=127.0.0.1:1 master_cli=127.0.0.1:2 # as planned\n' >"${run}/topology.txt"
  assert_eq "planned" "$(LAB_RUN_DIR="${run}" HAPROXY_PROCESSES=3 haproxy_instances)" "in a run: its plan's table, whatever compose says"
  rm -rf "${run}"
  assert_fails_with "HAPROXY_PROCESSES must be a whole number from 1, found 'two'" bash -c 'source scripts/lib/common.sh; HAPROXY_PROCESSES=two topology_text'
}

test_unit_scenario_engine_node_test() {
  in_image NODE_IMAGE node --test 'scripts/labctl/test/**/*.test.mjs'
}

# The runner's bad input: one line on stderr, non-zero exit, nothing written.
test_unit_scenario_bad_input_is_one_clear_error() {
  local before after
  # What these inputs could write: a folder per scenario, maxconn-sweep's runs.
  # (On a fresh clone neither exists yet: ls fails, the listing is empty.)
  results_listing() { ls "${LAB_ROOT}/results" "${LAB_ROOT}/results/maxconn-sweep" 2>/dev/null || true; }
  before=$(results_listing)
  assert_fails_with '^scenario: unknown scenario "nope": try one of .*maxconn-sweep' scripts/scenario.sh nope
  assert_fails_with '^scenario: unknown option "--fast"' scripts/scenario.sh maxconn-sweep --fast
  assert_fails_with '^scenario: --duration needs a whole number from 1 to 3600 \(got "ten"\)$' \
    scripts/scenario.sh maxconn-sweep --duration ten
  assert_fails_with '^scenario: --replicas needs a whole number from 1 to 64 \(got "0"\)$' \
    scripts/scenario.sh maxconn-sweep --replicas 0
  assert_fails_with '^scenario: --versus needs an image, e\.g\. haproxy:2\.8, or "previous" \(got "Bad Image"\)$' \
    scripts/scenario.sh tls-cost --versus 'Bad Image'
  assert_fails_with '^scenario: unknown option "--versus": use --quick, --tls, ' \
    scripts/scenario.sh connections --versus previous
  assert_fails_with "^scenario: the lab is not running \(no haproxy\): start it with scripts/up\.sh$" \
    env COMPOSE_PROJECT_NAME=haproxy-lab-absent scripts/scenario.sh maxconn-sweep --quick
  assert_fails_with '^scenario: cannot reach the Docker engine' \
    env DOCKER_HOST=unix:///nonexistent.sock scripts/scenario.sh maxconn-sweep
  after=$(results_listing)
  assert_eq "${before}" "${after}" "results/ and results/maxconn-sweep/ after bad input"
}

# scripts/step-cost.sh: bad input and a lab that is not running are one line
# each, and leave no results/step-cost folder behind.
test_unit_step_cost_bad_input_is_one_line_and_keeps_nothing() {
  local before out rc=0
  before=$(ls "${LAB_ROOT}/results/step-cost" 2>/dev/null || true)
  assert_fails_with '^scenario: unknown scenario "nope": try one of .*maxconn-sweep' scripts/step-cost.sh nope
  assert_fails_with '^scenario: --duration needs a whole number from 1 to 3600 \(got "ten"\)$' \
    scripts/step-cost.sh maxconn-sweep --duration ten
  assert_fails_with "^step-cost: --swarm: step-cost times this host's docker calls" scripts/step-cost.sh maxconn-sweep --quick --swarm
  # The scenario's own line (its output is shown and kept as it runs).
  out=$(COMPOSE_PROJECT_NAME=haproxy-lab-absent scripts/step-cost.sh maxconn-sweep --quick 2>&1) || rc=$?
  assert_eq 1 "${rc}" "step-cost's exit status with no lab"
  assert_match "scenario: the lab is not running \(no haproxy\): start it with scripts/up\.sh" "${out}" "its output with no lab"
  assert_eq "${before}" "$(ls "${LAB_ROOT}/results/step-cost" 2>/dev/null || true)" "results/step-cost after bad input"
}

# Below the Compose floor the runner and the suite stop before anything
# starts, naming the version found and the floor (a docker on PATH that
# answers "compose version" as Compose 2.20.2 would, the rest passed on).
test_unit_compose_below_the_floor_stops_runner_and_suite() {
  local bin real
  bin=$(mktemp -d)
  real=$(command -v docker)
  cat >"${bin}/docker" <<FAKE
#!/usr/bin/env bash
if [[ "\$*" == *"compose version"* ]]; then
  if [[ "\$*" == *--short* ]]; then echo 2.20.2; else echo "Docker Compose version v2.20.2"; fi
  exit 0
fi
exec "${real}" "\$@"
FAKE
  chmod +x "${bin}/docker"
  assert_fails_with "^scenario: Docker Compose 2\.20\.2 is older than ${COMPOSE_FLOOR//./\\.}, the oldest the lab supports: install a newer Compose v2 plugin" \
    env PATH="${bin}:${PATH}" scripts/scenario.sh maxconn-sweep --quick
  assert_fails_with "^test: Docker Compose 2\.20\.2 is older than ${COMPOSE_FLOOR//./\\.}" \
    env PATH="${bin}:${PATH}" scripts/test.sh static
  rm -rf "${bin}"
}

# More open files than Docker may give a container: asked in the environment,
# the runner stops before it writes anything, with the limit and the fix
# (from .env alone it lowers them: every run on a capped dockerd shows it).
test_unit_nofile_above_dockers_limit_stops_the_runner() {
  assert_fails_with "^scenario: HAPROXY_NOFILE=1073741816 is more open files than Docker may give a container here \(at most [0-9]+, dockerd's own limit\): export HAPROXY_NOFILE=[0-9]+" \
    env HAPROXY_NOFILE=1073741816 scripts/scenario.sh maxconn-sweep --quick
}

# Ctrl-C reaches the runner while it expands a command's second command
# substitution: bash 5.2.15 then fails to parse the runner's trap
# ("interrupt trap: unexpected EOF while looking for matching `)'") and exits
# 2 with the Ctrl-C lost, about one interrupt in two in this loop. So the
# runner works in a process group of its own while the shell that holds the
# traps only waits (supervise): every interrupt must end in 130, with the
# runner's group gone.
test_unit_scenario_ctrl_c_during_command_substitutions_exits_130() {
  local marker attempt pid rc codes=""
  marker="haproxy-lab-supervise-$$"
  for ((attempt = 1; attempt <= 12; attempt++)); do
    set -m
    # shellcheck disable=SC2016 # expanded by the inner bash
    "${AS_FROM_A_TERMINAL[@]}" bash -c '
      source scripts/scenario.sh
      cleanup() { local rc=$?; stop_runner; exit "${rc}"; }
      two_substitutions() { local words; while :; do words="$(sleep 0.01; echo a) $(echo "$1")"; done; }
      catch_signals
      supervise two_substitutions "$1"' _ "${marker}" 2>/dev/null &
    pid=$!
    sleep "0.$((RANDOM % 5 + 2))"
    kill -INT "${pid}"
    rc=0
    wait "${pid}" || rc=$?
    set +m
    codes+="${rc} "
  done
  assert_eq "$(printf '130 %.0s' $(seq 1 12))" "${codes}" "exit status of 12 interrupted runs"
  sleep 0.2
  assert_eq "" "$(pgrep -f "${marker}" || true)" "runner processes left after the interrupts"
}

# A run whose verdict failed (exit 3) still puts HAProxy back on the baseline,
# restarting it when a step's listening sockets differed (run.env
# baseline_switch), and reads its sockets back. The cleanup runs in the EXIT
# trap, where a bare "return" returns the script's exit status, which would
# fail every check and leave the step's config running. Docker and the node
# image are stubbed: the calls the cleanup makes are the result.
test_unit_scenario_cleanup_after_a_failed_verdict_restores_the_baseline() {
  local dir rc=0 err
  dir=$(mktemp -d)
  printf '%s\n' scenario=t steps=1 preflight=none 'load_services=loadgen holder' 'load_profiles=load hold' baseline_switch=restart >"${dir}/run.env"
  # The run's topology as its plan writes it (labctl is faked below).
  in_image NODE_IMAGE node scripts/labctl/cli.mjs topology --processes 1 >"${dir}/topology.txt"
  # shellcheck disable=SC2016 # expanded by the inner bash
  err=$(RUN_DIR="${dir}" bash -c '
    source scripts/scenario.sh
    compose() {
      echo "compose $*" >>"${RUN_DIR}/calls"
      [[ "$*" != "ps -a -q haproxy" ]] || echo c0ffee
    }
    labctl() { echo "labctl $*" >>"${RUN_DIR}/calls"; }
    haproxy_info() { echo baseline; }
    docker() {
      echo "docker $*" >>"${RUN_DIR}/calls"
      [[ "$*" != *-ltn* ]] || echo "LISTEN 0 5000 0.0.0.0:$(frontend_ports | head -n 1) 0.0.0.0:*"
    }
    run_dir="${RUN_DIR}" run_accepted=1 lab_touched=1 original_scale=""
    read_run_env
    trap cleanup EXIT
    exit 3' 2>&1 >/dev/null) || rc=$?
  assert_eq 3 "${rc}" "exit status of the run (a failed verdict)"
  assert_eq "" "${err}" "what the cleanup said on stderr"
  grep -q '^docker start c0ffee$' "${dir}/calls" || fail "no HAProxy restart in the cleanup's calls: $(cat "${dir}/calls")"
  # Every load tool run.env names is stopped, whichever the steps used.
  grep -q '^compose --profile load --profile hold rm -sf loadgen holder$' "${dir}/calls" \
    || fail "the cleanup did not stop every load tool: $(grep ' rm ' "${dir}/calls" || echo 'no rm call')"
  [[ -s "${dir}/baseline-restored/haproxy-listen-sockets.txt" ]] || fail "the baseline's sockets were not read back"
  rm -rf "${dir}"
}

# A step's load environment reaches its tool as the planner wrote it (a
# value of several words too) through the file the runner writes
# (load_env_file, use_load_env), and a variable of the runner's shell that
# the step does not set reaches no tool: compose config shows what each
# container would get.
test_unit_a_steps_load_env_reaches_the_tool_and_the_shell_does_not() {
  local dir config got
  dir=$(mktemp -d)
  # shellcheck disable=SC2016 # expanded by the inner bash
  config=$(DIR="${dir}" TIMEOUT=from-the-shell RATE=from-the-shell CONNECTIONS=from-the-shell bash -c '
    source scripts/scenario.sh
    lines=$(printf "%s\n" VUS=20 "LOADGEN_EXTRA_ARGS=--http-debug --user-agent lab-test" LOADGEN_SCRIPT=/loadgen/open.js)
    ( use_load_env "${DIR}" "${lines}" && compose --profile load --profile hold config --format json )')
  # shellcheck disable=SC2016 # JavaScript's template strings
  got=$(in_image NODE_IMAGE node -e '
    const s = JSON.parse(require("fs").readFileSync(0)).services;
    const pick = (e, n) => n.map((k) => `${k}=${e[k] ?? "(unset)"}`).join(" ");
    console.log(`loadgen: ${pick(s.loadgen.environment, ["VUS", "LOADGEN_EXTRA_ARGS", "TIMEOUT", "RATE"])} command ${s.loadgen.command.join(" ")}`);
    console.log(`holder: ${pick(s.holder.environment, ["VUS", "CONNECTIONS"])}`);' <<<"${config}")
  echo "${got}"
  assert_eq "loadgen: VUS=20 LOADGEN_EXTRA_ARGS=--http-debug --user-agent lab-test TIMEOUT=(unset) RATE=(unset) command /loadgen/open.js
holder: VUS=20 CONNECTIONS=(unset)" "${got}" "the tools' environment (TIMEOUT, RATE and CONNECTIONS set in the runner's shell only)"
  assert_eq "VUS='20'
LOADGEN_EXTRA_ARGS='--http-debug --user-agent lab-test'
LOADGEN_SCRIPT='/loadgen/open.js'" "$(cat "${dir}/load.env")" "the step's load.env"
  rm -rf "${dir}"
}

# The sysctl a step sets for its tool (the variable step.env's load_sysctl
# names) is dropped, with a note, when the clients' kernel lacks it; kept when
# it has it; a tool without one gets its load lines as written.
test_unit_a_steps_sysctl_is_dropped_where_the_kernel_lacks_it() {
  local dir out
  dir=$(mktemp -d)
  printf '%s\n' load_sysctl=LOADGEN_SYSCTL load.VUS=2 load.LOADGEN_SYSCTL=net.ipv4.no_such_setting=1 >"${dir}/step.env"
  # shellcheck disable=SC2016 # expanded by the inner bash
  out=$(DIR="${dir}" bash -c 'source scripts/scenario.sh; step_load_env "${DIR}"' 2>/dev/null)
  assert_eq "VUS=2" "${out}" "a sysctl the kernel lacks, dropped"
  assert_match 'has no net\.ipv4\.no_such_setting: this step ran without' "$(cat "${dir}/notes.txt")" "the note"
  printf '%s\n' load_sysctl=LOADGEN_SYSCTL load.VUS=2 load.LOADGEN_SYSCTL=net.ipv4.tcp_syn_retries=6 >"${dir}/step.env"
  # shellcheck disable=SC2016 # expanded by the inner bash
  out=$(DIR="${dir}" bash -c 'source scripts/scenario.sh; step_load_env "${DIR}"' 2>/dev/null | paste -sd' ' -)
  assert_eq "VUS=2 LOADGEN_SYSCTL=net.ipv4.tcp_syn_retries=6" "${out}" "a sysctl the kernel has, kept"
  printf '%s\n' load_sysctl= load.RATE=5 load.LOADGEN_SYSCTL=net.ipv4.no_such_setting=1 >"${dir}/step.env"
  # shellcheck disable=SC2016 # expanded by the inner bash
  out=$(DIR="${dir}" bash -c 'source scripts/scenario.sh; step_load_env "${DIR}"' 2>/dev/null | paste -sd' ' -)
  assert_eq "RATE=5 LOADGEN_SYSCTL=net.ipv4.no_such_setting=1" "${out}" "a tool with no sysctl variable: its lines as written"
  rm -rf "${dir}"
}

# The runner reads what the planner writes: a real plan's run.env, read by
# scripts/scenario.sh's read_env, and its step.env, read by file_value and
# file_prefixed, give the step's values, its load environment (the runner's
# own variables included) and its compose settings.
test_unit_runner_reads_the_planners_step_folders() {
  local out="results/.unit-plan-$$" values tools services profiles sized
  labctl_plan() {
    docker run --rm --network none --user "${LAB_UID}:${LAB_GID}" -v "${LAB_ROOT}:/lab" -w /lab \
      "$(env_value NODE_IMAGE)" node scripts/labctl/cli.mjs plan "$@"
  }
  labctl_plan backend-timeout --quick --out "${out}"
  # shellcheck disable=SC2016 # expanded by the inner bash
  values=$(OUT="${LAB_ROOT}/${out}" bash -c '
    source scripts/scenario.sh
    run_dir="${OUT}"
    read_run_env
    echo "run: ${run_steps} steps, preflight ${run_preflight}, services ${run_load_services}, ${profile_args[*]}, sized ${run_sized_services}"
    step=$(step_dir 1)
    echo "step: $(step_value "${step}" index)/$(step_value "${step}" total) $(step_value "${step}" id) $(step_value "${step}" service)" \
      "$(step_value "${step}" profile) x$(step_value "${step}" replicas) $(step_value "${step}" seconds)s"
    file_prefixed "${step}/step.env" load | sed "s/^/load: /" | grep -E "^load: (RATE|TESTID|LOADGEN_SCRIPT|LOADGEN_REPLICAS)="
    file_prefixed "${step}/step.env" compose | sed "s/^/compose: /"')
  # Every load tool of the engine's table (cli.mjs tools), whichever the steps
  # use; the sized ones as run.env names them (scripts/labctl/test/runfolder.test.mjs).
  tools=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs tools)
  services=$(awk '{ print $2 }' <<<"${tools}" | paste -sd' ' -)
  profiles=$(awk '{ print "--profile " $3 }' <<<"${tools}" | paste -sd' ' -)
  sized=$(sed -n 's/^sized_services=//p' "${LAB_ROOT}/${out}/run.env")
  rm -rf "${LAB_ROOT:?}/${out}"
  echo "${values}"
  assert_eq "run: 2 steps, preflight none, services ${services}, ${profiles}, sized ${sized}" \
    "$(sed -n 1p <<<"${values}")" "run.env as the runner reads it"
  assert_match '^step: 1/2 backend-timeout-2s loadgen load x1 [0-9.]+s$' "$(sed -n 2p <<<"${values}")" "step 1's step.env"
  assert_match "load: TESTID=backend-timeout-\\.unit-plan-[0-9]+-backend-timeout-2s" "${values}" "the step's test id"
  assert_match 'load: LOADGEN_SCRIPT=/loadgen/open.js' "${values}" "the k6 script"
  assert_match 'compose: BACKEND_SERVER_TIMEOUT_MS=2000' "${values}" "the step's compose setting"
}

# The connection preflight's limits come from each side's own container: the
# holder's open files from a holder container (not from backend-slow's),
# every HAProxy instance's and the first backend's from theirs. Compose and
# Docker are stubbed, each container answering its own limit.
test_unit_collect_limits_reads_each_services_own_container() {
  local limits
  # shellcheck disable=SC2016 # expanded by the inner bash
  limits=$(bash -c '
    source scripts/lib/common.sh
    compose() {
      case "$*" in
        "exec -T haproxy sh -c ulimit -n") echo 3333 ;;
        "exec -T backend-slow sh -c ulimit -n") echo 1111 ;;
        *"run --rm --no-deps -T --entrypoint sh holder -c ulimit -n") echo 2222 ;;
        "ps -a -q haproxy" | "ps -q backend-slow") echo c0ffee ;;
        "ps -q --status running backend-slow") echo c0ffee ;;
        *"config --format json") printf "{\n \"services\": {\n  \"holder\": {\n   \"deploy\": {\n    \"resources\": {\n     \"limits\": {\n      \"memory\": \"1073741824\"\n     }\n    }\n   }\n  }\n }\n}\n" ;;
        "exec -T haproxy cat /proc/sys/net/ipv4/ip_local_port_range") printf "1024\t65535\n" ;;
      esac
    }
    docker() {
      case "$1" in
        run) echo "1048576 262144 10 1 24000000000" ;;
        inspect) echo 2147483648 ;;
      esac
    }
    collect_limits holder --profile load --profile hold')
  echo "${limits}"
  assert_match $'(^|\n)holder_nofile=2222(\n|$)' "${limits}" "the holder's open files, from a holder container"
  assert_match $'(^|\n)backend_nofile=1111(\n|$)' "${limits}" "the backend's, from backend-slow's"
  assert_match $'(^|\n)haproxy_nofile=3333(\n|$)' "${limits}" "HAProxy's, from its instance's container"
  assert_match $'(^|\n)holder_memory_bytes=1073741824(\n|$)' "${limits}" "the holder's own memory limit"
  assert_match $'(^|\n)port_range=1024 65535(\n|$)' "${limits}" "HAProxy's port range"
}

test_unit_scenario_list_and_help() {
  local out
  out=$(scripts/scenario.sh list)
  echo "${out}"
  for name in maxconn-sweep fullconn tuning throughput; do
    grep -q "^  ${name} " <<<"${out}" || fail "list lacks ${name}"
  done
  out=$(scripts/scenario.sh maxconn-sweep --help)
  grep -q '^  maxconn-100 .*maxconn 100' <<<"${out}" || fail "--help lacks the steps: ${out}"
  grep -q -- '--quick' <<<"${out}" || fail "--help lacks the options"
}

test_unit_dashboard_linter_catches_a_bad_dashboard() {
  local out rc=0
  out=$(in_image NODE_IMAGE node tests/lib/dashboards.mjs tests/fixtures/bad-dashboard.json) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "linter exit code on a bad dashboard"
  # shellcheck disable=SC2016 # a literal $__rate_interval, Grafana's variable
  for expected in 'no description' 'no unit' 'is not a provisioned one' 'should use \[\$__rate_interval\]' \
    'id 1 used twice' 'overlaps panel' 'no queries' 'target A: no legendFormat'; do
    grep -q "${expected}" <<<"${out}" || fail "linter did not report: ${expected}"
  done
}

# The dashboard and provisioning as a user first opened them in Grafana
# (shared/evidence): each defect they saw is one the linter reports.
test_unit_dashboard_linter_catches_the_defects_users_saw() {
  local out rc=0 before=tests/fixtures/dashboard-before-issue-9 defect expected
  out=$(in_image NODE_IMAGE node tests/lib/dashboards.mjs --provisioning "${before}/provisioning" \
    "${before}/haproxy-lab.json") || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "linter exit code on the dashboard users saw"
  while IFS='|' read -r defect expected; do
    grep -qE "${expected}" <<<"${out}" || fail "linter did not catch '${defect}': no line matching /${expected}/"
  done <<'DEFECTS'
Grafana refuses to provision it|title "HAProxy lab" is the name of its provisioning folder
the sweep shows one bar|Sweep: hits and failures per step": 2 table queries but no merge transformation
the sweep legend reads Value #A|Sweep: hits and failures per step" target A: its values are shown as "Value #A"
maxconn drawn in req/s|Hits/sec against maxconn" target D: "maxconn" counts connections but is drawn in unit "reqps"
bytes per connection over a tiny count|Bytes per connection" target B: divides by clamp_min\(lab:backend_open_connections:sum, 1\)
template slots listed|Server sessions vs server limit" target A: lists every server-template slot
DEFECTS
}

# schema_check DASHBOARD...: tests/schema/check-dashboards.mjs in the lab's
# node image, its npm packages (@grafana/schema, typescript; lockfile pinned)
# installed into the container, npm's download cache kept in a volume.
# The host's CA bundle is trusted too, for hosts whose registry traffic
# passes a TLS-inspecting proxy (as this project's CI machines do).
schema_check() {
  local ca="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" ca_args=()
  [[ -r "${ca}" ]] && ca_args=(-v "${ca}:/etc/host-ca.crt:ro" -e NODE_EXTRA_CA_CERTS=/etc/host-ca.crt)
  docker run --rm -v "${LAB_ROOT}:/lab:ro" -v haproxy-lab-npm-cache:/root/.npm -w /tmp "${ca_args[@]}" \
    "$(env_value NODE_IMAGE)" sh -c '
      cp /lab/tests/schema/package.json /lab/tests/schema/package-lock.json /lab/tests/schema/.npmrc \
        /lab/tests/schema/check-dashboards.mjs /tmp/ &&
      npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
      cd /lab && node /tmp/check-dashboards.mjs "$@"' _ "$@"
}

# Grafana's own published dashboard schema (@grafana/schema at the pinned
# Grafana line) accepts every provisioned dashboard...
test_unit_dashboards_match_grafana_schema() {
  local files
  mapfile -t files < <(cd "${LAB_ROOT}" && ls grafana/dashboards/*.json)
  schema_check "${files[@]}"
}

# ...and refuses fields it does not know or of the wrong type.
test_unit_grafana_schema_check_catches_a_bad_dashboard() {
  local out rc=0 expected
  out=$(schema_check tests/fixtures/bad-schema-dashboard.json) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "schema check exit code on a bad dashboard"
  for expected in 'dashboard: refreshh: Object literal may only specify known properties' \
    'panel "Hits/sec against maxconn": gridPoss: Object literal may only specify known properties' \
    "options.legend.showLegend: Type 'string' is not assignable to type 'boolean'" \
    "target A: targets\[0\].instant: Type 'string' is not assignable"; do
    grep -q "${expected}" <<<"${out}" || fail "schema check did not report: ${expected}"
  done
}

# env_value (scripts/lib/env.sh) reads the env files as Compose reads them
# for the services, so both act on the same value: quotes stripped, an
# unquoted value's " #" comment dropped, blanks and "export" trimmed, the
# last file winning, the environment over every file.
test_unit_env_value_reads_env_files_as_compose_does() {
  local dir found="" name
  dir=$(mktemp -d)
  printf '%s\n' '# a comment line: HAPROXY_MEMORY=9g' 'HAPROXY_MEMORY="2g"' "HAPROXY_CPUSET='0-1'" \
    'BACKEND_MEMORY=512m # each replica' 'SLOW_MS="3000 # kept" # dropped' '  export NOFILE = 4096  ' \
    'LOADGEN_SYSCTL=net.ipv4.tcp_syn_retries=6#no blank: kept' $'SHUTDOWN_DRAIN_MS=3000\r' 'GRAFANA_PORT=3000' 'GRAFANA_PORT=3001' >"${dir}/a.env"
  echo 'HAPROXY_MEMORY="4g" # offline' >"${dir}/b.env"
  # shellcheck disable=SC2016 # expanded by the inner bash
  for name in HAPROXY_MEMORY HAPROXY_CPUSET BACKEND_MEMORY SLOW_MS NOFILE LOADGEN_SYSCTL SHUTDOWN_DRAIN_MS GRAFANA_PORT; do
    found+="${name}=$(env -u "${name}" COMPOSE_ENV_FILES="${dir}/a.env" bash -c 'source scripts/lib/common.sh && env_value "$1"' _ "${name}");"
  done
  assert_eq "HAPROXY_MEMORY=2g;HAPROXY_CPUSET=0-1;BACKEND_MEMORY=512m;SLOW_MS=3000 # kept;NOFILE=4096;LOADGEN_SYSCTL=net.ipv4.tcp_syn_retries=6#no blank: kept;SHUTDOWN_DRAIN_MS=3000;GRAFANA_PORT=3001;" \
    "${found}" "values env_value reads"
  assert_eq 4g "$(env -u HAPROXY_MEMORY COMPOSE_ENV_FILES="${dir}/a.env,${dir}/b.env" bash -c 'source scripts/lib/common.sh && env_value HAPROXY_MEMORY')" "the last file's value"
  assert_eq 8g "$(HAPROXY_MEMORY=8g COMPOSE_ENV_FILES="${dir}/a.env" bash -c 'source scripts/lib/common.sh && env_value HAPROXY_MEMORY')" "the environment's value"
  rm -rf "${dir}"
}
