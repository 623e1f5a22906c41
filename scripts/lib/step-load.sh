# shellcheck shell=bash disable=SC2034,SC2154 # the runner's globals, set and read there
# One step's load for scripts/scenario.sh (sourced after scripts/lib/common.sh):
# start the step's load tool as its step.env says, watch it (HAProxy's
# connections and accept queue every second, progress), keep the evidence.
# Uses the runner's globals: scenario, the step_* values of step.env,
# load_env, profile_args, grafana_ok.

# annotate TEXT TAGS [TIME_END_MS]: a Grafana annotation (region when
# TIME_END_MS), posted from the Prometheus container on the lab network.
annotate() {
  [[ ${grafana_ok} -eq 1 ]] || return 0
  local now body
  now=$(now_ms)
  body=$(printf '{"time":%s,%s"tags":[%s],"text":"%s"}' "${4:-${now}}" \
    "${3:+\"timeEnd\":$3,}" "$2" "${1//\"/\'}")
  if ! compose exec -T prometheus wget -q -O /dev/null -T 3 --header 'Content-Type: application/json' \
      --post-data "${body}" http://grafana:3000/api/annotations >/dev/null 2>&1; then
    grafana_ok=0
    log "Grafana is not reachable: no dashboard annotations for this run"
  fi
}

# hits_so_far: 2xx answers of every backend since the step's reload.
# (0 while HAProxy is down, e.g. OOM-killed.)
hits_so_far() { haproxy_stat_sum 'be_.*' BACKEND hrsp_2xx 2>/dev/null || true; }

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

netstat_of_haproxy() { compose exec -T haproxy cat /proc/net/netstat; }

# drop_missing_sysctl DIR: load_env without a LOADGEN_SYSCTL this Docker
# host's kernel does not have (the load generators would not start), and a
# note in DIR/notes.txt saying so.
drop_missing_sysctl() {
  local kv setting="" kept=()
  for kv in "${load_env[@]}"; do [[ "${kv}" == LOADGEN_SYSCTL=* ]] && setting="${kv#LOADGEN_SYSCTL=}"; done
  [[ -n "${setting}" ]] || return 0
  docker run --rm --network none --entrypoint sh "$(env_value NODE_IMAGE)" \
    -c "test -e /proc/sys/$(tr . / <<<"${setting%%=*}")" && return 0
  log "the clients' kernel has no ${setting%%=*}: the step runs with the kernel's own setting"
  echo "the clients' kernel has no ${setting%%=*}: this step ran without ${setting}" >>"$1/notes.txt"
  for kv in "${load_env[@]}"; do [[ "${kv}" == LOADGEN_SYSCTL=* ]] || kept+=("${kv}"); done
  load_env=("${kept[@]}")
}

# sample FILE T: "t haproxy_conns backend_conns accept_queue" while the load runs.
sample() {
  local line
  line=$(haproxy_sockets 2>/dev/null) || line="- - -"
  echo "$2 ${line}" >>"$1"
  current_conns="${line%% *}"
}

# now_ms: milliseconds since the epoch (Grafana's time unit).
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start_load DIR: the step's load tool, scaled to its replicas, with the
# step's load environment; the evidence "before" into DIR.
start_load() {
  netstat_of_haproxy >"$1/netstat-before.txt"
  container_stats "$1/memory-before.txt" "${profile_args[@]}"
  step_started_ms=$(now_ms)
  step_since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  annotate "${scenario} step ${step_index}/${step_total}: ${step_label}" "\"haproxy-lab\",\"${scenario}\",\"${step_id}\""
  # Answers before the load (the previous step's leftovers) are not this step's.
  hits_before=$(hits_so_far)
  (
    for kv in "${load_env[@]}"; do export "${kv?}"; done
    compose --profile "${step_profile}" up -d --no-deps --scale "${step_service}=${step_replicas}" "${step_service}" >/dev/null 2>&1
  ) || die "could not start the load generators (${step_service})"
}

# watch_load DIR: until the load tool's replicas end, HAProxy's connections
# and accept queue every second (DIR/samples.txt), progress, and once the load
# has settled (or mid-hold) every container's CPU and memory (DIR/cpu.txt)
# with HAProxy's own view beside it.
watch_load() {
  local started=${SECONDS}
  echo "t haproxy_conns backend_conns accept_queue" >"$1/samples.txt"
  while [[ -n "$(compose --profile "${step_profile}" ps -q --status running "${step_service}" 2>/dev/null)" ]]; do
    sample "$1/samples.txt" $((SECONDS - started))
    progress "${step_index}/${step_total} ${step_label}" $((step_seconds - (SECONDS - started))) \
      "${current_conns} conns, $(($(hits_so_far) - hits_before))"
    if [[ ! -s "$1/cpu.txt" ]] && ((SECONDS - started >= step_sample_at)); then
      container_stats "$1/cpu.txt" "${profile_args[@]}"
      haproxy_cli "show info" >"$1/haproxy-info-peak.txt" 2>/dev/null || true
    fi
    sleep 1
  done
}

# finish_load DIR: HAProxy's counters and log, how the step ended
# (DIR/outcome.env), the load tool's own log, its replicas removed.
finish_load() {
  local ended_ms
  progress "${step_index}/${step_total} ${step_label}" "done" "$(($(hits_so_far) - hits_before))"
  ended_ms=$(now_ms)
  step_evidence "$1" "${step_since}"
  {
    echo "# how step ${step_index} ended (scripts/scenario.sh); read by scripts/lab/report/report.mjs"
    echo "started_at_ms=${step_started_ms}"
    echo "ended_at_ms=${ended_ms}"
    echo "exit_codes=$(compose --profile "${step_profile}" ps -a --format '{{.ExitCode}}' "${step_service}" | paste -sd, -)"
    echo "haproxy_state=$(docker inspect -f 'oom_killed={{.State.OOMKilled}} status={{.State.Status}} exit={{.State.ExitCode}}' \
      "$(compose ps -a -q haproxy)" 2>/dev/null)"
  } >"$1/outcome.env"
  # The load generators' own words (k6: why requests failed), before they go.
  service_log "" "${step_service}" --profile "${step_profile}" >"$1/${step_service}-log.txt" 2>&1 || true
  compose --profile "${step_profile}" rm -sf "${step_service}" >/dev/null 2>&1
  annotate "${scenario}: ${step_label}" "\"haproxy-lab\",\"${scenario}\",\"${step_id}\"" "${ended_ms}" "${step_started_ms}"
}

# step_evidence DIR SINCE: HAProxy's counters and the log lines it wrote
# during the step (only abnormal ones: dontlog-normal), e.g. SD aborts.
step_evidence() {
  haproxy_cli "show info" >"$1/haproxy-info.txt" 2>/dev/null || true
  haproxy_cli "show stat" >"$1/haproxy-stat.csv" 2>/dev/null || true
  netstat_of_haproxy >"$1/netstat-after.txt" 2>/dev/null || true
  service_log "$2" haproxy >"$1/haproxy-log.txt" 2>/dev/null || true
}
