#!/bin/sh
# Entrypoint of a loadgen replica: "run.sh SCRIPT [k6 args...]".
# With LOADGEN_REPLICAS=N and "--scale loadgen=N", each replica runs its own
# k6 execution segment, so N replicas together produce exactly one test's load.
# The replica number comes from the container name (haproxy-lab-loadgen-2),
# which Docker's DNS gives back for the container's address; LOADGEN_INDEX
# overrides it (e.g. for "docker compose run").
set -eu

die() { echo "loadgen: $*" >&2; exit 2; }

replicas="${LOADGEN_REPLICAS:-1}"
case "${replicas}" in ''|*[!0-9]*|0) die "LOADGEN_REPLICAS must be a positive integer (got '${replicas}')" ;; esac

index="${LOADGEN_INDEX:-}"
if [ -z "${index}" ]; then
  if [ "${replicas}" -eq 1 ]; then
    index=1
  else
    ip=$(hostname -i | cut -d' ' -f1)
    index=$(busybox nslookup "${ip}" 127.0.0.11 2>/dev/null | grep -o -- '-loadgen-[0-9][0-9]*' | head -n1 | grep -o '[0-9]*$' || true)
    [ -n "${index}" ] || die "cannot work out this replica's number from DNS; set LOADGEN_INDEX"
  fi
fi
case "${index}" in ''|*[!0-9]*|0) die "LOADGEN_INDEX must be a positive integer (got '${index}')" ;; esac
[ "${index}" -le "${replicas}" ] || die "replica ${index} of ${replicas}: scale loadgen to LOADGEN_REPLICAS (--scale loadgen=${replicas})"

script="${1:-/loadgen/closed.js}"
[ $# -gt 0 ] && shift

export LOADGEN_INDEX="${index}"
# k6 writes the summary file but does not create its folder. Beside it, this
# replica's own kernel view (its network namespace is its own): the TCP
# counters before and after (SYN retransmits: TcpExt.TCPSynRetrans) and the
# SYN settings the clients ran with, read back.
evidence=""
if [ -n "${LOADGEN_SUMMARY_DIR:-}" ]; then
  mkdir -p "/results/${LOADGEN_SUMMARY_DIR}"
  evidence="/results/${LOADGEN_SUMMARY_DIR}/loadgen-${index}"
  cat /proc/net/netstat >"${evidence}-netstat-before.txt"
  for name in tcp_syn_retries tcp_syn_linear_timeouts; do
    if [ -r "/proc/sys/net/ipv4/${name}" ]; then echo "net.ipv4.${name} $(cat "/proc/sys/net/ipv4/${name}")"; fi
  done >"${evidence}-sysctl.txt"
  # The k6 that ran, for the report's versions.
  k6 version >"${evidence}-version.txt" 2>&1 || true
fi
echo "loadgen: replica ${index}/${replicas}, testid ${TESTID:-adhoc}, target ${TARGET:-unset}, script ${script}${LOADGEN_EXTRA_ARGS:+, k6 flags ${LOADGEN_EXTRA_ARGS}}"
# LOADGEN_EXTRA_ARGS: more of k6 run's flags, split on spaces (no globbing);
# every script's init (loadgen/lib/lab.js: k6-knobs.mjs checkK6) refuses,
# before any load, a word that is neither a flag nor its value, and a flag
# the lines above or the scripts' options set.
set -f
# shellcheck disable=SC2086 # split into words on purpose
k6 run --quiet \
  --execution-segment "$((index - 1))/${replicas}:${index}/${replicas}" \
  --execution-segment-sequence "$(awk -v n="${replicas}" 'BEGIN { for (i = 0; i <= n; i++) printf "%s%d/%d", (i ? "," : ""), i, n }')" \
  --tag "testid=${TESTID:-adhoc}" --tag "instance=loadgen-${index}" \
  -o experimental-prometheus-rw \
  ${LOADGEN_EXTRA_ARGS:-} "$@" "${script}" &
k6_pid=$!
set +f
# This shell is PID 1: pass a stop (docker stop, Ctrl-C) on to k6, which still
# writes its summary, then wait for k6 itself to end.
trap 'kill -TERM "${k6_pid}" 2>/dev/null || true' TERM INT
rc=0
wait "${k6_pid}" || rc=$?
while kill -0 "${k6_pid}" 2>/dev/null; do
  rc=0
  wait "${k6_pid}" || rc=$?
done
if [ -n "${evidence}" ]; then cat /proc/net/netstat >"${evidence}-netstat-after.txt"; fi
exit "${rc}"
