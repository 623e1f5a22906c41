#!/bin/sh
# Usage: send-results.sh COMMAND [ARGS...]
#
# A load tool's entrypoint on a Swarm (scripts/labctl/swarm/stack.mjs puts it
# before the tool's own entrypoint and command): runs COMMAND, then sends
# every file it wrote under /results/$LOADGEN_SUMMARY_DIR (summaries, its
# kernel's counters, each in the tool's own format) to the runner's collector
# ($COLLECTOR_URL/<path under /results>, scripts/labctl/swarm/collector.mjs,
# with the run's $COLLECTOR_TOKEN),
# since a replica on another node writes to its own disk. Exits with
# COMMAND's status, or 3 when a file could not be sent (the runner then
# names the replica). One host never runs this: there /results is the
# checkout's results folder.
set -u

die() { echo "send-results: $*" >&2; exit 2; }
[ $# -gt 0 ] || die "no command to run"
[ -n "${COLLECTOR_URL:-}" ] || die "COLLECTOR_URL is not set"
[ -n "${COLLECTOR_TOKEN:-}" ] || die "COLLECTOR_TOKEN is not set"

"$@" &
pid=$!
# Passed on (a stop, Ctrl-C): the tool still writes its summary, which is sent.
trap 'kill -TERM "${pid}" 2>/dev/null || true' TERM INT
rc=0
wait "${pid}" || rc=$?
while kill -0 "${pid}" 2>/dev/null; do
  rc=0
  wait "${pid}" || rc=$?
done

dir="/results/${LOADGEN_SUMMARY_DIR:-}"
[ -n "${LOADGEN_SUMMARY_DIR:-}" ] && [ -d "${dir}" ] || exit "${rc}"
sent=0 failed=0
for file in $(find "${dir}" -type f | sort); do
  tries=0
  # A few tries: the collector may be busy with another replica's 100 KB.
  until wget -q -O /dev/null -T 30 --header "Authorization: Bearer ${COLLECTOR_TOKEN}" \
    --post-file="${file}" "${COLLECTOR_URL}/${file#/results/}"; do
    tries=$((tries + 1))
    if [ "${tries}" -ge 3 ]; then
      echo "send-results: could not send ${file#/results/} to ${COLLECTOR_URL} (3 tries)" >&2
      failed=$((failed + 1))
      break
    fi
    sleep 1
  done
  [ "${tries}" -ge 3 ] || sent=$((sent + 1))
done
echo "send-results: ${sent} files sent to ${COLLECTOR_URL}"
[ "${failed}" -eq 0 ] || exit 3
exit "${rc}"
