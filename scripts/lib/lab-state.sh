# shellcheck shell=bash disable=SC2034 # lab_touched: read by the runner's cleanup (scripts/scenario.sh)
# Changes of the running lab for scripts/scenario.sh: HAProxy's config on
# every instance of the topology (a reload, or a restart when the listening
# sockets change, as the planner decided; ss's view saved after), the
# backends' scale, the services' settings. Its own state, for the runner's
# cleanup: lab_touched (1 once anything changed), applied_env (the services'
# settings in force), and what to put back: original_scale (the backends').
# The runner works in a process of its own (scripts/scenario.sh supervise):
# save_lab_state hands this state to the process that cleans up, through
# lab_state_file.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

readonly LIVE_CFG=/var/lib/haproxy/live.cfg
readonly BASELINE_CFG=/usr/local/etc/haproxy/haproxy.cfg
lab_touched=0
applied_env=""
original_scale=""
lab_state_file=""

# save_lab_state: the state above into lab_state_file, NAME=value lines
# (written whole, then renamed: a reader never sees half of it).
save_lab_state() {
  [[ -n "${lab_state_file}" ]] || return 0
  printf '%s\n' "lab_touched=${lab_touched}" "applied_env=${applied_env}" \
    "original_scale=${original_scale}" "project=${LAB_PROJECT}" >"${lab_state_file}.new" \
    && mv -f "${lab_state_file}.new" "${lab_state_file}"
}

# haproxy_without_clients: no HAProxy instance holds a client connection,
# for two polls in a row 0.3 s apart (leftovers of the previous step, e.g.
# connections that waited in the accept queue, are gone); each container's
# processes read in one call.
haproxy_without_clients() {
  local container poll
  for poll in 1 2; do
    for container in $(haproxy_containers); do
      haproxy_sockets "${container}" 2>/dev/null | awk '$2 != "0" { busy = 1 } END { exit busy || NR == 0 }' || return 1
    done
    [[ ${poll} -eq 2 ]] || sleep 0.3
  done
}

# netprobe_image: the image with ss (compose builds it on first use, as
# "docker compose --profile tools run netprobe" would), once a process
# (netprobe_found): it is looked for at every ss reading.
netprobe_image() {
  local image
  image=$(env_value NETPROBE_IMAGE)
  docker image inspect "${image}" >/dev/null 2>&1 || compose --profile tools build -q netprobe >/dev/null 2>&1 || return 1
  echo "${image}"
}
netprobe_found=""

# listening_sockets INSTANCE FILE: `ss -ltn` in INSTANCE's network namespace
# (the real backlog and accept queue of every listening socket), raw, into FILE.
listening_sockets() {
  local errors id
  # Explicit return values throughout: called from the EXIT trap, a bare
  # "return" would return the status the script exited with.
  [[ -n "${netprobe_found}" ]] || netprobe_found=$(netprobe_image) || netprobe_found=""
  if [[ -n "${netprobe_found}" ]] && id=$(instance_container "$1") \
    && errors=$(docker run --rm --network "container:${id}" "${netprobe_found}" -ltn 2>&1 >"$2"); then
    return 0
  fi
  echo "${errors:-}" >&2
  echo "${PROG}: could not read the listening sockets of HAProxy instance $1 with ss (netprobe, output above)" >&2
  return 1
}

# restart_instance INSTANCE WHY: stop and start INSTANCE's container on the
# live config (new listening sockets), every process of it. SIGTERM,
# HAProxy's hard stop, cuts what it still holds at once; the image's stop
# signal (SIGUSR1) would wait for every connection.
restart_instance() {
  local id
  log "restarting HAProxy $1's container: $2"
  id=$(instance_container "$1") \
    && instance_exec "$1" touch /var/lib/haproxy/keep-live-cfg \
    && docker kill -s TERM "${id}" >/dev/null 2>&1 \
    && docker wait "${id}" >/dev/null \
    && forget_containers \
    && start_again "$1" "${id}"
}

# reload_instance INSTANCE: a hitless reload of INSTANCE's process alone (its
# master CLI's "reload", as USR2 to the master: a new worker, the old one
# finishes its connections; USR2 to the container reaches every process).
reload_instance() {
  lab_reloads=$((lab_reloads + 1))
  haproxy_master_cli reload "$1" >/dev/null
}
# Reloads since apply_config began: a reloaded process's predecessor may
# still hold the previous step's connections; a restarted one holds none.
lab_reloads=0

# switch_instance INSTANCE DESCRIPTION SWITCH DIR: make INSTANCE run its
# live config, by SWITCH as the planner decided it (step.env switch): reload,
# or restart where the config changes the listening sockets, which a reload
# keeps, backlog included. ss's view afterwards goes to
# DIR/INSTANCE-listen-sockets.txt, which the report judges against the
# config's (evidence/run.mjs listenerProblems).
switch_instance() {
  local since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  if [[ "$3" == restart ]]; then
    restart_instance "$1" "the config changes the listening sockets, which a reload keeps" || return 1
  else
    reload_instance "$1"
  fi
  if ! wait_for 30 "HAProxy $1 to run '$2'" instance_runs "$1" "$2"; then
    # Why, in HAProxy's words (e.g. "Cannot raise FD limit to 20153, limit is 20000").
    instance_log "${since}" "$1" 2>/dev/null | grep -E 'ALERT|Failed to load' | tail -n 3 >&2
    return 1
  fi
  listening_sockets "$1" "$4/$1-listen-sockets.txt"
}

# switch_container INSTANCE DESCRIPTION SWITCH DIR: every
# process of INSTANCE's container on its live config: the first as
# switch_instance says (a restart there restarts them all, on the live
# config), then each other one that does not run it yet by a reload of its own.
switch_container() {
  local process
  switch_instance "$@" || return 1
  for process in $(container_processes "$1"); do
    [[ "${process}" != "$1" ]] || continue
    instance_runs "${process}" "$2" && continue
    reload_instance "${process}"
    wait_for 30 "HAProxy ${process} to run '$2'" instance_runs "${process}" "$2" || return 1
  done
}

# instance_runs INSTANCE DESCRIPTION: INSTANCE runs the config whose
# "description" is DESCRIPTION.
instance_runs() { [[ "$(haproxy_info description "$1" 2>/dev/null)" == "$2" ]]; }

# apply_config FILE DESCRIPTION SWITCH DIR: on every instance, check FILE
# with haproxy -c in the running container, swap it in, switch to it
# (switch_instance); then, if a process was reloaded, wait until the
# previous step's connections are gone.
apply_config() {
  local instance
  # Noted before the change: a runner stopped in the middle of it still
  # gets the baseline back.
  lab_touched=1
  save_lab_state
  # The live config is the container's: every process of it runs it.
  for instance in $(haproxy_containers); do
    # shellcheck disable=SC2016 # expanded by the container's bash
    instance_exec "${instance}" bash -c '
      cat > /var/lib/haproxy/candidate.cfg &&
      haproxy -c -q -f /var/lib/haproxy/candidate.cfg &&
      mv -f /var/lib/haproxy/candidate.cfg "$1"' _ "${LIVE_CFG}" <"$1" \
      || die "HAProxy ${instance} rejected $1 (haproxy -c above); its running config is unchanged"
  done
  lab_reloads=0
  for instance in $(haproxy_containers); do
    switch_container "${instance}" "$2" "$3" "$4" || die "HAProxy ${instance} did not take $1 as asked (above)"
  done
  [[ ${lab_reloads} -eq 0 ]] || wait_for 60 "HAProxy to drain the previous step's connections" haproxy_without_clients || true
}

# restore_baseline RUN_DIR: haproxy/haproxy.cfg again on every instance, by
# the switch the planner chose (run.env baseline_switch: a restart when a
# step changed the listening sockets; a restart when the run has none), ss's
# view afterwards in RUN_DIR/baseline-restored/.
restore_baseline() {
  local switch dir="$1/baseline-restored" instance
  switch=$(file_value "$1/run.env" baseline_switch 2>/dev/null || true)
  for instance in $(haproxy_containers); do
    if ! instance_exec "${instance}" ln -sfn "${BASELINE_CFG}" "${LIVE_CFG}"; then
      echo "${PROG}: could not link ${LIVE_CFG} back to haproxy/haproxy.cfg in HAProxy ${instance}'s container" >&2
      return 1
    fi
    mkdir -p "${dir}" && switch_container "${instance}" baseline "${switch:-restart}" "${dir}" || return 1
  done
}

# scale SVC=N,SVC=N: backend replicas, and every HAProxy instance sees each
# of them UP in the backend that balances it (topology.txt), the scale
# changed or not: a HAProxy just restarted, or backends just replaced (a
# redeploy on a Swarm), may not have found them yet (a Swarm run's first
# request once met be_slow with no server: 503).
scale() {
  local args=() pairs pair output want=()
  IFS=',' read -r -a pairs <<<"$1"
  for pair in "${pairs[@]}"; do
    [[ -n "${pair}" ]] && args+=(--scale "${pair}")
  done
  [[ ${#args[@]} -gt 0 ]] || return 0
  if [[ "$(backend_scale)" != "$(sort_pairs "$1")" ]]; then
    forget_containers
    if ! output=$(scale_services "${args[@]}" 2>&1); then
      tail -n 5 <<<"${output}" >&2
      die "could not scale the backends to $1 (output above)"
    fi
    forget_containers
  fi
  for pair in "${pairs[@]}"; do
    [[ -z "${pair}" ]] || want+=("$(topology_value backend "${pair%=*}" proxy)" "${pair#*=}")
  done
  wait_for 30 "HAProxy to see the backends' servers UP (${1//,/, })" servers_up "${want[@]}" \
    || die "HAProxy does not see the backends' replicas UP (${1//,/, })"
}

sort_pairs() { tr ',' '\n' <<<"$1" | sort | paste -sd, -; }

# use_compose_env "K=V K=V"|-: the step's settings of the lab's services
# (e.g. BACKEND_SERVER_TIMEOUT_MS, HAPROXY_MEMORY) exported for compose, and the
# services recreated with them when they change.
use_compose_env() {
  local wanted="${1#-}" kv output running=1 instance
  # Also when an instance is down (OOM-killed in the previous step): up again.
  for instance in $(haproxy_instances); do
    [[ "$(docker inspect -f '{{.State.Running}}' "$(instance_container "${instance}")" 2>/dev/null)" == true ]] || running=0
  done
  [[ "${wanted}" == "${applied_env}" && ${running} -eq 1 ]] && return 0
  for kv in ${applied_env}; do unset "${kv%%=*}"; done
  # shellcheck disable=SC2086 # one word per K=V, checked by the planner
  for kv in ${wanted}; do export "${kv?}"; done
  applied_env="${wanted}" lab_touched=1
  save_lab_state
  log "services with ${wanted:-their default settings}"
  local args=() pair
  IFS=',' read -r -a pairs <<<"$(backend_scale)"
  for pair in "${pairs[@]}"; do args+=(--scale "${pair}"); done
  forget_containers
  if ! output=$(recreate_services "${args[@]}" 2>&1); then
    tail -n 5 <<<"${output}" >&2
    die "could not restart the lab's services with ${wanted:-their default settings}"
  fi
  forget_containers
}
