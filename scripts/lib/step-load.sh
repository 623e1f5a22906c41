# shellcheck shell=bash
# One step's load for scripts/scenario.sh: start the step's load tool as its
# step.env says, watch it (every HAProxy instance's connections and accept
# queue every second, progress), keep the evidence. Each function takes the
# step's folder (results/SCENARIO/STAMP/steps/NN-id) and reads what it needs
# from the run folder's files (scripts/labctl/plan/runfolder.mjs): step.env,
# the run's run.env, and started.env, which start_load writes for the rest.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# 0 once Grafana did not answer: no more annotations this run.
grafana_ok=1

# load_profile_args DIR: "--profile P" for every load tool's profile (run.env).
load_profile_args() {
  local profile
  for profile in $(run_value "$1" load_profiles); do printf -- '--profile\n%s\n' "${profile}"; done
}

# annotate TEXT TAGS [TIME_END_MS TIME_MS]: a Grafana annotation (a region
# with TIME_END_MS), posted from the Prometheus container on the lab network,
# as Grafana's admin (anonymous visitors only view): the password is read
# there, from the grafana-secret volume, and never passes through the host.
annotate() {
  [[ ${grafana_ok} -eq 1 ]] || return 0
  local now body
  now=$(now_ms)
  body=$(printf '{"time":%s,%s"tags":[%s],"text":"%s"}' "${4:-${now}}" \
    "${3:+\"timeEnd\":$3,}" "$2" "${1//\"/\'}")
  # shellcheck disable=SC2016 # expanded by the container's sh
  if ! service_exec prometheus sh -c 'wget -q -O /dev/null -T 3 --header "Content-Type: application/json" \
      --header "Authorization: Basic $(printf "admin:%s" "$(cat /run/grafana-secret/grafana-admin-password)" | base64)" \
      --post-data "$1" http://grafana:3000/api/annotations' _ "${body}" >/dev/null 2>&1; then
    grafana_ok=0
    # A lab without Grafana (offline: scripts/up.sh said so) hears it once.
    [[ -z "$(if [[ -n "${LAB_PROJECT}" ]]; then lab_ps -q --filter label=com.docker.compose.service=grafana; else compose ps -q --status running grafana; fi 2>/dev/null)" ]] \
      || log "Grafana is not reachable: no dashboard annotations for this run"
  fi
}

# step_tags DIR: the step's annotation tags.
step_tags() { echo "\"haproxy-lab\",\"$(run_value "$1" scenario)\",\"$(step_value "$1" id)\""; }

# hits_so_far [DIR]: 2xx answers of every backend (every instance) since the
# step's reload, read now, or from the "show stat" answers step_evidence kept
# in DIR. (0 while HAProxy is down, e.g. OOM-killed.)
hits_so_far() {
  if [[ -n "${1:-}" ]]; then
    cat "$1"/*-stat.csv 2>/dev/null | stat_sum 'be_.*' BACKEND hrsp_2xx
    return $?
  fi
  haproxy_stat_sum 'be_.*' BACKEND hrsp_2xx 2>/dev/null || true
}

# progress STEP SECONDS_LEFT|done HITS: one line rewritten in place on a
# terminal; in a log (CI), a line every 10 s.
progress() {
  local left="$2" text
  if [[ "${left}" == "done" ]]; then
    text=$(printf '  step %-46s done, %s hits' "${1:0:46}" "$3")
    if [[ -t 1 ]]; then printf '\r%-80s\n' "${text}"; else echo "${text}"; fi
    return 0
  fi
  ((left > 0)) || left=0
  text=$(printf '  step %-46s %4ss left, %s hits so far' "${1:0:46}" "${left}" "$3")
  if [[ -t 1 ]]; then
    printf '\r%-80s' "${text}"
  elif ((SECONDS - ${last_progress:-0} >= 10)); then
    echo "${text}"
    last_progress=${SECONDS}
  fi
}

# netstat_of INSTANCE: the kernel's counters in INSTANCE's network namespace.
netstat_of() { probe_exec "$1" cat /proc/net/netstat; }

# step_load_env DIR: the load containers' environment (step.env's load.*
# lines), without a sysctl setting (the variable step.env's load_sysctl
# names) this Docker host's kernel does not have (the load generators would
# not start), with a note in DIR/notes.txt.
step_load_env() {
  local kv setting variable
  variable=$(step_value "$1" load_sysctl)
  [[ -n "${variable}" ]] || { file_prefixed "$1/step.env" load; return 0; }
  setting=$(file_prefixed "$1/step.env" load | sed -n "s/^${variable}=//p")
  if [[ -n "${setting}" ]] && ! docker run --rm --network none --entrypoint sh "$(env_value NODE_IMAGE)" \
      -c "test -e /proc/sys/$(tr . / <<<"${setting%%=*}")"; then
    log "the clients' kernel has no ${setting%%=*}: the step runs with the kernel's own setting" >&2
    echo "the clients' kernel has no ${setting%%=*}: this step ran without ${setting}" >>"$1/notes.txt"
    setting=""
  fi
  while IFS= read -r kv; do
    [[ "${kv}" == "${variable}="* && -z "${setting}" ]] || echo "${kv}"
  done < <(file_prefixed "$1/step.env" load)
}

# Each watched HAProxy container's sampler: the write end of its stdin (a
# file descriptor: closing it ends the sampler) and its pid.
declare -a SAMPLER_FDS=() SAMPLER_PIDS=()

# start_samplers DIR STARTED_MS: for each HAProxy container, one long-lived
# sockets_probe that reads every process each second;
# distribute_samples files its lines. The first container's carries the
# machine's busy CPU time.
start_samplers() {
  local container host=1 fifo fd args count
  for container in $(haproxy_containers); do
    mapfile -t args < <(sampler_args "${container}")
    count=$(container_processes "${container}" | wc -l)
    fifo="$1/.sampler-stdin-${container}"
    rm -f "${fifo}" && mkfifo "${fifo}"
    (
      close_sampler_fds
      sockets_probe "${container}" "${host}" 1 "${args[@]}" <"${fifo}" 2>/dev/null \
        | distribute_samples "$1" "${container}" "$2" "${count}"
    ) &
    SAMPLER_PIDS+=("$!")
    exec {fd}>"${fifo}"
    SAMPLER_FDS+=("${fd}")
    rm -f "${fifo}"
    host=0
  done
}

# start_host_sampler DIR: on a holder's step, the Docker host's CPU once a
# second (scripts/probes/host-cpu.mjs, DIR/host-sampler.txt): /proc/stat,
# every container's cgroup, Docker's daemons and each HAProxy process, for
# the breakdown of where a connection's CPU goes. It reads files only, so
# its cost does not grow with connections; it ends with the samplers.
start_host_sampler() {
  local fifo fd ids=() instance
  # On a Swarm the load runs on other nodes than this engine's host.
  [[ "$(step_value "$1" host_sampler)" == 1 && ${on_swarm:-0} -eq 0 ]] || return 0
  for instance in $(haproxy_containers); do
    ids+=("$(docker inspect -f '{{.Id}}' "$(instance_container "${instance}")" 2>/dev/null)") || true
  done
  fifo="$1/.sampler-stdin-host"
  rm -f "${fifo}" && mkfifo "${fifo}"
  (
    close_sampler_fds
    docker run --rm -i --pid host --network none --read-only --cap-drop ALL --user 65534:65534 --memory 64m \
      --label haproxy-lab.probe-of=host -v /sys/fs/cgroup:/host-cgroup:ro --entrypoint node "$(env_value NODE_IMAGE)" \
      --input-type=module -e "$(<"${LAB_ROOT}/scripts/probes/host-cpu.mjs")" _ "${ids[@]}" <"${fifo}" >"$1/host-sampler.txt" 2>/dev/null
  ) &
  SAMPLER_PIDS+=("$!")
  exec {fd}>"${fifo}"
  SAMPLER_FDS+=("${fd}")
  rm -f "${fifo}"
}

# close_sampler_fds: in a background job, the samplers' stdin closed: each
# sampler must end when the runner closes its own.
close_sampler_fds() {
  local fd
  for fd in "${SAMPLER_FDS[@]}"; do exec {fd}>&-; done
}

# stop_samplers: closes every sampler's stdin (each ends after its pass) and
# waits for them, 15 s at most.
stop_samplers() {
  local fd pid waited=0
  for fd in "${SAMPLER_FDS[@]}"; do exec {fd}>&-; done
  for pid in "${SAMPLER_PIDS[@]}"; do
    while kill -0 "${pid}" 2>/dev/null && ((waited < 150)); do sleep 0.1; waited=$((waited + 1)); done
    pkill -P "${pid}" 2>/dev/null || true
    kill "${pid}" 2>/dev/null || true
    wait "${pid}" 2>/dev/null || true
  done
  SAMPLER_FDS=() SAMPLER_PIDS=()
}

# add_or_dash VAR VALUE: VAR += VALUE, or VAR="-" when either is not a count
# (a process that did not answer makes the sum unknown, not smaller). No
# subshell: it runs for every process every second.
add_or_dash() {
  if [[ "${!1}" =~ ^[0-9]+$ && "$2" =~ ^[0-9]+$ ]]; then printf -v "$1" %d $((${!1} + $2)); else printf -v "$1" %s -; fi
}

# distribute_samples DIR CONTAINER STARTED_MS PROCESSES: a sampler's lines
# (sockets_probe) to DIR/INSTANCE-samples.txt ("t haproxy_conns backend_conns
# accept_queue cum_req at_ms frontend_req", t in seconds since STARTED_MS) and
# DIR/host-cpu.txt (as container_cpu writes); after each pass over the
# container's PROCESSES, "CLIENT_CONNS HITS" of them all
# (DIR/.progress-CONTAINER, "-" if one did not answer) for the progress line.
# Bash builtins only: this runs every second.
distribute_samples() {
  local name client server queue cumreq hits at reqs lines=0 total=0 hits_total=0
  while read -r name client server queue cumreq hits at reqs; do
    if [[ "${name}" == /proc/stat* ]]; then
      name=${name#/proc/stat} name=${name#/}
      echo "${server} ${name:-host} ${client} ns" >>"$1/host-cpu.txt"
      continue
    fi
    # A line short of fields has no time: filed, it would read as a gap
    # since 1970. It still ends its pass, as a process that did not answer.
    if [[ ${at} =~ ^[0-9]+$ ]]; then
      echo "$(((at - $3) / 1000)) ${client} ${server} ${queue} ${cumreq} ${at} ${reqs:--}" >>"$1/${name}-samples.txt"
    else
      client=- hits=-
    fi
    add_or_dash total "${client}"
    add_or_dash hits_total "${hits}"
    if ((++lines == $4)); then
      echo "${total} ${hits_total}" >"$1/.progress-$2"
      lines=0 total=0 hits_total=0
    fi
  done
}

# progress_totals DIR: "CLIENT_CONNS HITS" summed over the samplers' latest
# passes ("-" for what one did not give yet).
progress_totals() {
  local container conns hits total=0 hits_total=0
  for container in $(haproxy_containers); do
    conns=- hits=-
    [[ ! -f "$1/.progress-${container}" ]] || read -r conns hits <"$1/.progress-${container}" || true
    add_or_dash total "${conns}"
    add_or_dash hits_total "${hits}"
  done
  echo "${total} ${hits_total}"
}

# idle_cpu DIR: when the step asks for it (cpu_idle_seconds), every
# container's CPU over that many idle seconds before the load (DIR/cpu-idle.txt,
# then cpu-before.txt): what healthchecks and scrapes cost, which the engine
# takes out of the step's CPU per request.
idle_cpu() {
  local seconds profiles
  seconds=$(step_value "$1" cpu_idle_seconds)
  [[ "${seconds:-0}" -gt 0 ]] || return 0
  mapfile -t profiles < <(load_profile_args "$1")
  container_cpu "$1/cpu-idle.txt" "${profiles[@]}"
  sleep "${seconds}"
}

# What a step finds once, not at each reading, until release_step_lookups:
# hold_topology: the topology, once the step's settings are in force (a
# setting may name its process count); read ~30 times a step, ~20 ms each.
# hold_probes: each HAProxy container's probe, once its config is in force:
# from the readings before the load to those after it, the runner neither
# restarts HAProxy nor changes its settings. Checked at every reading, they
# cost ~10 docker calls a step, and every second of a load with many
# processes.
hold_topology() { LAB_TOPOLOGY_CACHE=$(topology_text); }
hold_probes() {
  local instance
  for instance in $(haproxy_containers); do LAB_PROBES[${instance}]=$(instance_probe "${instance}" 2>/dev/null) || true; done
}
release_step_lookups() { LAB_TOPOLOGY_CACHE="" LAB_PROBES=(); }

# start_load DIR: the step's load tool, scaled to its replicas, with the
# step's load environment; the evidence "before" into DIR, and DIR/started.env.
start_load() {
  local instance env_lines service profiles readers=() reader LAB_CONTAINERS
  mapfile -t profiles < <(load_profile_args "$1")
  # The same containers run until the tool starts: found once for the readings.
  LAB_CONTAINERS=$(lab_containers "${profiles[@]}")
  # The readings before the load, side by side and beside the idle CPU
  # reading (each a docker call of its own): none adds to a container's CPU.
  for instance in $(haproxy_containers); do
    netstat_of "${instance}" >"$1/${instance}-netstat-before.txt" &
    readers+=($!)
  done
  container_memory "$1/memory-before.txt" "${profiles[@]}" &
  readers+=($!)
  kernel_memory "$1/kernel-before.env" &
  readers+=($!)
  # Answers before the load (the previous step's leftovers) are not this step's.
  hits_so_far >"$1/.hits-before" &
  readers+=($!)
  idle_cpu "$1"
  for reader in "${readers[@]}"; do wait "${reader}" || die "could not read the evidence before step $(step_value "$1" index): HAProxy's kernel counters, memory (above)"; done
  container_cpu "$1/cpu-before.txt" "${profiles[@]}"
  {
    echo "# when step $(step_value "$1" index) started (scripts/lib/step-load.sh start_load)"
    echo "started_at_ms=$(now_ms)"
    echo "since=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "hits_before=$(cat "$1/.hits-before")"
  } >"$1/started.env"
  rm -f "$1/.hits-before"
  annotate "$(run_value "$1" scenario) step $(step_value "$1" index)/$(step_value "$1" total): $(step_value "$1" label)" "$(step_tags "$1")"
  env_lines=$(step_load_env "$1")
  service=$(step_value "$1" service)
  # The samplers first: their start (a container each) is not the load's.
  for instance in $(haproxy_instances); do echo "t haproxy_conns backend_conns accept_queue cum_req at_ms frontend_req" >"$1/${instance}-samples.txt"; done
  start_samplers "$1" "$(now_ms)"
  start_host_sampler "$1"
  start_tool "$1" "${env_lines}" || die "could not start the load generators (${service})"
}

# watch_load DIR: until the load tool's replicas end, every HAProxy instance's
# connections and accept queue every second (DIR/INSTANCE-samples.txt), every
# container's CPU (DIR/cpu-samples.txt), progress, and once the load has
# settled (or mid-hold) every container's memory (DIR/memory-peak.txt) with
# each instance's own view beside it.
watch_load() {
  local started=${SECONDS} instance conns seconds sample_at title hits_before profiles peak="" cpu=""
  local hits waiter LAB_CONTAINERS
  seconds=$(step_value "$1" seconds) sample_at=$(step_value "$1" sample_at)
  title="$(step_value "$1" index)/$(step_value "$1" total) $(step_value "$1" label)"
  hits_before=$(started_value "$1" hits_before)
  mapfile -t profiles < <(load_profile_args "$1")
  # What every second reads, found once: the containers and the load tool's
  # (the topology and HAProxy's probes: hold_topology, hold_probes). Found
  # on every pass, compose and docker calls cost 1.7 CPU-seconds a pass with
  # 27 HAProxy processes (measured machine-wide), taken from the load on 2
  # cores.
  # Until every replica of the load tool has ended.
  wait_tool_ended "$1" &
  waiter=$!
  LAB_CONTAINERS=$(lab_containers "${profiles[@]}")
  while kill -0 "${waiter}" 2>/dev/null; do
    read -r conns hits <<<"$(progress_totals "$1")"
    [[ "${hits}" == - ]] || hits=$((hits - hits_before))
    progress "${title}" $((seconds - (SECONDS - started))) "${conns} conns, ${hits}"
    # Every container's CPU so far, the load tool's included (its cgroup goes
    # when it ends): the rates while the load runs name what saturated. In
    # the background, one reading at a time.
    if [[ -z "${cpu}" ]] || ! kill -0 "${cpu}" 2>/dev/null; then
      (close_sampler_fds; container_cpu "$1/cpu-samples.txt" "${profiles[@]}") &
      cpu=$!
    fi
    if [[ -z "${peak}" ]] && ((SECONDS - started >= sample_at)); then
      # In the background: under load its docker calls take seconds.
      (close_sampler_fds; peak_snapshot "$1" "${profiles[@]}") &
      peak=$!
    fi
    # A second, cut short when the load ends: a whole second's sleep cost
    # each step half a second on average.
    for _ in 1 2 3 4 5; do
      kill -0 "${waiter}" 2>/dev/null || break
      sleep 0.2
    done
  done
  wait "${waiter}" 2>/dev/null || true
  stop_samplers
  rm -f "$1"/.progress-*
  [[ -z "${peak}" ]] || wait "${peak}" || true
  [[ -z "${cpu}" ]] || wait "${cpu}" || true
}

# peak_snapshot DIR [--profile P ...]: every container's memory
# (DIR/memory-peak.txt), the kernel's own (DIR/kernel-peak.env), CPU allowance, the load tool's included
# (DIR/cpu-allowance.txt), and beside them every HAProxy process's show info,
# one container's processes in order in DIR/INSTANCE-info-peak.txt (INSTANCE:
# the container's first process).
peak_snapshot() {
  local dir="$1" container
  shift
  container_allowance "${dir}/cpu-allowance.txt" "$@"
  container_memory "${dir}/memory-peak.txt" "$@"
  # Which container is what, for host-sampler.txt's ids: the load tool's
  # and the runner's probes are running now.
  docker ps --no-trunc --format '{{.ID}}|{{.Names}}|{{.Label "com.docker.compose.service"}}|{{.Label "haproxy-lab.probe-of"}}' \
    >"${dir}/containers.txt" 2>/dev/null || true
  kernel_memory "${dir}/kernel-peak.env"
  # One probe call per container: a docker exec per process took 5 s and
  # about 4 CPU-seconds for 54 processes, mid-hold; one call, 0.2 s.
  for container in $(haproxy_containers); do
    processes_cli "show info" "${container}" >"${dir}/${container}-info-peak.txt" 2>/dev/null || true
  done
}

# instances_state: how each HAProxy container stands (OOM-killed, status,
# exit code), "; " between instances.
instances_state() {
  local instance
  for instance in $(haproxy_containers); do
    docker inspect -f 'oom_killed={{.State.OOMKilled}} status={{.State.Status}} exit={{.State.ExitCode}}' \
      "$(instance_container "${instance}")" 2>/dev/null
  done | paste -sd';' - | sed 's/;/; /g'
}

# finish_load DIR: HAProxy's counters and log, how the step ended
# (DIR/outcome.env), the load tool's own log, its replicas removed.
finish_load() {
  local ended_ms started_ms title hits_before profiles
  started_ms=$(started_value "$1" started_at_ms) hits_before=$(started_value "$1" hits_before)
  title="$(step_value "$1" index)/$(step_value "$1" total) $(step_value "$1" label)"
  mapfile -t profiles < <(load_profile_args "$1")
  container_cpu "$1/cpu-after.txt" "${profiles[@]}"
  ended_ms=$(now_ms)
  step_evidence "$1" "$(started_value "$1" since)"
  progress "${title}" "done" "$(($(hits_so_far "$1") - hits_before))"
  {
    echo "# how step $(step_value "$1" index) ended (scripts/scenario.sh); read by scripts/labctl/evidence/run.mjs"
    echo "started_at_ms=${started_ms}"
    echo "ended_at_ms=${ended_ms}"
    echo "exit_codes=$(tool_exit_codes "$1")"
    echo "haproxy_state=$(instances_state)"
    echo "haproxy_somaxconn=${somaxconn:-}"
  } >"$1/outcome.env"
  tool_finished "$1"
  annotate "$(run_value "$1" scenario): $(step_value "$1" label)" "$(step_tags "$1")" "${ended_ms}" "${started_ms}"
}

# step_evidence DIR SINCE: each HAProxy instance's counters (show info, stat,
# activity), its kernel's, and
# the log lines it wrote during the step (only abnormal ones: dontlog-normal),
# e.g. SD aborts, into DIR/INSTANCE-*.
step_evidence() {
  local instance readers=() command file
  # The runtime API's answers, the kernel's and the log side by side: each
  # is a docker call of its own. "show activity": the event loop's counters
  # (loops, poll_io), how much work one wakeup did.
  for command in "info info.txt" "stat stat.csv" "activity activity.txt"; do
    file=${command#* } command=${command% *}
    for instance in $(haproxy_instances); do
      haproxy_cli "show ${command}" "${instance}" >"$1/${instance}-${file}" 2>/dev/null || true
    done &
    readers+=($!)
  done
  # The kernel's and the log: the container's, once (its first process's name).
  for instance in $(haproxy_containers); do
    netstat_of "${instance}" >"$1/${instance}-netstat-after.txt" 2>/dev/null || true
    instance_log "$2" "${instance}" >"$1/${instance}-log.txt" 2>/dev/null || true
  done &
  readers+=($!)
  wait "${readers[@]}" || true
}
