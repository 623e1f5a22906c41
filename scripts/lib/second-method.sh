# shellcheck shell=bash
# The second method after a curve's top step: wrk, unpaced, over the lab's
# bridge and over loopback, with HAProxy's cgroup CPU and counters read
# around each run (the report sets it beside the step's own figure).
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The second method's wrk containers carry this label: the runner's cleanup
# removes any a Ctrl-C left (stop_second_method).
readonly SECOND_METHOD_LABEL="haproxy-lab.second-method"

# second_method DIR: when the step asks for one (check.tool in step.env), an
# independent measurement of HAProxy's cost at this step's load: wrk, not the
# curve's own tool, unpaced for check.seconds on the other services' cores,
# twice: over the lab's bridge network, the curve's path (the two must
# agree), then from inside HAProxy's network namespace (loopback; its hosts
# file maps the target's name there): the bridge's share. HAProxy's cgroup CPU
# and show info (CumReq, CumConns, CumSslConns) are read right before and
# after each: no file the step's own figure uses. DIR/check/: wrk-PATH.txt
# (wrk's own output), check.env (the readings, PATH.NAME=value).
second_method() {
  local out="$1/check" container url host cpuset network path args=()
  [[ "$(step_value "$1" check.tool)" == wrk ]] || return 0
  url=$(step_value "$1" check.url) cpuset=$(step_value "$1" compose.LAB_CPUSET)
  host=${url#*://} host=${host%%[:/]*}
  container=$(instance_container "$(first_instance)") || { log "no HAProxy container: no second method for this step"; return 0; }
  network=$(docker inspect -f '{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}' "${container}") network=${network%% *}
  mkdir -p "${out}"
  printf '127.0.0.1 localhost %s\n' "${host}" >"${out}/hosts"
  args=(-t1 -c "$(step_value "$1" check.connections)" -d "$(step_value "$1" check.seconds)s")
  [[ "$(step_value "$1" check.close)" != true ]] || args+=(-H "Connection: close")
  {
    echo "# step $(step_value "$1" index)'s second method (scripts/lib/second-method.sh second_method); read by scripts/labctl/evidence/run.mjs"
    echo "tool=wrk"
    echo "url=${url}"
    echo "args=${args[*]}"
  } >"${out}/check.env"
  for path in bridge loopback; do
    log "  second method: wrk ${args[*]} ${url} over the ${path}"
    if [[ "${path}" == bridge ]]; then
      wrk_reading "${out}" "${path}" "${container}" "${cpuset}" --network "${network}" -- "${args[@]}" "${url}"
    else
      wrk_reading "${out}" "${path}" "${container}" "${cpuset}" --network "container:${container}" \
        -v "${out}/hosts:/etc/hosts:ro" -- "${args[@]}" "${url}"
    fi
  done
}

# stop_second_method: a wrk of second_method still running, gone.
stop_second_method() {
  local ids
  ids=$(docker ps -q --filter "label=${SECOND_METHOD_LABEL}" 2>/dev/null) || return 0
  # shellcheck disable=SC2086 # one id per word
  [[ -z "${ids}" ]] || docker rm -f ${ids} >/dev/null 2>&1 || true
}

# container_cpu_time ID: "VALUE UNIT" of the container's CPU time so far (cgroup_cpu's line of it).
container_cpu_time() { cgroup_cpu "$1" | awk '$3 == "ns" || $3 == "us" { print $2, $3; exit }'; }

# wrk_reading OUT PATH CONTAINER CPUSET DOCKER_ARGS... -- WRK_ARGS...: one
# wrk run (second_method), PATH.NAME=value readings appended to OUT/check.env.
wrk_reading() {
  local out="$1" path="$2" container="$3" cpuset="$4" cpu_before cpu_after at_before at_after info_before info_after client key line
  local docker_args=()
  shift 4
  while [[ $# -gt 0 && "$1" != -- ]]; do docker_args+=("$1"); shift; done
  shift
  info_before=$(haproxy_cli "show info") at_before=$(now_ms) cpu_before=$(container_cpu_time "${container}")
  # wrk's output on stderr, kept; on stdout its exit and its cgroup's CPU
  # time, read by its shell once wrk is done.
  # shellcheck disable=SC2016 # expanded by the container's sh
  client=$(docker run --rm --label "${SECOND_METHOD_LABEL}" "${docker_args[@]}" ${cpuset:+--cpuset-cpus "${cpuset}"} \
    --user "$(env_value LAB_UID):$(env_value LAB_GID)" --read-only --tmpfs /tmp --cap-drop ALL \
    --security-opt no-new-privileges --entrypoint sh "$(env_value H2LOAD_IMAGE)" -c \
    'wrk "$@" >&2; rc=$?
     cpu=$(cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null || sed -n "s/^usage_usec \([0-9]*\)$/\1000/p" /sys/fs/cgroup/cpu.stat)
     echo "wrk_exit=$rc"; echo "client_cpu_ns=$cpu"' _ "$@" 2>"${out}/wrk-${path}.txt") || true
  cpu_after=$(container_cpu_time "${container}") at_after=$(now_ms) info_after=$(haproxy_cli "show info")
  {
    echo "${path}.at_before_ms=${at_before}"
    echo "${path}.at_after_ms=${at_after}"
    echo "${path}.haproxy_cpu_before=${cpu_before}"
    echo "${path}.haproxy_cpu_after=${cpu_after}"
    for key in CumReq CumConns CumSslConns; do
      echo "${path}.${key}_before=$(sed -n "s/^${key}: //p" <<<"${info_before}" | tr -d '\r')"
      echo "${path}.${key}_after=$(sed -n "s/^${key}: //p" <<<"${info_after}" | tr -d '\r')"
    done
    while IFS= read -r line; do echo "${path}.${line}"; done <<<"${client}"
  } >>"${out}/check.env"
}
