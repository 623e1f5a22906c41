// Kept runs (scripts/labctl/kept/): the evidence archive, packing a finished run,
// and re-reporting a kept one from its archive.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { packTar, unpackTar } from '../kept/archive.mjs';
import { ARCHIVE, checkKept, extractKept, keptSize, packRun, refreshKept } from '../kept/kept.mjs';
import { buildReport, readRun, writeOutputs } from '../report/report.mjs';
import { lineDiff } from '../report/format.mjs';

const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kept-test-'));
  tmpDirs.push(d);
  return d;
};
const write = (file, content) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
};

// A finished one-step k6 run in ROOT/results/demo/STAMP, reported as the
// runner reports it; a BIG file of BIG bytes beside its evidence.
function finishedRun(root, { stamp = '20261207T130320Z', big = 0, command = 'scripts/scenario.sh demo --quick', reported = command } = {}) {
  const dir = path.join(root, 'results/demo', stamp);
  const step = { index: 1, dir: 'steps/01-a', id: 'a', run: 1, label: 'step a', x: 1, config: 'configs/01-a.cfg', haproxy: {}, backends: {}, load: {} };
  write(path.join(dir, 'plan.json'), JSON.stringify({ scenario: 'demo', description: 'a demo', notes: [], x: { name: 'n', label: 'n' }, columns: ['hits_per_sec'], ratio_to: null, comparisons: [], options: { repeat: 1 }, steps: [step] }));
  write(path.join(dir, 'configs/01-a.cfg'), 'global\n    maxconn 77\n');
  write(path.join(dir, 'run.env'), `# demo\nscenario=demo\nsteps=1\n${command ? `command=${command}\n` : ''}`);
  write(path.join(dir, 'versions.env'), 'haproxy=3.2.22\n');
  const summary = {
    metrics: {
      http_reqs: { values: { count: 100 } },
      http_req_failed: { values: { passes: 0 } },
      http_req_duration: { values: { avg: 5, med: 4, 'p(95)': 9, 'p(99)': 12 } },
    },
    state: { testRunDurationMs: 10000 },
  };
  write(path.join(dir, 'steps/01-a/loadgen-1.json'), JSON.stringify(summary));
  if (big) write(path.join(dir, 'steps/01-a/raw-samples.txt'), 'x'.repeat(big));
  const run = readRun(dir);
  writeOutputs(dir, buildReport(run), { versions: { haproxy: '3.2.22' }, command: reported });
  return dir;
}

describe('the evidence archive', () => {
  const files = [
    { name: 'steps/01-a/b.txt', data: Buffer.from('second\n') },
    { name: 'plan.json', data: Buffer.from('{}') },
    { name: `steps/${'d'.repeat(90)}/${'f'.repeat(60)}.txt`, data: Buffer.from([0, 1, 2, 255]) },
    { name: 'empty.txt', data: Buffer.alloc(0) },
  ];

  test('gives back every file, byte for byte, in name order', () => {
    const back = unpackTar(packTar(files, 1765112600));
    assert.deepEqual(back.map((f) => f.name), [...files.map((f) => f.name)].sort());
    for (const f of files) assert.deepEqual(back.find((b) => b.name === f.name).data, f.data, f.name);
  });

  test('the same evidence makes the same bytes', () => {
    assert.ok(packTar(files, 1).equals(packTar([...files].reverse(), 1)));
  });

  test('is a tar the system\'s tar reads', () => {
    const tar = zlib.brotliDecompressSync(packTar(files, 1765112600));
    const listed = spawnSync('tar', ['-tf', '-'], { input: tar, encoding: 'utf8' });
    assert.equal(listed.status, 0, `tar -tf: ${listed.stderr}`);
    assert.deepEqual(listed.stdout.trim().split('\n'), [...files.map((f) => f.name)].sort());
  });

  test('refuses a path outside the run', () => {
    assert.throws(() => packTar([{ name: '../x', data: Buffer.from('') }], 1), /not a relative path inside the run/);
    assert.throws(() => packTar([{ name: '/etc/x', data: Buffer.from('') }], 1), /not a relative path inside the run/);
  });
});

describe('keeping a run', () => {
  test('outputs and inputs in the clear, the rest archived, a large file named in LEFT-OUT.txt', () => {
    const root = tmp();
    const src = finishedRun(root, { big: 5000 });
    const dest = path.join(root, 'docs/runs/demo/20261207T130320Z');
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    const r = packRun(src, dest, { maxBytes: 4096 });
    assert.deepEqual(fs.readdirSync(dest).sort(), [ARCHIVE, 'chart.svg', 'report.md', 'run.env', 'summary.csv', 'summary.json', 'versions.env'].sort());
    assert.deepEqual([r.archived, r.leftOut, r.changed], [4, 1, []]);
    const names = unpackTar(fs.readFileSync(path.join(dest, ARCHIVE))).map((f) => f.name);
    assert.deepEqual(names, ['LEFT-OUT.txt', 'configs/01-a.cfg', 'plan.json', 'steps/01-a/loadgen-1.json']);
    const leftOut = unpackTar(fs.readFileSync(path.join(dest, ARCHIVE))).find((f) => f.name === 'LEFT-OUT.txt').data.toString();
    assert.match(leftOut, /^steps\/01-a\/raw-samples\.txt\t5000 bytes\tsha256 [0-9a-f]{64}$/m);
    for (const name of ['report.md', 'summary.json']) assert.equal(fs.readFileSync(path.join(dest, name), 'utf8'), fs.readFileSync(path.join(src, name), 'utf8'), name);
    assert.throws(() => packRun(src, dest, { maxBytes: 4096 }), /exists: a kept run is never overwritten/);
  });

  test('a run whose run.env names no command gets the one its report.md names', () => {
    const root = tmp();
    const src = finishedRun(root, { command: '', reported: 'scripts/scenario.sh demo' });
    const dest = path.join(root, 'kept');
    const r = packRun(src, dest, { maxBytes: 1e6 });
    assert.match(fs.readFileSync(path.join(dest, 'run.env'), 'utf8'), /\ncommand=scripts\/scenario\.sh demo\n$/);
    assert.deepEqual(r.changed, []);
  });

  test('a run reported by other code is kept with today\'s reading, and says so', () => {
    const root = tmp();
    const src = finishedRun(root);
    fs.appendFileSync(path.join(src, 'report.md'), 'an older line\n');
    const r = packRun(src, path.join(root, 'kept'), { maxBytes: 1e6 });
    assert.deepEqual(r.changed, ['report.md']);
    assert.doesNotMatch(fs.readFileSync(path.join(root, 'kept/report.md'), 'utf8'), /an older line/);
  });

  test('refuses a run that did not finish, and leaves nothing behind', () => {
    const root = tmp();
    const src = finishedRun(root);
    fs.rmSync(path.join(src, 'report.md'));
    assert.throws(() => packRun(src, path.join(root, 'kept'), { maxBytes: 1e6 }), /not a finished run \(no report\.md\)/);
    assert.deepEqual(fs.readdirSync(root).sort(), ['results']);
  });
});

describe('a kept run re-reported from its archive', () => {
  function kept() {
    const root = tmp();
    const dest = path.join(root, 'kept');
    packRun(finishedRun(root), dest, { maxBytes: 1e6 });
    return dest;
  }

  test('gives back its outputs byte for byte', () => {
    assert.deepEqual(checkKept(kept()), []);
  });

  test('a changed output is found, with the line where it parts; refresh puts it back', () => {
    const dest = kept();
    const file = path.join(dest, 'summary.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"hits_per_sec": 10,', '"hits_per_sec": 11,'));
    const found = checkKept(dest);
    assert.deepEqual(found.map((f) => f.file), ['summary.json']);
    assert.match(found[0].difference, /^re-reported from its archive, it differs at line \d+: kept " +"hits_per_sec": 11,", re-reported " +"hits_per_sec": 10,"$/);
    assert.deepEqual(refreshKept(dest), ['summary.json']);
    assert.deepEqual(checkKept(dest), []);
  });

  test('a file beside the archive is named: it belongs in it', () => {
    const dest = kept();
    fs.writeFileSync(path.join(dest, 'plan.json'), '{}');
    assert.deepEqual(checkKept(dest).map((f) => f.file), ['plan.json']);
  });

  test('extracts to a new folder as the runner left it', () => {
    const dest = kept();
    const out = path.join(tmp(), 'x');
    extractKept(dest, out);
    assert.equal(fs.readFileSync(path.join(out, 'configs/01-a.cfg'), 'utf8'), 'global\n    maxconn 77\n');
    assert.throws(() => extractKept(dest, out), /exists: give a new folder/);
  });

  test('keptSize adds up every file under a folder', () => {
    const root = tmp();
    write(path.join(root, 'a/b.txt'), 'x'.repeat(10));
    write(path.join(root, 'c.txt'), 'y'.repeat(5));
    assert.equal(keptSize(root), 15);
  });
});

describe('a step\'s config as its changes to the first one', () => {
  test('only the lines that differ, where they start', () => {
    assert.deepEqual(lineDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\ne\n'), ['@@ line 2', '-b', '+B', '@@ line 5', '+e']);
    assert.deepEqual(lineDiff('a\nb\n', 'a\nb\n'), []);
  });
});
