# shellcheck shell=bash
# Every knob in one table (docs/knobs.md): each environment variable
# compose.yaml, the scripts and the containers' programs read, with its
# default, meaning and where it acts. Run alone: scripts/test.sh static knobs

# Every name the code reads has a row, every row is read by something, and a
# default the table says comes from .env or compose.yaml is the value there
# (tests/lib/knobs.mjs; docs/knobs.md says what counts as a read). One line
# per difference, e.g. "docs/knobs.md lacks FOO, read by compose.yaml:12 ...".
test_static_knobs_table_matches_the_code() {
  in_image NODE_IMAGE node tests/lib/knobs.mjs
}

# knob_stop_read_back: "SERVICE DRAIN GRACE STOP_MS" for each backend service
# of the compose config on stdin: the SHUTDOWN_* it passes to the backend and
# its stop_grace_period in ms (a Go duration such as "15s" or "1m2.5s").
knob_stop_read_back() {
  in_image NODE_IMAGE node -e '
    const services = JSON.parse(require("fs").readFileSync(0, "utf8")).services;
    const unit = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
    const ms = (d) => [...String(d).matchAll(/([0-9.]+)(ns|us|µs|ms|s|m|h)/g)].reduce((t, [, v, u]) => t + v * unit[u], 0);
    for (const name of ["backend-slow", "backend-fast"]) {
      const s = services[name];
      console.log(name, s.environment.SHUTDOWN_DRAIN_MS, s.environment.SHUTDOWN_GRACE_MS, ms(s.stop_grace_period));
    }'
}

# The backends get SHUTDOWN_DRAIN_MS and SHUTDOWN_GRACE_MS from .env, and
# Docker waits for both before it kills a replica: stop_grace_period is their
# sum plus 2 s, whatever they are set to (compose.yaml writes the period as
# "${SHUTDOWN_DRAIN_MS}ms${SHUTDOWN_GRACE_MS}ms2s", a duration being the sum
# of its parts).
test_static_knobs_backend_stop_grace_period_is_drain_plus_grace() {
  local drain grace read
  drain=$(env_value SHUTDOWN_DRAIN_MS) grace=$(env_value SHUTDOWN_GRACE_MS)
  assert_match '^[0-9]+$' "${drain}" "SHUTDOWN_DRAIN_MS as compose sees it"
  assert_match '^[0-9]+$' "${grace}" "SHUTDOWN_GRACE_MS as compose sees it"
  read=$(compose config --format json backend-slow backend-fast | knob_stop_read_back)
  echo "${read}"
  assert_eq "backend-slow ${drain} ${grace} $((drain + grace + 2000))
backend-fast ${drain} ${grace} $((drain + grace + 2000))" "${read}" \
    "each backend's SHUTDOWN_DRAIN_MS, SHUTDOWN_GRACE_MS and stop_grace_period (ms)"
  read=$(SHUTDOWN_DRAIN_MS=500 SHUTDOWN_GRACE_MS=60000 compose config --format json backend-slow backend-fast | knob_stop_read_back)
  echo "${read}"
  assert_eq "backend-slow 500 60000 62500
backend-fast 500 60000 62500" "${read}" "the same with SHUTDOWN_DRAIN_MS=500 SHUTDOWN_GRACE_MS=60000"
}
