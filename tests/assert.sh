# shellcheck shell=bash
# Assertions for the test groups (sourced by scripts/test.sh). Each prints
# what was expected and what came, and fails the test.

# "${AS_FROM_A_TERMINAL[@]}" COMMAND...: COMMAND with SIGHUP, SIGINT and
# SIGQUIT at their defaults, as a terminal's shell starts it. A suite started
# in the background (nohup, "cmd &" in a CI script) passes them on ignored,
# and a script cannot trap a signal ignored when it started: a test's Ctrl-C
# would do nothing. GNU env (coreutils 8.31+).
# shellcheck disable=SC2034,SC2054 # used by the groups; one argument with commas
readonly AS_FROM_A_TERMINAL=(env --default-signal=HUP,INT,QUIT)

fail() { echo "FAIL: $*" >&2; return 1; }

assert_eq() { # EXPECTED ACTUAL WHAT
  [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
}

assert_match() { # REGEX TEXT WHAT
  [[ "$2" =~ $1 ]] || fail "$3: '$2' does not match /$1/"
}

assert_ge() { # MIN ACTUAL WHAT (integers)
  [[ "$2" =~ ^[0-9]+$ ]] || fail "$3: '$2' is not a number"
  (("$2" >= "$1")) || fail "$3: expected at least $1, got $2"
}

# assert_fails_with REGEX COMMAND...: COMMAND exits non-zero and its stderr
# matches REGEX (the one clear line a user should see).
assert_fails_with() {
  local regex="$1" err rc=0
  shift
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  [[ ${rc} -ne 0 ]] || fail "'$*' should fail but exited 0"
  [[ "${err}" =~ ${regex} ]] || fail "'$*' stderr does not match /${regex}/: ${err}"
}

# ports_free WHO [PORT...]: the group's host ports (or PORTs), once its own
# containers are gone, answer nobody; else one line naming who holds the
# first taken one. WHO names the group in that line: two test sessions on
# one Docker (two clones' CI at once) would otherwise fail every test with
# compose's "port is already allocated".
ports_free() {
  local who="$1" port holder
  shift
  [[ $# -gt 0 ]] || set -- "${HAPROXY_HTTP_PORT}" "${HAPROXY_HTTPS_PORT}" "${HAPROXY_STATS_PORT}" "${HAPROXY_METRICS_PORT}" "${PROMETHEUS_PORT}"
  for port in "$@"; do
    (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null || continue
    holder=$(docker ps --filter "publish=${port}" --format '{{.Names}}' 2>/dev/null | paste -sd, -)
    echo "${who}: 127.0.0.1:${port} is taken by ${holder:-a process on this host, not a container} (another ${who} session on this Docker?): let it end or stop it, then rerun" >&2
    return 1
  done
}

# in_image VAR ARGS...: docker run --rm the image named VAR in the env files,
# with the repository mounted read-only at /lab, no network.
in_image() {
  local image
  image=$(env_value "$1")
  shift
  docker run --rm -i --network none -v "${LAB_ROOT}:/lab:ro" -w /lab "${image}" "$@"
}
