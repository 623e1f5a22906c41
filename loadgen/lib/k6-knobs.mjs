// The k6 scripts' knobs that need more than a string: their durations, the
// flags LOADGEN_EXTRA_ARGS may not set, KEEPALIVE. Plain JavaScript: the
// scripts read their values through loadgen/lib/lab.js in k6's runtime, and
// the engine (node) checks a scenario's with the same code before anything
// runs (scripts/labctl/core/loadtools.mjs).
import { duration, extraArgs, goDuration, keepalive } from './values.mjs';

// The scripts' durations, each with the least it may be (in seconds).
export const DURATIONS = { DURATION: 0.001, MAX_DURATION: 0.001, TIMEOUT: 0.001, GRACEFUL_STOP: 0, START_SPREAD: 0 };

// The k6 flags run.sh and the scripts' options set, with the knob each
// comes from ('': the wrapper's own): LOADGEN_EXTRA_ARGS may add any other
// of k6 run's (--http-debug, --insecure-skip-tls-verify, --rps, ...).
export const OWN_FLAGS = {
  '--execution-segment': 'LOADGEN_INDEX', '--execution-segment-sequence': 'LOADGEN_REPLICAS', '--tag': 'TESTID',
  '-o': '', '--out': '', '-q': '', '--quiet': '', '-u': 'VUS', '--vus': 'VUS', '-d': 'DURATION', '--duration': 'DURATION',
  '-i': 'ITERATIONS', '--iterations': 'ITERATIONS', '-s': 'DURATION', '--stage': 'DURATION', '-e': '', '--env': '',
  '--include-system-env-vars': '', '-c': '', '--config': '', '--no-connection-reuse': 'KEEPALIVE',
  '--discard-response-bodies': '', '--summary-trend-stats': '', '--summary-mode': '', '--no-summary': '',
  '-p': '', '--paused': '', '-l': '', '--linger': '',
};

// seconds ENV NAME DEFAULT: one of DURATIONS in seconds (DEFAULT when unset).
export const seconds = (env, name, def) => duration(env, name, def, DURATIONS[name]);

// k6Duration ENV NAME DEFAULT: the same in Go's spelling, what k6's options
// and request timeouts take, so k6 never reads the knob's text itself.
export const k6Duration = (env, name, def) => goDuration(seconds(env, name, def));

// checkK6 ENV: throws the RangeError a k6 script would for a bad duration,
// KEEPALIVE or LOADGEN_EXTRA_ARGS (the scripts' numbers check themselves).
export function checkK6(env) {
  for (const [name, least] of Object.entries(DURATIONS)) seconds(env, name, least);
  keepalive(env);
  extraArgs(env, 'LOADGEN_EXTRA_ARGS', OWN_FLAGS, true);
}
