# shellcheck shell=bash
# The Compose floor as a contract: every form of "docker compose" the lab's
# scripts run and its documents show a user (tests/lib/compose-forms.mjs
# finds them) is made on the newest plugin, the user's "docker compose", and
# on the floor's (COMPOSE_FLOOR, in FLOOR_DOCKER_CONFIG: .ci/run installs it),
# through the lab's own helpers, and what the lab reads from each must be the
# same on both. The stack's start (up --wait, the healthchecks, the
# certificates' one-shot job) is checked on the floor. Its own compose project
# and ports, so a running lab and an e2e session are left alone.

floor_started=0
floor_dir=""
# The version each side reports (floor_setup).
floor_newest_version=""
floor_floor_version=""

# The files whose compose calls are contract: the lab's scripts and what its
# documents tell a user to run (the tests' own calls are not).
readonly FLOOR_SCANNED=(scripts/*.sh scripts/lib/*.sh README.md docs/*.md lessons/*.md compose.yaml)

# FLOOR_CASES (global: scripts/test.sh sources this file in a function): every
# form the scan finds, and the ones it cannot (FLOOR_UNSCANNED), with the case
# that makes it, "GROUP FUNCTION": the GROUP's test runs FUNCTION on each
# plugin (floor_agree). A function may make several forms.
declare -gA FLOOR_CASES=(
  ['version']="read floor_case_version"
  ['version --short']="read floor_case_version"
  ['config']="read floor_case_config"
  ['config -q']="read floor_case_config"
  ['config --services']="read floor_case_config"
  ['--profile config --services']="read floor_case_config"
  ['--profile config --images']="read floor_case_config"
  ['config --format=json']="read floor_case_config_json"
  ['--profile -f config --format=json']="read floor_case_config_json"
  ['ps --format=json']="read floor_case_ps"
  ['ps --format={{.Service}}']="read floor_case_ps"
  ['ps --format={{.Service}} --status']="read floor_case_ps"
  ['ps -q']="read floor_case_ps"
  ['ps -a -q']="read floor_case_ps"
  ['ps --no-trunc -q']="read floor_case_ps"
  ['ps --status -q']="read floor_case_ps"
  ['exec -T']="read floor_case_exec"
  ['exec']="read floor_case_exec"
  ['run --entrypoint --no-deps --rm -T']="read floor_case_exec"
  ['cp']="read floor_case_cp"
  ['--profile pull --ignore-buildable']="read floor_case_images"
  ['--profile build']="read floor_case_images"
  ['--profile build -q']="read floor_case_images"
  ['up --wait -d']="change floor_case_up"
  ['up -d']="change floor_case_up"
  ['up --no-recreate --wait -d']="change floor_case_scale"
  ['up --scale --wait -d']="change floor_case_scale"
  ['up --scale -d']="change floor_case_scale"
  ['exec --index -T']="change floor_case_scale"
  ['up --force-recreate --no-deps --wait --wait-timeout -d']="change floor_case_recreate"
  ['kill -s']="change floor_case_reload"
  ['restart']="change floor_case_restart"
  ['--profile up --no-deps --scale -d']="load floor_case_tool_step"
  ['--profile ps --no-trunc -a -q']="load floor_case_tool_step"
  ['--profile ps --format={{.ExitCode}} -a']="load floor_case_tool_step"
  ['--profile rm -f -s']="load floor_case_tool_step"
  ['rm -f -s']="load floor_case_tool_step"
  ['--profile up --no-deps --scale']="load floor_case_tool_attached"
  ['--profile run --rm']="load floor_case_one_off"
  ['--profile run --rm -e']="load floor_case_tool_by_hand"
  ['--profile down --remove-orphans -v']="down floor_case_down"
)
# Forms the lab makes that the scan cannot see, their flags built at run time
# (instance_compose_args: "--index N SERVICE" for an instance that says index=).
readonly FLOOR_UNSCANNED=('exec --index -T')
# The groups of cases, each run by one test below.
readonly FLOOR_GROUPS=(read change load down)

# floor_env: the floor group's own compose project and host ports, and a
# backend's stop shortened (a scale-down waits for its drain: not Compose's).
floor_env() {
  export COMPOSE_PROJECT_NAME=haproxy-lab-floor
  export HAPROXY_HTTP_PORT=28080 HAPROXY_HTTPS_PORT=28443 HAPROXY_STATS_PORT=28404 HAPROXY_METRICS_PORT=28405
  export PROMETHEUS_PORT=29090 GRAFANA_PORT=23000
  export SHUTDOWN_DRAIN_MS=0 SHUTDOWN_GRACE_MS=1000 BACKEND_HEALTH_INTERVAL=1s
  # The helpers' compose path, not a run's shortcuts by Docker's labels.
  LAB_PROJECT="" LAB_CACHE_DIR=""
}

# on_plugin newest|floor COMMAND...: COMMAND with that plugin as "docker compose".
on_plugin() {
  local side="$1"
  shift
  (
    # shellcheck disable=SC2030 # this call's plugin only: the subshell is the point
    if [[ "${side}" == floor ]]; then export DOCKER_CONFIG="${FLOOR_DOCKER_CONFIG}"; fi
    "$@"
  )
}

floor_setup() {
  floor_env
  floor_floor_version=$(on_plugin floor compose_version)
  if [[ "${floor_floor_version}" != "${COMPOSE_FLOOR}" ]]; then
    echo "floor: no Compose ${COMPOSE_FLOOR} (the lab's floor, COMPOSE_FLOOR) in ${FLOOR_DOCKER_CONFIG}/cli-plugins (found: ${floor_floor_version:-none}): .ci/run installs it there (Debian trixie's docker-compose package), or set FLOOR_DOCKER_CONFIG to the DOCKER_CONFIG that has it" >&2
    return 1
  fi
  floor_newest_version=$(on_plugin newest compose_version)
  if [[ "${floor_newest_version}" == "${floor_floor_version}" ]]; then
    echo "floor: 'docker compose' is the floor itself (${floor_newest_version}): the contract compares a newer Compose with the floor; install the newest as docker compose (~/.docker/cli-plugins)" >&2
    return 1
  fi
  floor_started=1
  floor_dir=$(mktemp -d)
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  ports_free floor || return 1
  log "floor: Compose ${floor_newest_version} (docker compose) against the floor ${floor_floor_version} (${FLOOR_DOCKER_CONFIG})"
}

floor_teardown() {
  [[ ${floor_started} -eq 1 ]] || return 0
  floor_started=0
  log "floor: tearing down"
  remove_instance_probes >/dev/null 2>&1 || true
  compose --profile '*' down -v --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  remove_probes
  rm -rf "${floor_dir}"
}

# floor_libs: the runner's libraries, in the test's own shell (each test runs
# in a subshell): sourced with this file, lab-state.sh's readonly names would
# break the other groups' tests that source the runner in theirs.
floor_libs() {
  # shellcheck source=scripts/lib/lab-state.sh
  source "${LAB_ROOT}/scripts/lib/lab-state.sh"
  # shellcheck source=scripts/lib/step-load.sh
  source "${LAB_ROOT}/scripts/lib/step-load.sh"
}

# floor_quiet ARGS...: compose ARGS, its progress shown only when it fails.
floor_quiet() {
  local out
  out=$(compose "$@" 2>&1) || { tail -n 20 <<<"${out}" >&2; return 1; }
}

# floor_up: the lab's services running and healthy at scale 1, none recreated
# (the two plugins hash some services' config differently: each would
# recreate what the other made), no load tool left. The tests' own start.
floor_up() {
  floor_quiet --profile hold rm -sf holder
  # shellcheck disable=SC2046 # one service per word
  floor_quiet up -d --wait --wait-timeout 120 --no-recreate --scale backend-slow=1 --scale backend-fast=1 $(lab_services)
}

# --- the scan -----------------------------------------------------------------

# floor_scan [--stdin NAME]: "FORM<TAB>FILE:LINE" of every compose call of the
# scanned files (or of the text on stdin, read as NAME).
floor_scan() {
  if [[ $# -gt 0 ]]; then
    in_image NODE_IMAGE node tests/lib/compose-forms.mjs "$@"
  else
    in_image NODE_IMAGE node tests/lib/compose-forms.mjs "${FLOOR_SCANNED[@]}"
  fi
}

# floor_uncovered: one line per scanned form no case makes (the first place
# it is written, and how to add its case) and per case whose form is gone;
# reads floor_scan's lines on stdin.
floor_uncovered() {
  local form where
  declare -A seen=()
  while IFS=$'\t' read -r form where; do
    [[ -z "${seen[${form}]:-}" ]] || continue
    seen[${form}]=1
    [[ -n "${FLOOR_CASES[${form}]:-}" ]] \
      || echo "'${form}' (${where}) has no contract case: add a floor_case_* function to tests/floor.sh that makes it through the lab's helper and prints what the lab reads from it, and ['${form}']=\"GROUP floor_case_...\" to FLOOR_CASES (GROUP: one of ${FLOOR_GROUPS[*]})"
  done
  for form in "${!FLOOR_CASES[@]}"; do
    [[ -n "${seen[${form}]:-}" || " ${FLOOR_UNSCANNED[*]} " == *" ${form} "* ]] \
      || echo "'${form}' has a case (${FLOOR_CASES[${form}]#* }) but no script or document makes it any more: remove it from FLOOR_CASES"
  done
}

# --- the comparison -----------------------------------------------------------

# floor_agree GROUP: every case of GROUP (FLOOR_CASES) run on the floor's
# plugin (which started the stack: test 04), then all of them on the newest
# (one switch of plugin: see floor_up), in name order; each case must
# succeed, print something, and print the same on both. Reports every case
# that does not, then fails.
floor_agree() {
  local group="$1" fn side rc failures=0 out start
  local fns=()
  mapfile -t fns < <(floor_group_cases "${group}")
  [[ ${#fns[@]} -gt 0 ]] || fail "no case in group ${group}"
  declare -A took=()
  for side in floor newest; do
    for fn in "${fns[@]}"; do
      out="${floor_dir}/${fn}.${side}" start=${SECONDS}
      set +e
      on_plugin "${side}" floor_case "${fn}" </dev/null >"${out}" 2>"${out}.err"
      rc=$?
      set -e
      took[${fn}]+="${took[${fn}]:+ + }$((SECONDS - start))s"
      if [[ ${rc} -ne 0 || ! -s "${out}" ]]; then
        echo "FAIL: ${fn} ($(floor_forms_of "${group}" "${fn}")) on the ${side} plugin ($(floor_version_of "${side}")): exit ${rc}, $(wc -l <"${out}") lines; its output:"
        sed 's/^/    /' "${out}" "${out}.err" | tail -n 20
        failures=$((failures + 1))
        : >"${out}.failed"
      fi
    done
  done
  for fn in "${fns[@]}"; do
    [[ ! -e "${floor_dir}/${fn}.newest.failed" && ! -e "${floor_dir}/${fn}.floor.failed" ]] || continue
    if cmp -s "${floor_dir}/${fn}.newest" "${floor_dir}/${fn}.floor"; then
      echo "same on both (${took[${fn}]}): ${fn} ($(floor_forms_of "${group}" "${fn}")): $(paste -sd'|' "${floor_dir}/${fn}.floor" | cut -c1-160)"
    else
      echo "FAIL: ${fn} ($(floor_forms_of "${group}" "${fn}")): the lab reads different things from the two plugins; expected (< the newest, ${floor_newest_version}) and found (> the floor, ${floor_floor_version}):"
      diff "${floor_dir}/${fn}.newest" "${floor_dir}/${fn}.floor" | sed 's/^/    /' | head -n 20
      failures=$((failures + 1))
    fi
  done
  [[ ${failures} -eq 0 ]] || fail "${failures} ${group} case(s) failed or differ between Compose ${floor_newest_version} and the floor ${floor_floor_version} (above)"
}

# floor_group_cases GROUP: the case functions of GROUP, sorted.
floor_group_cases() {
  local form
  for form in "${!FLOOR_CASES[@]}"; do
    [[ "${FLOOR_CASES[${form}]%% *}" != "$1" ]] || echo "${FLOOR_CASES[${form}]#* }"
  done | sort -u
}

# floor_forms_of GROUP FUNCTION: the forms FUNCTION makes, quoted.
floor_forms_of() {
  local form
  for form in "${!FLOOR_CASES[@]}"; do
    [[ "${FLOOR_CASES[${form}]}" != "$1 $2" ]] || echo "'${form}'"
  done | sort | paste -sd' ' -
}

# floor_version_of newest|floor: the version that side reported.
floor_version_of() { if [[ "$1" == floor ]]; then echo "${floor_floor_version}"; else echo "${floor_newest_version}"; fi; }

# floor_case FUNCTION: FUNCTION with errexit on (a failing step fails the case).
floor_case() { (set -euo pipefail; "$1"); }

# floor_side: "newest" or "floor", the plugin this case runs on.
# shellcheck disable=SC2031 # set by on_plugin for the case this runs in
floor_side() { if [[ "${DOCKER_CONFIG:-}" == "${FLOOR_DOCKER_CONFIG}" ]]; then echo floor; else echo newest; fi; }

# --- the cases: each prints what the lab reads from its forms -----------------

# version, version --short: require_docker's check and the version the lab
# and the doctor read (its value differs by design: test 01 checks it).
floor_case_version() {
  local version doctor
  require_docker
  version=$(compose_version)
  assert_match '^[0-9]+\.[0-9]+\.[0-9]+$' "${version}" "compose_version"
  echo "compose_version: MAJOR.MINOR.PATCH"
  version_at_least "${version}" "${COMPOSE_FLOOR}" || fail "${version} is below the floor"
  echo "at least the floor ${COMPOSE_FLOOR}"
  # scripts/doctor.sh check_compose's reading of "docker compose version".
  doctor=$(docker compose version 2>&1 | sed -n 's/.*[Vv]ersion v\{0,1\}\([0-9][0-9.]*\).*/\1/p' | head -n 1)
  assert_eq "${version}" "${doctor}" "the doctor's reading of docker compose version"
  echo "the doctor reads the same version"
}

# config (compose_project), config -q (scripts/doctor.sh), config --services
# (scripts/up.sh), the optional services (scripts/lesson.sh baseline), the
# images of every profile (scripts/images.sh lab_images, swarm.sh load_images).
floor_case_config() {
  local quiet
  echo "project: $(compose_project)"
  quiet=$(compose config -q 2>&1)
  echo "config -q: exit 0, '${quiet}'"
  echo "up.sh starts: $(compose config --services | grep -vx grafana | sort | xargs)"
  echo "optional: $(comm -13 <(compose config --services | sort) <(compose --profile '*' config --services | sort) | xargs)"
  echo "images: $(compose --profile '*' config --images | sort -u | xargs)"
}

# config --format json: memory_limits (the doctor, the preflight); with -f
# compose.swarm.yaml, the stack scripts/swarm.sh deploys and a Swarm step's
# load tool (scripts/lib/engine-swarm.sh swarm_start_tool), both made by labctl stack.
floor_case_config_json() {
  local swarm=(-f "${LAB_ROOT}/compose.yaml" -f "${LAB_ROOT}/compose.swarm.yaml")
  memory_limits
  memory_limits --profile hold | sed 's/^/hold profile: /'
  compose "${swarm[@]}" config --format json | labctl stack --host-root "${LAB_ROOT}" | cksum | sed 's/^/stack file: /'
  # A file of the lab stands in for the run's CA (labctl reads it).
  compose "${swarm[@]}" --profile hold config --format json \
    | labctl stack --host-root "${LAB_ROOT}" --tool holder --replicas 2 --collector http://collector:7070 \
      --collector-token 0123456789abcdef0123456789abcdef --file "/certs/ca.crt=${LAB_ROOT}/README.md" | cksum | sed 's/^/holder stack file: /'
}

# Each ps form, read as the lab reads it.
floor_case_ps() {
  local id
  # scripts/doctor.sh lab_ports: the host ports the project publishes.
  echo "ports: $(compose ps --format json 2>/dev/null | grep -o '"PublishedPort":[0-9]*' | sed 's/.*://' | sort -u | xargs)"
  echo "scale: $(backend_scale)"
  # scripts/scenario.sh require_stack.
  echo "running: $(compose ps --status running --format '{{.Service}}' | sort | xargs)"
  id=$(instance_container haproxy)
  echo "instance_container haproxy: $(docker inspect -f '{{.Name}}' "${id}")"
  echo "service_log certs: $(service_log "" certs | wc -l) lines"
  # collect_limits: the first backend's container.
  echo "backend memory: $(docker inspect -f '{{.HostConfig.Memory}}' "$(compose ps -q backend-slow | head -n 1)")"
  echo "running_containers: $(running_containers | awk '{ print $2 }' | sort | xargs)"
  # scripts/lib/step-load.sh annotate: is Grafana running (never here).
  echo "grafana running: '$(compose ps -q --status running grafana)'"
}

# exec -T (service_exec, instance_exec, service_nofile's running branch),
# exec without -T (docs/how-it-works.md: the master CLI by hand), run --rm -T
# (service_nofile's one-off branch).
floor_case_exec() {
  local cli
  echo "instance_exec: $(instance_exec haproxy cat /proc/sys/net/core/somaxconn)"
  echo "service_exec with stdin: $(echo through | service_exec backend-slow cat)"
  echo "service_nofile running: $(service_nofile backend-slow)"
  cli=$(topology_value instance haproxy master_cli)
  # shellcheck disable=SC2016 # expanded by the container's bash
  compose exec haproxy bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}"; echo "show proc; quit" >&3; cat <&3' _ "${cli}" \
    | awk '$2 == "master" { m = 1 } $2 == "worker" { w = 1 } END { print "master CLI: " (m ? "a master" : "no master") ", " (w ? "workers" : "no worker") }'
  echo "service_nofile one-off: $(service_nofile holder --profile hold)"
}

# cp: the CA a user copies out (README, docs/results.md), as in the container.
floor_case_cp() {
  local dir
  dir="${floor_dir}/cp-$(floor_side)"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  compose cp haproxy:/etc/haproxy-certs/ca.crt "${dir}/" 2>/dev/null
  head -n 1 "${dir}/ca.crt"
  assert_eq "$(instance_exec haproxy cat /etc/haproxy-certs/ca.crt | cksum)" "$(cksum <"${dir}/ca.crt")" "the copied CA's checksum against the container's"
  echo "the same file as in HAProxy's container"
}

# pull --ignore-buildable (scripts/images.sh) on what compose builds (a
# registry is needed for the rest); build, planned with --dry-run (offline,
# the Dockerfiles' packages cannot be fetched): the image it would tag.
floor_case_images() {
  local quiet
  compose --profile '*' pull --ignore-buildable vegeta h2load netprobe 2>&1 | sed -n 's/^ *\([a-z0-9-]*\) *Skipped.*/\1 skipped by pull/p' | sort
  compose --dry-run --profile attack build vegeta 2>&1 | sed -n 's/.*naming to \([^ ]*\).*/build would tag \1/p' | sort -u
  quiet=$(compose --dry-run --profile tools build -q netprobe 2>/dev/null)
  echo "build -q: exit 0, '${quiet}'"
}

# up -d --wait (recreate_services, scripts/up.sh), up -d (a user's): on a lab
# this plugin started (the first recreate_services: the two plugins hash some
# services' config differently, each recreates what the other made), nothing
# recreated.
floor_case_up() {
  local before
  recreate_services >/dev/null 2>&1
  before=$(instance_container haproxy)
  recreate_services >/dev/null 2>&1
  # shellcheck disable=SC2046 # one service per word
  compose up -d $(lab_services) >/dev/null 2>&1
  assert_eq "${before}" "$(instance_container haproxy)" "HAProxy's container after up on the lab this plugin started"
  echo "HAProxy kept"
  echo "scale: $(backend_scale)"
}

# up --no-recreate --wait --scale (scale_services), up --wait --scale
# (recreate_services, docs/how-it-works.md), up -d --scale (compose.yaml's
# head), and exec --index (instance_exec of a numbered container).
floor_case_scale() {
  local second
  scale_services --scale backend-slow=2 >/dev/null 2>&1
  echo "scale_services: $(backend_scale)"
  wait_for 30 "2 be_slow servers UP" servers_up "$(topology_value backend backend-slow proxy)" 2
  echo "HAProxy sees 2 be_slow servers UP"
  second=$(floor_numbered backend-slow 2)
  assert_eq "$(docker inspect -f '{{.Config.Hostname}}' "${second}")" "$(compose exec -T --index 2 backend-slow hostname)" "the host name exec --index 2 answers"
  echo "exec --index 2: the second container"
  recreate_services --scale backend-slow=2 >/dev/null 2>&1
  echo "recreate_services: $(backend_scale)"
  # shellcheck disable=SC2046 # one service per word
  compose up -d --scale backend-slow=1 $(lab_services) >/dev/null 2>&1
  echo "up -d --scale: $(backend_scale)"
}

# floor_numbered SERVICE N: the id of SERVICE's container number N.
floor_numbered() {
  local id
  for id in $(compose ps -q "$1"); do
    [[ "$(docker inspect -f '{{index .Config.Labels "com.docker.compose.container-number"}}' "${id}")" != "$2" ]] || echo "${id}"
  done
}

# up --force-recreate --no-deps --wait (haproxy_on_baseline; its trigger, a
# config other than the baseline, stood in for).
floor_case_recreate() {
  local before
  before=$(instance_container haproxy)
  # shellcheck disable=SC2317,SC2329 # called by haproxy_on_baseline
  description_is() { return 1; }
  haproxy_on_baseline >/dev/null
  unset -f description_is
  [[ "$(instance_container haproxy)" != "${before}" ]] || fail "HAProxy's container is the same after haproxy_on_baseline"
  echo "HAProxy recreated"
  docker inspect -f '{{.State.Health.Status}}' "$(instance_container haproxy)"
  echo "description: $(haproxy_info description)"
}

# kill -s USR2: a hitless reload, counted by the master.
floor_case_reload() {
  local before
  read -r before _ < <(haproxy_reloads)
  compose kill -s USR2 haproxy >/dev/null 2>&1
  # shellcheck disable=SC2317,SC2329 # called by wait_for
  reloaded() { [[ "$(haproxy_reloads | awk '{ print $1 }')" -gt "${before}" ]]; }
  wait_for 20 "HAProxy's reload" reloaded
  echo "reloads: +1, failed: $(haproxy_reloads | awk '{ print $2 }')"
}

# restart (docs/how-it-works.md): a new HAProxy process, on the baseline.
floor_case_restart() {
  local started
  started=$(docker inspect -f '{{.State.StartedAt}}' "$(instance_container haproxy)")
  compose restart haproxy >/dev/null 2>&1
  [[ "$(docker inspect -f '{{.State.StartedAt}}' "$(instance_container haproxy)")" != "${started}" ]] || fail "HAProxy's start time unchanged by restart"
  echo "HAProxy restarted"
  wait_for 30 "HAProxy healthy" floor_healthy haproxy
  echo "healthy again"
  echo "description: $(haproxy_info description)"
}

# floor_healthy SERVICE: SERVICE's container is healthy.
floor_healthy() { [[ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$1")")" == healthy ]]; }

# A step's load tool on one host (scripts/lib/step-load.sh): its replicas
# started, listed, their exit codes, their log and their removal (as a
# lesson's baseline removes the load tools); then the runner's
# stop_load_tools on running ones.
floor_case_tool_step() {
  local dir profile_args=(--profile hold)
  dir="${floor_dir}/step-$(floor_side)"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  printf '%s\n' profile=hold service=holder replicas=2 >"${dir}/step.env"
  start_tool "${dir}" "$(printf '%s\n' CONNECTIONS=2 RAMP_UP=0 HOLD=0 RAMP_DOWN=0 HOLD_PATH=/fast HOLDER_REPLICAS=2)"
  echo "tool_ids: $(onehost_tool_ids "${dir}" | wc -l)"
  wait_tool_ended "${dir}"
  echo "tool_exit_codes: $(tool_exit_codes "${dir}")"
  tool_finished "${dir}"
  [[ -s "${dir}/holder-log.txt" ]] || fail "tool_finished kept no holder log"
  echo "holder log kept"
  echo "after tool_finished: $(onehost_tool_ids "${dir}" | wc -l)"
  start_tool "${dir}" "$(printf '%s\n' CONNECTIONS=1 RAMP_UP=0 HOLD=30 HOLD_PATH=/fast HOLDER_REPLICAS=2)"
  echo "running again: $(onehost_tool_ids "${dir}" | wc -l)"
  # scripts/scenario.sh stop_load_tools: its profiles, then rm -sf.
  compose "${profile_args[@]}" rm -sf holder >/dev/null 2>&1
  echo "after rm -sf: $(onehost_tool_ids "${dir}" | wc -l)"
}

# up --no-deps --scale, attached (docs/how-it-works.md): runs until the
# replicas end, their knobs from a file LOAD_ENV_FILE names.
floor_case_tool_attached() {
  local knobs
  knobs="${floor_dir}/attached-$(floor_side).env"
  printf '%s\n' CONNECTIONS=1 RAMP_UP=0 HOLD=0 RAMP_DOWN=0 HOLD_PATH=/fast HOLDER_REPLICAS=2 >"${knobs}"
  LOAD_ENV_FILE="${knobs}" compose --profile hold up --no-deps --scale holder=2 holder >/dev/null 2>&1
  echo "attached up ended, exit codes: $(compose --profile hold ps -a --format '{{.ExitCode}}' holder | paste -sd, -)"
  compose --profile hold rm -sf holder >/dev/null 2>&1
}

# run --rm -e of a load tool, as a user runs one by hand (docs/how-it-works.md,
# "Load"): its knobs from -e alone, the holder's summary where they put it.
floor_case_tool_by_hand() {
  local dir
  dir="floor-by-hand-$(floor_side)"
  rm -rf "${LAB_ROOT}/results/${dir}"
  compose --profile hold run --rm -e CONNECTIONS=2 -e RAMP_UP=0 -e HOLD=0 -e RAMP_DOWN=0 -e HOLD_PATH=/fast \
    -e LOADGEN_SUMMARY_DIR="${dir}" holder >/dev/null 2>&1
  echo "by hand: $(compgen -G "${LAB_ROOT}/results/${dir}/holder-*.json" | sed 's|.*/||' | paste -sd' ' -)"
  rm -rf "${LAB_ROOT}/results/${dir}"
}

# run --rm of a profile's one-shot service: netprobe (ss in HAProxy's
# namespace), read as the e2e's fe_main_backlog reads it.
floor_case_one_off() {
  local port
  port=$(topology_value frontend fe_main port)
  compose --profile tools run --rm netprobe 2>/dev/null | awk -v p=":${port}\$" '$4 ~ p { print "fe_main backlog: " $3 }'
}

# down -v --remove-orphans of every profile (README): nothing of the project
# left. (Before it, 2.26 has made every volume of the project, 2.40 only
# the ones the started services mount: not compared.)
floor_case_down() {
  floor_quiet --profile '*' down -v --remove-orphans --timeout 5
  floor_quiet up -d --no-deps prometheus backend-fast
  echo "before: $(docker ps -aq --filter "label=com.docker.compose.project=${COMPOSE_PROJECT_NAME}" | wc -l) containers"
  compose --profile '*' down -v --remove-orphans >/dev/null 2>&1
  echo "after: $(floor_leftovers)"
}

# floor_leftovers: "N containers, N networks, N volumes" of the project.
floor_leftovers() {
  local label="label=com.docker.compose.project=${COMPOSE_PROJECT_NAME}"
  echo "$(docker ps -aq --filter "${label}" | wc -l) containers, $(docker network ls -q --filter "${label}" | wc -l) networks, $(docker volume ls -q --filter "${label}" | wc -l) volumes"
}

# --- the tests ----------------------------------------------------------------

# The two sides are what the contract compares: "docker compose" newer than
# the floor, and FLOOR_DOCKER_CONFIG's plugin exactly COMPOSE_FLOOR.
test_floor_01_the_two_plugins_are_the_newest_and_the_floor() {
  local newest floor
  newest=$(on_plugin newest compose_version) floor=$(on_plugin floor compose_version)
  echo "docker compose: ${newest}; DOCKER_CONFIG=${FLOOR_DOCKER_CONFIG}: ${floor}"
  assert_eq "${COMPOSE_FLOOR}" "${floor}" "the floor plugin's version (DOCKER_CONFIG=${FLOOR_DOCKER_CONFIG})"
  version_at_least "${newest}" "${COMPOSE_FLOOR}" || fail "docker compose is ${newest}, older than the floor ${COMPOSE_FLOOR}"
  [[ "${newest}" != "${floor}" ]] || fail "docker compose is the floor ${floor} itself: nothing to compare"
}

# The scan on fixtures: each kind of place a call hides or seems to (a
# comment, a message, a wrapped line, prose), and a form no case makes is
# named with its file and line and how to add its case.
test_floor_02_the_scan_names_a_new_form_by_file_and_line() {
  local fixture found missing
  # shellcheck disable=SC2016 # a script's text, not expanded here
  fixture='#!/usr/bin/env bash
# compose logs -f haproxy   (a comment: not a call)
ids=$(compose "$@" ps -a -q "${service}" 2>/dev/null) || return 1
die "docker compose up failed (a message: not a call)"
running=$(compose ps --status running --format '"'"'{{.Service}}'"'"' || true)
compose --profile "$(step_value "$1" profile)" up -d --no-deps --scale "$(x)=2" \
  holder >/dev/null 2>&1
if [[ -n "$(compose logs --no-color --tail 5 haproxy)" ]]; then compose rm -sf x; fi
compose exec -T haproxy sh -c "ulimit -n"'
  found=$(floor_scan --stdin scripts/fixture.sh <<<"${fixture}")
  echo "${found}"
  assert_eq "ps -a -q	scripts/fixture.sh:3
ps --format={{.Service}} --status	scripts/fixture.sh:5
--profile up --no-deps --scale -d	scripts/fixture.sh:6
logs --no-color --tail	scripts/fixture.sh:8
rm -f -s	scripts/fixture.sh:8
exec -T	scripts/fixture.sh:9" "${found}" "the forms of the fixture script"
  # shellcheck disable=SC2016 # a document's text, not expanded here
  found=$(floor_scan --stdin docs/fixture.md <<<'Run `docker compose up` (prose), or:
```
docker compose --profile '"'*'"' down -v --remove-orphans   # everything
```
then `docker compose kill -s HUP
haproxy`.')
  assert_eq "--profile down --remove-orphans -v	docs/fixture.md:3
kill -s	docs/fixture.md:5" "${found}" "the forms of the fixture document"
  missing=$(floor_scan --stdin scripts/fixture.sh <<<"${fixture}" | floor_uncovered | grep -v 'no script or document')
  echo "${missing}"
  assert_match "^'logs --no-color --tail' \\(scripts/fixture.sh:8\\) has no contract case: add a floor_case_\\* function to tests/floor.sh .* to FLOOR_CASES .*\$" \
    "${missing}" "what the check says of a form with no case"
  assert_eq 1 "$(grep -c . <<<"${missing}")" "forms of the fixture with no case"
}

# Every form the lab's scripts and documents make has a case, every case a
# form, and every case runs in one of this group's tests.
test_floor_03_every_form_of_the_scripts_and_documents_has_a_case() {
  local forms problems="" form group fn
  forms=$(floor_scan)
  echo "$(cut -f1 <<<"${forms}" | sort -u | wc -l) forms in ${#FLOOR_SCANNED[@]} files (calls of each):"
  cut -f1 <<<"${forms}" | sort | uniq -c | sed 's/^ */  /'
  problems=$(floor_uncovered <<<"${forms}")
  for form in "${!FLOOR_CASES[@]}"; do
    group="${FLOOR_CASES[${form}]%% *}" fn="${FLOOR_CASES[${form}]#* }"
    [[ " ${FLOOR_GROUPS[*]} " == *" ${group} "* ]] \
      || problems+=$'\n'"'${form}': its case's group '${group}' is none of this group's tests (${FLOOR_GROUPS[*]})"
    declare -F "${fn}" >/dev/null || problems+=$'\n'"'${form}': its case ${fn} is not defined"
  done
  assert_eq "" "$(sed '/^$/d' <<<"${problems}")" "forms without a case, cases without a form"
}

# The stack from nothing on the floor: scripts/up.sh's and the runner's up
# --wait of the lab's services; certs' one-shot job ends first
# (service_completed_successfully), every service is healthy, and HAProxy
# answers, with fe_tls's certificates in place.
test_floor_04_the_stack_comes_up_on_the_floor() {
  local states certs_end haproxy_start service
  floor_libs
  floor_quiet --profile '*' down -v --remove-orphans --timeout 5
  on_plugin floor recreate_services >"${floor_dir}/up-floor.log" 2>&1 \
    || fail "recreate_services (compose up -d --wait) failed on the floor: $(tail -n 5 "${floor_dir}/up-floor.log")"
  states=$(compose ps -a --format '{{.Service}} {{.State}} {{.Health}} {{.ExitCode}}' | sort)
  echo "${states}"
  assert_eq "certs exited 0" "$(awk '$1 == "certs" { print $1, $2, $NF }' <<<"${states}")" "the certificates' job"
  for service in $(lab_services); do
    assert_eq "${service} running healthy" "$(awk -v s="${service}" '$1 == s { print $1, $2, $3 }' <<<"${states}")" "${service} after up --wait on the floor"
  done
  certs_end=$(docker inspect -f '{{.State.FinishedAt}}' "$(compose ps -a -q certs)")
  haproxy_start=$(docker inspect -f '{{.State.StartedAt}}' "$(instance_container haproxy)")
  [[ ! "${haproxy_start}" < "${certs_end}" ]] || fail "HAProxy started at ${haproxy_start}, before certs ended at ${certs_end}"
  assert_match '^HTTP/1\.[01] 200' "$(http_get /fast | head -n 1)" "HAProxy's answer on 127.0.0.1:${HAPROXY_HTTP_PORT}/fast"
  assert_eq "ca.crt ecdsa.pem rsa.pem" "$(instance_exec haproxy ls /etc/haproxy-certs | grep -E '^(ca\.crt|.*\.pem)$' | sort | xargs)" "fe_tls's certificates made by certs"
}

# The forms that read the lab (config, ps with each template, exec, run --rm,
# cp, version, pull and build) give the lab's helpers the same on both plugins.
test_floor_05_reading_forms_read_the_same_on_both() {
  floor_libs
  floor_up
  floor_agree read
}

# The forms that change the lab (up --wait, --scale, --no-recreate,
# --force-recreate, exec --index, kill -s, restart) leave the same lab, as the
# lab's helpers read it, on both plugins.
test_floor_06_changing_forms_leave_the_same_lab_on_both() {
  floor_libs
  floor_up
  floor_agree change
}

# A step's load tool (--profile up --scale, ps -a with its exit codes, rm
# -sf), an attached up and a profile's run --rm go the same on both plugins.
test_floor_07_load_tool_forms_run_the_same_on_both() {
  floor_libs
  floor_up
  floor_agree load
}

# down -v --remove-orphans of every profile leaves nothing of the project on
# both plugins.
test_floor_08_down_leaves_nothing_on_both() {
  floor_libs
  floor_agree down
}
