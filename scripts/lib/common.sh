# shellcheck shell=bash
# Helpers shared by the lab's scripts (sourced, not run). Needs only bash and
# Docker with Compose v2 on the host: anything heavier runs in a lab container.
# Each file that uses these sources this one; once is enough.
[[ -z "${LAB_COMMON_SOURCED:-}" ]] || return 0
LAB_COMMON_SOURCED=1

LAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly LAB_ROOT
# Files the load generators write (k6 summaries) belong to the user, not root.
LAB_UID="${LAB_UID:-$(id -u)}"
LAB_GID="${LAB_GID:-$(id -g)}"
export LAB_UID LAB_GID

die() { echo "${PROG:-lab}: $*" >&2; exit 1; }
# A log line that cannot be written (a terminal that has gone) stops nothing.
log() { printf '[%s %s] %s\n' "${PROG:-lab}" "$(date +%H:%M:%S)" "$*" 2>/dev/null || true; }

# One scenario at a time on a lab: two would reconfigure and restart the same
# HAProxy under each other's load. The lock is a symbolic link (made with
# its text in one step, by ln -s, which fails when it exists; no flock on a
# Mac) whose text is the owner's pid, the time that process started, and
# its command (run_lock_text). A lock whose process is gone, or whose pid
# now names another process (a reboot, a pid reused), is taken over, by one
# runner at a time (the takeover folder).
RUN_LOCK="${LAB_ROOT}/results/.running-${COMPOSE_PROJECT_NAME:-lab}"
readonly RUN_LOCK
run_lock_held=0

# process_started PID: when PID started, as ps says (another process that
# gets the same pid later has another time).
process_started() { LC_ALL=C TZ=UTC ps -o lstart= -p "$1" 2>/dev/null | sed 's/^ *//; s/ *$//; s/ \{1,\}/_/g'; }

# run_lock_text PID COMMAND: the lock's text for PID running COMMAND.
run_lock_text() { echo "$1 $(process_started "$1") $2"; }

# running_scenario: "pid N: COMMAND" of the scenario running on this lab, else status 1.
running_scenario() {
  local text pid started command
  text=$(readlink "${RUN_LOCK}" 2>/dev/null) || return 1
  read -r pid started command <<<"${text}"
  [[ "${pid}" =~ ^[0-9]+$ && -n "${started}" && "$(process_started "${pid}")" == "${started}" ]] || return 1
  echo "pid ${pid}: ${command}"
}

# take_run_lock COMMAND: this shell owns the lab's run lock, or one line and exit 1.
take_run_lock() {
  local running takeover="${RUN_LOCK}.takeover"
  mkdir -p "${LAB_ROOT}/results"
  until ln -s "$(run_lock_text "$$" "$1")" "${RUN_LOCK}" 2>/dev/null; do
    running=$(running_scenario) \
      && die "another scenario runs on this lab (${running}): wait for it to end, or stop it (Ctrl-C in its terminal)"
    if mkdir "${takeover}" 2>/dev/null; then
      # Still a stale lock, not one another runner has just taken?
      running_scenario >/dev/null || rm -rf "${RUN_LOCK}"
      rmdir "${takeover}"
    else
      # A runner taking over; or one killed while it did, a minute ago.
      [[ -z "$(find "${takeover}" -maxdepth 0 -mmin +1 2>/dev/null)" ]] || rmdir "${takeover}" 2>/dev/null || true
      sleep 0.2
    fi
  done
  run_lock_held=1
}

# release_run_lock: the lock gone, if this shell took it.
release_run_lock() {
  [[ ${run_lock_held} -eq 1 ]] || return 0
  rm -f "${RUN_LOCK}"
  run_lock_held=0
}

cd "${LAB_ROOT}" || exit 1

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND, after 0.1, 0.2 and
# 0.5 s, then once a second: what it mostly waits for (a reload's new worker,
# a restarted container) is there within a second, and a whole second's
# sleep after the first try cost a scenario about 1 s a step.
wait_for() {
  local timeout="$1" what="$2" start=${SECONDS} pause=0.1
  shift 2
  until "$@"; do
    if ((SECONDS - start >= timeout)); then
      echo "timed out after ${timeout}s waiting for ${what}" >&2
      return 1
    fi
    sleep "${pause}"
    case "${pause}" in 0.1) pause=0.2 ;; 0.2) pause=0.5 ;; *) pause=1 ;; esac
  done
}

# now_ms: milliseconds since the epoch (Grafana's time unit, the run folder's).
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The helpers by job, each its own file.
# shellcheck source=scripts/lib/env.sh
source "${LAB_ROOT}/scripts/lib/env.sh"
# shellcheck source=scripts/lib/docker.sh
source "${LAB_ROOT}/scripts/lib/docker.sh"
# shellcheck source=scripts/lib/haproxy.sh
source "${LAB_ROOT}/scripts/lib/haproxy.sh"
# shellcheck source=scripts/lib/cgroups.sh
source "${LAB_ROOT}/scripts/lib/cgroups.sh"
# shellcheck source=scripts/lib/engine.sh
source "${LAB_ROOT}/scripts/lib/engine.sh"
