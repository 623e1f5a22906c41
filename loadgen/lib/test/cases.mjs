// How every load tool reads its knobs (loadgen/lib/values.mjs), as tables
// for both runtimes: values.test.mjs runs them in node, values.k6.js in k6
// (tests/unit.sh), so the two cannot read a knob apart.

// The durations, and what each means in seconds (null: refused).
export const DURATION_CASES = [
  // Go's spelling (time.ParseDuration).
  ['30s', 30], ['2m', 120], ['1m30s', 90], ['500ms', 0.5], ['1h', 3600], ['1.5h', 5400], ['2h45m', 9900],
  ['1m30.5s', 90.5], ['250us', 0.00025], ['250µs', 0.00025], ['1500ns', 0.0000015], ['0s', 0], ['.5s', 0.5], ['5.s', 5],
  ['1s500ms', 1.5], ['10m0s', 600],
  // Bare seconds, as the holder and the wrappers always took them.
  ['20', 20], ['0', 0], ['0.5', 0.5], ['86400', 86400],
  // Refused: no number, no unit Go knows, signs, blanks, other spellings.
  ['', null], ['s', null], ['m30', null], ['1d', null], ['1 s', null], [' 1s', null], ['1s ', null], ['-1s', null],
  ['+1s', null], ['1e3', null], ['1,5s', null], ['1S', null], ['1min', null], ['PT30S', null], ['10sec', null],
  ['1h-5m', null], ['.', null], ['.s', null],
];

// duration() of the same module: KNOB, the value, MIN, MAX, then the seconds
// or the error's message.
export const READ_CASES = [
  ['DURATION', '1m30s', 0.1, 86400, 90],
  ['DURATION', '', 0.1, 86400, 10],
  ['DURATION', '20', 0.1, 86400, 20],
  ['DURATION', '50ms', 0.1, 86400,
    'DURATION must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 100ms to 24h (got "50ms")'],
  ['TIMEOUT', 'soon', 0.001, Infinity,
    'TIMEOUT must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, at least 1ms (got "soon")'],
  ['HOLD', '25h', 0, 86400,
    'HOLD must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 0s to 24h (got "25h")'],
];

// KEEPALIVE's value, then what it reads as or the error's message.
export const KEEPALIVE_CASES = [
  [undefined, true], ['', true], ['true', true], ['false', false],
  ['no', 'KEEPALIVE must be true or false (got "no")'], ['False', 'KEEPALIVE must be true or false (got "False")'],
];

// extraArgs(): the value of X_ARGS, whether the tool reads "-abc" as -a -b
// -c (SHORT_CLUSTERS), then its words or the error's message. The flags
// the wrapper sets itself: EXTRA_OWN.
export const EXTRA_OWN = { '-rate': 'RATE', '-output': '', '-c': 'CONNECTIONS', '--clients': 'CONNECTIONS' };
export const EXTRA_ARGS_CASES = [
  ['', false, []],
  ['  -insecure  -header X-A:1 ', false, ['-insecure', '-header', 'X-A:1']],
  ['--sni=lab -T 5s', true, ['--sni=lab', '-T', '5s']],
  // Go's flags are long with one dash: -cert is not -c clustered.
  ['-cert /certs/c.pem', false, ['-cert', '/certs/c.pem']],
  ['-rate=5', false, 'X_ARGS must not set -rate: the wrapper sets it itself (from RATE: set that instead) (got "-rate=5")'],
  ['--rate 5', false, 'X_ARGS must not set -rate: the wrapper sets it itself (from RATE: set that instead) (got "--rate 5")'],
  ['-output /tmp/x', false, 'X_ARGS must not set -output: the wrapper sets it itself (got "-output /tmp/x")'],
  ['-c100', true, 'X_ARGS must not set -c: the wrapper sets it itself (from CONNECTIONS: set that instead) (got "-c100")'],
  ['-vc 100', true, 'X_ARGS must not set -c: the wrapper sets it itself (from CONNECTIONS: set that instead) (got "-vc 100")'],
  ['--clients=9', true, 'X_ARGS must not set --clients: the wrapper sets it itself (from CONNECTIONS: set that instead) (got "--clients=9")'],
  ['-v one two', true, 'X_ARGS must be flags, each followed by at most one value ("two" follows no flag) (got "-v one two")'],
  ['script.js', true, 'X_ARGS must be flags, each followed by at most one value ("script.js" follows no flag) (got "script.js")'],
  ['-v=1 x', true, 'X_ARGS must be flags, each followed by at most one value ("x" follows no flag) (got "-v=1 x")'],
  ['-H http://other:80/', true, 'X_ARGS must be flags without a URL (TARGET and LOAD_PATH say where the load goes) (got "-H http://other:80/")'],
  ['-H\tX', true, 'X_ARGS must be flags in printable ASCII, separated by spaces (got "-H\\tX")'],
];
