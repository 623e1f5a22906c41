# shellcheck shell=bash disable=SC2034,SC2154 # the runner's globals, set and read there
# Changes of the running lab for scripts/scenario.sh (sourced after
# scripts/lib/common.sh): HAProxy's config (a reload, or a restart when the
# listening sockets change, read back with ss), the backends' scale, the
# services' settings. Uses the runner's globals: run_dir, touched, somaxconn,
# applied_env.

readonly LIVE_CFG=/var/lib/haproxy/live.cfg
readonly BASELINE_CFG=/usr/local/etc/haproxy/haproxy.cfg

# HAProxy holds no client connection for two polls in a row (leftovers of the
# previous step, e.g. connections that waited in the accept queue, are gone).
quiet() {
  [[ "$(haproxy_info CurrConns)" == 0 ]] && sleep 1 && [[ "$(haproxy_info CurrConns)" == 0 ]]
}

# listening_sockets FILE: `ss -ltn` in HAProxy's network namespace (the real
# backlog and accept queue of every listening socket), raw, into FILE.
listening_sockets() {
  local errors
  # Explicit return values throughout: called from the EXIT trap, a bare
  # "return" would return the status the script exited with.
  if errors=$(compose --profile tools run --rm --no-deps -T netprobe -ltn 2>&1 >"$1"); then return 0; fi
  echo "${errors}" >&2
  echo "${PROG}: could not read HAProxy's listening sockets with ss (netprobe, output above)" >&2
  return 1
}

# listeners_differ EXPECTED SS_FILE: one line per listening socket that is not
# what the config asks (labctl listeners); false when all are.
listeners_differ() {
  ! labctl listeners "${1#"${LAB_ROOT}/"}" "${2#"${LAB_ROOT}/"}" "${somaxconn}"
}

# restart_haproxy WHY: stop and start HAProxy on the live config (new
# listening sockets). SIGTERM, HAProxy's hard stop, cuts what it still holds
# at once; the image's stop signal (SIGUSR1) would wait for every connection.
restart_haproxy() {
  local id
  log "restarting HAProxy: $1"
  id=$(compose ps -q haproxy)
  compose exec -T haproxy touch /var/lib/haproxy/keep-live-cfg \
    && compose kill -s TERM haproxy >/dev/null 2>&1 \
    && docker wait "${id}" >/dev/null \
    && compose start haproxy >/dev/null 2>&1
}

# switch_config DESCRIPTION LISTENERS DIR: make HAProxy run the live config.
# A reload (USR2: the old worker finishes its connections) unless the running
# listening sockets differ from the config's (LISTENERS): a reload keeps them,
# backlog included, so then a restart. Checked afterwards with ss; DIR keeps
# ss's view before and after.
switch_config() {
  local why since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  listening_sockets "$3/listen-sockets-before.txt" || return 1
  if why=$(listeners_differ "$2" "$3/listen-sockets-before.txt"); then
    restart_haproxy "a reload keeps the listening sockets and this config changes them (${why//$'\n'/; })" || return 1
  else
    compose kill -s USR2 haproxy >/dev/null 2>&1
  fi
  if ! wait_for 30 "HAProxy to run '$1'" description_is "$1"; then
    # Why, in HAProxy's words (e.g. "Cannot raise FD limit to 20153, limit is 20000").
    service_log "${since}" haproxy 2>/dev/null | grep -E 'ALERT|Failed to load' | tail -n 3 >&2
    return 1
  fi
  listening_sockets "$3/listen-sockets.txt" || return 1
  if why=$(listeners_differ "$2" "$3/listen-sockets.txt"); then
    echo "${PROG}: HAProxy runs other listening sockets than '$1' asks: ${why//$'\n'/; } (ss -ltn in $3/listen-sockets.txt)" >&2
    return 1
  fi
}

# apply_config FILE DESCRIPTION LISTENERS DIR: check FILE with haproxy -c in
# the running container, swap it in, switch to it (switch_config), wait until
# the previous step's connections are gone.
apply_config() {
  # shellcheck disable=SC2016 # expanded by the container's bash
  compose exec -T haproxy bash -c '
    cat > /var/lib/haproxy/candidate.cfg &&
    haproxy -c -q -f /var/lib/haproxy/candidate.cfg &&
    mv -f /var/lib/haproxy/candidate.cfg "$1"' _ "${LIVE_CFG}" <"$1" \
    || die "HAProxy rejected $1 (haproxy -c above); the running config is unchanged"
  touched=1
  switch_config "$2" "$3" "$4" || die "HAProxy did not take $1 as asked (above)"
  wait_for 60 "HAProxy to drain the previous step's connections" quiet || true
}

# restore_baseline: haproxy/haproxy.cfg again, with its own listening sockets.
restore_baseline() {
  local listeners="${run_dir}/configs/baseline.listeners" dir="${run_dir}/baseline-restored"
  if ! compose exec -T haproxy ln -sfn "${BASELINE_CFG}" "${LIVE_CFG}"; then
    echo "${PROG}: could not link ${LIVE_CFG} back to haproxy/haproxy.cfg in the haproxy container" >&2
    return 1
  fi
  if [[ ! -f "${listeners}" ]]; then
    compose kill -s USR2 haproxy >/dev/null 2>&1
    wait_for 30 "HAProxy back on haproxy/haproxy.cfg" description_is baseline
    return $?
  fi
  mkdir -p "${dir}" && switch_config baseline "${listeners}" "${dir}"
}

# scale SVC=N,SVC=N: backend replicas, and HAProxy sees each of them UP.
scale() {
  local args=() pairs pair svc n output
  IFS=',' read -r -a pairs <<<"$1"
  for pair in "${pairs[@]}"; do
    [[ -n "${pair}" ]] && args+=(--scale "${pair}")
  done
  [[ ${#args[@]} -gt 0 && "$(backend_scale)" != "$(sort_pairs "$1")" ]] || return 0
  if ! output=$(compose up -d --wait --no-recreate "${args[@]}" haproxy backend-slow backend-fast prometheus 2>&1); then
    tail -n 5 <<<"${output}" >&2
    die "could not scale the backends to $1 (docker compose output above)"
  fi
  for pair in "${pairs[@]}"; do
    svc="${pair%=*}" n="${pair#*=}"
    wait_for 30 "${n} ${svc} servers UP in HAProxy" servers_up "be_${svc#backend-}" "${n}" \
      || die "HAProxy does not see ${n} ${svc} replicas UP"
  done
}

sort_pairs() { tr ',' '\n' <<<"$1" | sort | paste -sd, -; }


# use_compose_env "K=V K=V"|-: the step's settings of the lab's services
# (e.g. BACKEND_SERVER_TIMEOUT_MS, HAPROXY_MEMORY) exported for compose, and the
# services recreated with them when they change.
use_compose_env() {
  local wanted="${1#-}" kv output
  # Also when HAProxy is down (OOM-killed in the previous step): up again.
  [[ "${wanted}" == "${applied_env}" && -n "$(compose ps -q --status running haproxy)" ]] && return 0
  for kv in ${applied_env}; do unset "${kv%%=*}"; done
  # shellcheck disable=SC2086 # one word per K=V, checked by the planner
  for kv in ${wanted}; do export "${kv?}"; done
  applied_env="${wanted}" touched=1
  log "services with ${wanted:-their default settings}"
  local args=() pair
  IFS=',' read -r -a pairs <<<"$(backend_scale)"
  for pair in "${pairs[@]}"; do args+=(--scale "${pair}"); done
  if ! output=$(compose up -d --wait "${args[@]}" haproxy backend-slow backend-fast prometheus 2>&1); then
    tail -n 5 <<<"${output}" >&2
    die "could not restart the lab's services with ${wanted:-their default settings}"
  fi
}
