# shellcheck shell=bash
# The floors of a connection run, measured before its levels (scripts/scenario.sh):
# what opening and holding a connection costs at the least on this machine,
# each by a minimal tool on the lab's own network, never by the lab's own
# components. scripts/labctl/evidence/floors.mjs reads DIR/floors/.
#   node: loadgen/floor/conn-floor.mjs, a client that only connects and a
#         server that only accepts, FLOOR_CONNECTIONS held; each says its
#         own CPU (user and system).
#   haproxy: the running HAProxy's image on a core of its own, answering
#         every request itself on a new connection (h2load, Connection:
#         close, on the other cores): its cgroup's CPU per request.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

readonly FLOOR_CONNECTIONS=10000
readonly FLOOR_REQUESTS=20000
readonly FLOOR_LABEL=haproxy-lab.floor

# floor_cleanup: the floors' containers gone (also on Ctrl-C: stop_runner).
floor_cleanup() {
  local ids=()
  mapfile -t ids < <(docker ps -aq --filter "label=${FLOOR_LABEL}" 2>/dev/null)
  [[ ${#ids[@]} -eq 0 ]] || docker rm -f "${ids[@]}" >/dev/null 2>&1 || true
}

# run_floors RUN_DIR: both floors into RUN_DIR/floors/.
run_floors() {
  local dir="$1/floors" net
  mkdir -p "${dir}"
  net="$(compose_project)_lab"
  log "floors: a bare Node client and server (${FLOOR_CONNECTIONS} connections held), HAProxy answering ${FLOOR_REQUESTS} requests on new connections"
  floor_cleanup
  node_floor "${dir}" "${net}" || log "floors: the Node pair did not finish (see ${dir#"${LAB_ROOT}/"}/node-*.txt)"
  haproxy_floor "${dir}" "${net}" || log "floors: HAProxy's did not finish (see ${dir#"${LAB_ROOT}/"}/haproxy-*.txt)"
  floor_cleanup
}

# node_floor DIR NETWORK: the server holds, the client opens FLOOR_CONNECTIONS.
node_floor() {
  local dir="$1" net="$2" image server nofile program rc=0
  image=$(env_value NODE_IMAGE) nofile=$(env_value NOFILE)
  program=$(<"${LAB_ROOT}/loadgen/floor/conn-floor.mjs")
  server=$(docker run -d --label "${FLOOR_LABEL}=node" --network "${net}" --ulimit "nofile=${nofile}:${nofile}" --memory 512m \
    --entrypoint node "${image}" --input-type=module -e "${program}" _ serve 9000) || return 1
  # Listening once it says so (node starts in a fraction of a second).
  for _ in $(seq 1 50); do docker logs "${server}" 2>&1 | grep -q listening && break; sleep 0.1; done
  docker run --rm --label "${FLOOR_LABEL}=node" --network "${net}" --ulimit "nofile=${nofile}:${nofile}" --memory 512m \
    --entrypoint node "${image}" --input-type=module -e "${program}" _ connect \
    "$(docker inspect -f "{{(index .NetworkSettings.Networks \"${net}\").IPAddress}}" "${server}")" 9000 "${FLOOR_CONNECTIONS}" \
    >"${dir}/node-client.json" 2>"${dir}/node-client-log.txt" || rc=$?
  docker kill -s TERM "${server}" >/dev/null 2>&1 || true
  docker wait "${server}" >/dev/null 2>&1 || true
  docker logs "${server}" >"${dir}/node-server.json" 2>"${dir}/node-server-log.txt" || true
  docker rm -f "${server}" >/dev/null 2>&1 || true
  return "${rc}"
}

# haproxy_floor DIR NETWORK: HAProxy (the image the lab runs) on the last
# core with a config that answers every request itself; h2load on the others.
haproxy_floor() {
  local dir="$1" net="$2" image h2 last id rc=0
  image=$(docker inspect -f '{{.Config.Image}}' "$(instance_container "$(first_instance)")") || return 1
  h2=$(env_value H2LOAD_IMAGE)
  last=$(($(docker info -f '{{.NCPU}}') - 1))
  cat >"${dir}/haproxy-floor.cfg" <<'CFG'
# The floor of a connection through HAProxy: one thread, every request on a
# new connection answered by HAProxy itself (scripts/lib/floors.sh).
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout client 10s
    timeout server 10s
    timeout connect 4s
frontend floor
    bind :8000
    http-request return status 200 content-type text/plain string ok
CFG
  chmod 644 "${dir}/haproxy-floor.cfg"
  id=$(docker run -d --label "${FLOOR_LABEL}=haproxy" --network "${net}" --network-alias floor-haproxy \
    --cpuset-cpus "${last}" --memory 256m -v "${dir}/haproxy-floor.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" \
    "${image}" haproxy -f /usr/local/etc/haproxy/haproxy.cfg) || return 1
  echo "image=${image} cpuset=${last} requests=${FLOOR_REQUESTS}" >"${dir}/haproxy-container.txt"
  sleep 1
  cgroup_cpu "${id}" >"${dir}/haproxy-cpu-before.txt"
  docker run --rm --label "${FLOOR_LABEL}=h2load" --network "${net}" --cpuset-cpus "0-$((last > 0 ? last - 1 : 0))" \
    --entrypoint h2load "${h2}" --h1 -n "${FLOOR_REQUESTS}" -c 20 -t 1 -H 'Connection: close' "http://$(docker inspect -f "{{(index .NetworkSettings.Networks \"${net}\").IPAddress}}" "${id}"):8000/" \
    >"${dir}/haproxy-h2load.txt" 2>&1 || rc=$?
  cgroup_cpu "${id}" >"${dir}/haproxy-cpu-after.txt"
  docker rm -f "${id}" >/dev/null 2>&1 || true
  return "${rc}"
}
