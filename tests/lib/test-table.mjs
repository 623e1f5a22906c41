// docs/testing.md's table of tests: each test, its tier (the group that runs
// it), what it proves (the first sentence of the comment above it, else its
// name) and its time in the newest kept run that ran it.
//   node tests/lib/test-table.mjs LIST TIMES_DIR [--check FILE | --write FILE]
// LIST (- for stdin): the output of scripts/test.sh --list ("GROUP NAME FILE:LINE" lines).
// TIMES_DIR: docs/runs/tests, one folder per kept run, each with SUITE-times.txt
// files ("test NAME SECONDS" and "group NAME SECONDS" lines, scripts/test.sh's
// TEST_TIMES; .ci/run writes newest- and floor-times.txt, the floor group's) and summary.txt (.ci/run's last lines). With no option the
// table goes to stdout; --check exits 1 naming the first difference from the
// table in FILE, --write puts it in FILE between the markers.
import fs from 'node:fs';
import path from 'node:path';

const BEGIN = '<!-- test-table: made by scripts/test-table.sh from scripts/test.sh --list and docs/runs/tests; do not edit -->';
const END = '<!-- /test-table -->';
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

function main(argv) {
  const [list, timesDir, mode, file] = argv;
  if (!list || !timesDir || (mode && !['--check', '--write'].includes(mode)) || (mode && !file)) {
    console.error('usage: node tests/lib/test-table.mjs LIST TIMES_DIR [--check FILE | --write FILE]');
    process.exit(2);
  }
  const made = table(fs.readFileSync(list === '-' ? 0 : list, 'utf8'), timesDir);
  if (!mode) { console.log(made); return; }
  const text = fs.readFileSync(file, 'utf8');
  const [a, b] = [text.indexOf(BEGIN), text.indexOf(END)];
  if (a < 0 || b < a) {
    console.error(`${file}: no table markers (${BEGIN} ... ${END}): put them where the table goes`);
    process.exit(1);
  }
  const current = text.slice(a + BEGIN.length, b).trim();
  if (mode === '--write') {
    fs.writeFileSync(file, `${text.slice(0, a + BEGIN.length)}\n${made}\n${text.slice(b)}`);
    return;
  }
  if (current === made) return;
  const [have, want] = [current.split('\n'), made.split('\n')];
  const i = want.findIndex((l, k) => l !== have[k]);
  console.error(`${file}'s test table is not what scripts/test.sh --list and docs/runs/tests make (run scripts/test-table.sh --write):\n  expected: ${want[i] ?? '(no line)'}\n  found:    ${have[i] ?? '(no line)'}`);
  process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
