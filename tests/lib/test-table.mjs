// docs/testing.md's table of tests: each test, its tier (the group that runs
// it), what it proves (the first sentence of the comment above it, else its
// name) and its time in the newest kept run that ran it.
// Also the table of kept runs (docs/testing.md) and README's line on the newest
// kept CI run: each between its markers, wherever a file has them.
//   node tests/lib/test-table.mjs LIST TIMES_DIR [--check FILE... | --write FILE...]
// LIST (- for stdin): the output of scripts/test.sh --list ("GROUP NAME FILE:LINE" lines).
// TIMES_DIR: docs/runs/tests, one folder per kept run, each with SUITE-times.txt
// files ("test NAME SECONDS" and "group NAME SECONDS" lines, scripts/test.sh's
// TEST_TIMES; .ci/run writes newest- and floor-times.txt, the floor group's) and summary.txt (.ci/run's last lines). With no option the
// table goes to stdout; --check exits 1 naming the first difference in each
// region of each FILE, --write puts each region in FILE between its markers.
import fs from 'node:fs';
import path from 'node:path';

const BEGIN = '<!-- test-table: made by scripts/test-table.sh from scripts/test.sh --list and docs/runs/tests; do not edit -->';
const END = '<!-- /test-table -->';
const RUNS_BEGIN = '<!-- test-runs: made by scripts/test-table.sh from docs/runs/tests; do not edit -->';
const RUNS_END = '<!-- /test-runs -->';
const LINE_BEGIN = '<!-- test-time: made by scripts/test-table.sh from the newest kept CI run in docs/runs/tests; do not edit -->';
const LINE_END = '<!-- /test-time -->';
const TIER_ORDER = ['static', 'unit', 'e2e', 'lessons', 'slow', 'floor', 'swarm'];

// commentAbove LINES LINE: the block of "#" lines right above LINE (for a
// test made by eval in a loop, the block above that loop), as one string.
function commentAbove(lines, line) {
  let i = line - 2;
  if (/\beval\b/.test(lines[line - 1] ?? '')) while (i >= 0 && !lines[i].startsWith('#')) i -= 1;
  const block = [];
  for (; i >= 0 && lines[i].startsWith('#'); i -= 1) block.unshift(lines[i].replace(/^#\s?/, ''));
  return block.filter((l) => !/^shellcheck /.test(l)).join(' ').trim();
}

// firstSentence TEXT: up to the first ". " (or all of it), without a trailing period.
function firstSentence(text) {
  const m = /^(.*?[^.]\.)(\s|$)/.exec(text);
  return (m ? m[1] : text).replace(/\.$/, '').replace(/\|/g, '\\|');
}

function readTimes(dir) {
  const times = new Map(); // name -> { seconds, run }
  const groups = new Map(); // "run group" -> seconds
  const runs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((d) => /^\d{8}T\d{6}Z$/.test(d)).sort() : [];
  for (const run of runs) { // oldest first: the newest run's figure wins
    // Each suite's times (scripts/test.sh's TEST_TIMES). In floor-times.txt
    // only the floor group's own: older runs re-ran default-tier tests there
    // on the oldest Compose.
    const files = fs.readdirSync(path.join(dir, run)).filter((f) => f.endsWith('-times.txt'));
    for (const [file, row] of files.flatMap((f) => fs.readFileSync(path.join(dir, run, f), 'utf8').split('\n').map((r) => [f, r]))) {
      const [kind, name, seconds] = row.trim().split(/\s+/);
      if (file === 'floor-times.txt' && !name?.startsWith('floor')) continue;
      if (kind === 'test') times.set(name, { seconds: Number(seconds), run });
      if (kind === 'group') groups.set(`${run} ${name}`, Number(seconds));
    }
  }
  return { times, groups, runs };
}

// runs DIR: each kept run, newest first: { run, ci, suites: [{ what, tally, time }], speed, whole }.
// A CI run (.ci/run's summary.txt) is read from its summary; another (a named
// group's run) from its times files' "result" and "speed" lines (scripts/test.sh).
function runs(dir) {
  const found = [];
  for (const run of readTimes(dir).runs.slice().reverse()) {
    const at = path.join(dir, run);
    const summaryFile = path.join(at, 'summary.txt');
    if (fs.existsSync(summaryFile)) {
      const text = fs.readFileSync(summaryFile, 'utf8');
      const suites = [...text.matchAll(/^Compose (.*?), (scripts\/test\.sh[^:]*): (\d+ passed, \d+ failed) in (\S+)$/gm)]
        .map((m) => ({ what: `\`${m[2]}\` on Compose ${m[1]}`, tally: m[3], time: m[4] }));
      const speed = /RSA-2048 sign (\S+) µs before the tests, (\S+) µs after/.exec(text);
      const whole = /^whole run (\S+);/m.exec(text);
      found.push({ run, ci: true, suites, speed: speed ? [speed[1], speed[2]] : null, whole: whole ? whole[1] : null });
      continue;
    }
    const rows = fs.readdirSync(at).filter((f) => f.endsWith('-times.txt'))
      .flatMap((f) => fs.readFileSync(path.join(at, f), 'utf8').split('\n')).map((r) => r.trim().split(/\s+/));
    const suites = rows.filter((r) => r[0] === 'result').map((r) => ({
      what: `\`scripts/test.sh${r.length > 4 ? ` ${r.slice(4).join(' ')}` : ''}\``,
      tally: `${r[1]} passed, ${r[2]} failed`, time: duration(Number(r[3])),
    }));
    const speeds = rows.filter((r) => r[0] === 'speed' && r[2]);
    const before = speeds.find((r) => r[1] === 'before');
    const after = [...speeds].reverse().find((r) => r[1] === 'after');
    found.push({ run, ci: false, suites, speed: before && after ? [before[2], after[2]] : null, whole: null });
  }
  return found;
}

// runsTable DIR: docs/testing.md's table of the kept runs.
export function runsTable(dir) {
  return [
    '| kept run | what ran: tally, time | RSA-2048 sign, before and after (µs) | whole run |',
    '| --- | --- | --- | --- |',
    ...runs(dir).map((r) => `| [${r.run}](runs/tests/${r.run}/)${r.ci ? ' (`.ci/run`, a fresh clone)' : ''} | ${r.suites.length
      ? r.suites.map((x) => `${x.what.replace(/\|/g, '\\|')}: ${x.tally}, ${x.time}`).join('; ')
      : 'no result recorded (its README.md says what ran)'} | ${r.speed ? r.speed.join(', ') : 'not recorded'} | ${r.whole ?? '—'} |`),
  ].join('\n');
}

// timeLine DIR: README's sentence on the newest kept CI run.
export function timeLine(dir) {
  const ci = runs(dir).find((r) => r.ci && r.suites.length > 0);
  if (!ci) return 'No CI run is kept yet (docs/runs/tests).';
  const [tier] = ci.suites;
  return `In the newest kept CI run ([${ci.run}](docs/runs/tests/${ci.run}/summary.txt)), a fresh clone's default tier took ${tier.time} (${tier.tally}) and \`.ci/run\` ${ci.whole ?? '?'} in all, with the images built, on a day this machine signed RSA-2048 in ${ci.speed ? `${ci.speed[0]}–${ci.speed[1]} µs` : '(not recorded)'}; every kept run: [docs/testing.md](docs/testing.md#kept-runs).`;
}

function duration(seconds) {
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
}

export function table(listText, timesDir, root = '.') {
  const { times } = readTimes(timesDir);
  const cache = new Map();
  const rows = listText.split('\n').filter(Boolean).map((row) => {
    const [group, name, where] = row.split(' ');
    const [file, line] = [where.replace(/:\d+$/, ''), Number(where.replace(/^.*:/, ''))];
    if (!cache.has(file)) cache.set(file, fs.readFileSync(path.join(root, file), 'utf8').split('\n'));
    const proves = firstSentence(commentAbove(cache.get(file), line)) || name.replace(/^[a-z]+_(\d+[a-z]?_)?/, '').replace(/_/g, ' ');
    const t = times.get(name);
    return { group, name, file, proves, time: t ? `${duration(t.seconds)} (${t.run})` : 'not run yet' };
  });
  rows.sort((a, b) => TIER_ORDER.indexOf(a.group) - TIER_ORDER.indexOf(b.group) || a.name.localeCompare(b.name));
  const total = (g) => rows.filter((r) => r.group === g && times.has(r.name)).reduce((s, r) => s + times.get(r.name).seconds, 0);
  const lines = [
    '| tier | test | what it proves | time (kept run) |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.group} | \`${r.name}\` (${path.basename(r.file)}) | ${r.proves} | ${r.time} |`),
    '',
    `Tests' time summed by tier: ${TIER_ORDER.filter((g) => rows.some((r) => r.group === g))
      .map((g) => `${g} ${rows.some((r) => r.group === g && times.has(r.name)) ? duration(total(g)) : 'not run yet'} (${rows.filter((r) => r.group === g && times.has(r.name)).length} of ${rows.filter((r) => r.group === g).length} tests timed)`).join(', ')}.`,
  ];
  return lines.join('\n');
}

// The regions this script makes: [begin marker, end marker, what fills it].
const REGIONS = [
  [BEGIN, END, (list, dir) => table(list, dir)],
  [RUNS_BEGIN, RUNS_END, (list, dir) => runsTable(dir)],
  [LINE_BEGIN, LINE_END, (list, dir) => timeLine(dir)],
];

function main(argv) {
  const [list, timesDir, mode, ...files] = argv;
  if (!list || !timesDir || (mode && !['--check', '--write'].includes(mode)) || (mode && files.length === 0)) {
    console.error('usage: node tests/lib/test-table.mjs LIST TIMES_DIR [--check FILE... | --write FILE...]');
    process.exit(2);
  }
  const listText = fs.readFileSync(list === '-' ? 0 : list, 'utf8');
  if (!mode) { console.log(table(listText, timesDir)); return; }
  let bad = 0;
  for (const file of files) {
    let text = fs.readFileSync(file, 'utf8');
    const present = REGIONS.filter(([b]) => text.includes(b));
    if (present.length === 0) {
      console.error(`${file}: no region markers (${REGIONS.map(([b]) => b).join(' or ')}, each with its end marker): put them where the table or line goes`);
      process.exit(1);
    }
    for (const [b, e, make] of present) {
      const [a, z] = [text.indexOf(b), text.indexOf(e)];
      if (z < a) { console.error(`${file}: ${b} has no ${e} after it`); process.exit(1); }
      const made = make(listText, timesDir);
      const current = text.slice(a + b.length, z).trim();
      if (mode === '--write') { text = `${text.slice(0, a + b.length)}\n${made}\n${text.slice(z)}`; continue; }
      if (current === made) continue;
      const [have, want] = [current.split('\n'), made.split('\n')];
      const i = want.findIndex((l, k) => l !== have[k]);
      console.error(`${file}'s ${b.replace(/^<!-- ([a-z-]+):.*$/, '$1')} is not what scripts/test.sh --list and docs/runs/tests make (run scripts/test-table.sh --write):\n  expected: ${want[i] ?? '(no line)'}\n  found:    ${have[i] ?? '(no line)'}`);
      bad += 1;
    }
    if (mode === '--write') fs.writeFileSync(file, text);
  }
  if (bad) process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
