// How every load tool reads a knob's value, one module for both runtimes:
// k6's (the k6 scripts, through loadgen/lib/lab.js) and node's (the holder,
// the vegeta and h2load wrappers, the engine). Plain JavaScript with no
// imports, as k6 cannot load node's modules. A reader takes the environment
// as an object (k6's __ENV, node's process.env) and a knob's NAME; an empty
// value is an unset one; a bad value is a RangeError saying
// "NAME must be ... (got "x")".

export const bad = (name, what, raw) => new RangeError(`${name} must be ${what} (got ${JSON.stringify(String(raw))})`);

const text = (env, name) => (env[name] === undefined || env[name] === null ? '' : String(env[name]));

// Durations are spelled as Go's time.ParseDuration reads them (what k6 and
// vegeta take): 30s, 2m, 1m30s, 500ms, 1.5h, 250us; or bare seconds (20, 0.5).
const UNIT_NS = { h: 3600e9, m: 60e9, s: 1e9, ms: 1e6, us: 1e3, 'µs': 1e3, ns: 1 };
const NUMBER = '(?:\\d+(?:\\.\\d*)?|\\.\\d+)';
// "ms" before "m": the first unit that fits is taken.
const UNIT = '(?:ms|us|µs|ns|h|m|s)';
const SECONDS = new RegExp(`^${NUMBER}$`);
const SPELLED = new RegExp(`^(?:${NUMBER}${UNIT})+$`);
const PART = new RegExp(`(${NUMBER})(${UNIT})`, 'g');
export const DURATION_SPELLING = 'a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds';

// durationSeconds TEXT: TEXT in seconds, or null when it is not a duration.
// Summed in whole nanoseconds, as Go does, so 1m30.5s is 90.5 exactly.
export function durationSeconds(value) {
  const s = String(value);
  if (SECONDS.test(s)) return Number(s);
  if (!SPELLED.test(s)) return null;
  let ns = 0;
  PART.lastIndex = 0;
  for (let m = PART.exec(s); m; m = PART.exec(s)) ns += Math.round(Number(m[1]) * UNIT_NS[m[2]]);
  return ns / 1e9;
}

// goDuration SECONDS: the shortest Go spelling (90 → "1m30s", 0.5 →
// "500ms"), to the nanosecond: what the lab hands k6 and shows in messages.
export function goDuration(seconds) {
  let ns = Math.round(seconds * 1e9);
  if (ns === 0) return '0s';
  if (ns < 1e9) return ns % 1e6 === 0 ? `${ns / 1e6}ms` : ns % 1e3 === 0 ? `${ns / 1e3}us` : `${ns}ns`;
  const h = Math.floor(ns / 3600e9);
  ns -= h * 3600e9;
  const m = Math.floor(ns / 60e9);
  ns -= m * 60e9;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${ns ? `${ns / 1e9}s` : ''}`;
}

// duration ENV NAME DEFAULT [MIN MAX]: NAME in seconds (DEFAULT, in seconds,
// when unset), from MIN to MAX seconds.
export function duration(env, name, def, min = 0, max = Infinity) {
  const raw = text(env, name);
  const s = raw === '' ? def : durationSeconds(raw);
  if (s !== null && s >= min && s <= max) return s;
  const range = max === Infinity ? `, at least ${goDuration(min)}` : `, from ${goDuration(min)} to ${goDuration(max)}`;
  throw bad(name, `${DURATION_SPELLING}${range}`, raw);
}

// flag ENV NAME DEFAULT: true or false.
export function flag(env, name, def) {
  const raw = text(env, name);
  if (raw === '') return def;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw bad(name, 'true or false', raw);
}

// keepalive ENV: KEEPALIVE, the same default for every tool: kept-alive
// connections (false: a new connection per request, ab without -k).
export const keepalive = (env) => flag(env, 'KEEPALIVE', true);

// extraArgs ENV NAME OWN [SHORT_CLUSTERS]: NAME's words (split on spaces),
// a tool's own flags the wrapper passes on after its own. Each word is a
// flag (-x, --name, --name=value, -name for Go's flags) or one value right
// after a flag, and none is a URL, so no word can become the tool's target
// or script (a value after a flag that takes none still could). None may
// be a flag of OWN ({flag: 'the knob that sets it'}, '' for the wrapper's
// own), the flags the wrapper sets itself, by either dash count.
// SHORT_CLUSTERS: the tool reads "-abc" as -a -b -c and "-c5" as -c 5
// (getopt, k6's pflag), so a single-dash word is refused when any of its
// letters is a one-letter flag of OWN.
export function extraArgs(env, name, own, shortClusters = false) {
  const raw = text(env, name).trim();
  if (raw === '') return [];
  const words = raw.split(/ +/);
  const bare = (f) => f.replace(/^-+/, '');
  const letters = Object.keys(own).filter((f) => /^-[A-Za-z0-9]$/.test(f)).map(bare);
  let valueMayFollow = false;
  for (const word of words) {
    if (!/^[\x21-\x7e]+$/.test(word)) throw bad(name, 'flags in printable ASCII, separated by spaces', raw);
    if (word.includes('://')) throw bad(name, 'flags without a URL (TARGET and LOAD_PATH say where the load goes)', raw);
    if (!word.startsWith('-') || word === '-' || word === '--') {
      if (!valueMayFollow) throw bad(name, `flags, each followed by at most one value ("${word}" follows no flag)`, raw);
      valueMayFollow = false;
      continue;
    }
    const flagName = bare(word.split('=')[0]);
    const clustered = shortClusters && /^-[^-]/.test(word) ? [...flagName].filter((c) => letters.includes(c)) : [];
    const taken = Object.keys(own).find((f) => bare(f) === flagName) ?? (clustered.length ? `-${clustered[0]}` : undefined);
    if (taken) {
      const knob = own[taken];
      throw new RangeError(`${name} must not set ${taken}: the wrapper sets it itself${knob ? ` (from ${knob}: set that instead)` : ''} (got ${JSON.stringify(raw)})`);
    }
    valueMayFollow = !word.includes('=');
  }
  return words;
}
