#!/usr/bin/env bash
# The floor of one core of HAProxy against one core of client on this
# machine, with no lab around them: HAProxy (the lab's image, the ceiling's
# plain kept-alive config) alone on the last core, h2load alone on the other,
# unpaced, 50 connections, 10 s; over the Docker bridge, over loopback (h2load
# in HAProxy's network namespace), and pipelined 4 deep over the bridge. Per
# run: h2load's own output, each core's /proc/stat split over the run,
# HAProxy's cgroup CPU over the run.
set -euo pipefail
out=$1 cfg=$2 image=${3:-haproxy-lab/haproxy:3.2} client=${4:-haproxy-lab/h2load:debian}
mkdir -p "${out}"
net=floor-net
cleanup() { docker rm -f floor-haproxy >/dev/null 2>&1 || true; docker network rm "${net}" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
docker network create "${net}" >/dev/null
last=$(( $(nproc) - 1 ))
docker run -d --name floor-haproxy --cpuset-cpus "${last}" --network "${net}" --ulimit nofile=20000:20000 \
  -v "${cfg}:/usr/local/etc/haproxy/haproxy.cfg:ro" -v haproxy-lab_haproxy-certs:/etc/haproxy-certs:ro \
  -e LAB_ADMIN_SOCKET=/tmp/admin.sock -e LAB_STATS_SOCKET=/tmp/stats.sock "${image}" >/dev/null
# HAProxy binds once its server templates resolved (libc, then none: the
# lab's backends are not on this network), which takes a while here.
for _ in $(seq 1 120); do
  docker run --rm --network "${net}" --entrypoint h2load "${client}" -n 1 -c 1 http://floor-haproxy:8080/self 2>/dev/null | grep -q '1 succeeded' && break
  sleep 1
done
cg=/sys/fs/cgroup/cpuacct/docker/$(docker inspect -f '{{.Id}}' floor-haproxy)/cpuacct.usage
run() {
  local name=$1; shift
  grep '^cpu' /proc/stat >"${out}/${name}-proc-stat-before.txt"; cat "${cg}" >"${out}/${name}-haproxy-cpuacct-before.txt"
  docker run --rm --cpuset-cpus 0 "$@" >"${out}/${name}-h2load.txt" 2>&1
  grep '^cpu' /proc/stat >"${out}/${name}-proc-stat-after.txt"; cat "${cg}" >"${out}/${name}-haproxy-cpuacct-after.txt"
}
run bridge --network "${net}" --entrypoint h2load "${client}" -c 50 -t 1 -D 10 http://floor-haproxy:8080/self
run loopback --network container:floor-haproxy --entrypoint h2load "${client}" -c 50 -t 1 -D 10 http://127.0.0.1:8080/self
run bridge-pipelined-4 --network "${net}" --entrypoint h2load "${client}" -c 50 -m 4 -t 1 -D 10 http://floor-haproxy:8080/self
docker inspect -f '{{.Config.Image}} {{.HostConfig.CpusetCpus}}' floor-haproxy >"${out}/haproxy-container.txt"
