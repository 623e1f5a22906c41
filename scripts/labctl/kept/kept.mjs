// A kept run (docs/runs/SCENARIO/STAMP): what README and docs link to, in
// the clear (report.md, summary.json/csv, the charts, run.env, versions.env
// and an INCOMPLETE marker), and the raw evidence the report is built from in
// one archive (archive.mjs). The report's outputs are always what today's
// code reads from that archive, so re-reporting a kept run gives them again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packTar, unpackTar } from './archive.mjs';
import { OUTPUTS, buildReport, commandIn, readRun, versionsOf, writeOutputs } from '../report/report.mjs';

export const ARCHIVE = 'evidence.tar.br';
export const LEFT_OUT = 'LEFT-OUT.txt';
// A run kept with the outputs it made, because re-reporting it cannot give
// them (what its report read was left out, or today's code cannot read it):
// the file says why. Such a run is never refreshed.
export const AS_REPORTED = 'AS-REPORTED.txt';
// The run's inputs kept beside the outputs: what ran (the report reads them too).
const INPUTS = ['run.env', 'versions.env', 'INCOMPLETE'];
const STAMP = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/;

export class KeptError extends Error {}

// filesUnder DIR → the relative paths of every file under DIR, sorted.
function filesUnder(dir, prefix = '') {
  return fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) return filesUnder(dir, rel);
      return e.isFile() ? [rel] : [];
    })
    .sort();
}

const inClear = (name) => OUTPUTS.includes(name) || INPUTS.includes(name) || name === AS_REPORTED;

// stampTime DIR: the run's start (its folder's name) as tar's mtime.
function stampTime(dir) {
  const m = STAMP.exec(path.basename(dir));
  if (!m) throw new KeptError(`${dir}: a run folder is named by its start, e.g. 20261207T130320Z`);
  return Date.UTC(m[1], m[2] - 1, m[3], m[4], m[5], m[6]) / 1000;
}

// commandOf DIR: the command that made the run: run.env's, else the one its
// report.md names (runs made before run.env carried it).
function commandOf(dir) {
  const fromEnv = commandIn(dir);
  if (fromEnv) return fromEnv;
  const report = path.join(dir, 'report.md');
  const m = fs.existsSync(report) ? /\nCommand:\n\n```sh\n(.+)\n```\n/.exec(fs.readFileSync(report, 'utf8')) : null;
  return m ? m[1] : '';
}

// unpackInto DIR OUT NAMES: the kept run DIR's evidence unpacked into OUT,
// and the files NAMES of DIR's beside it.
function unpackInto(dir, out, names) {
  const archive = path.join(dir, ARCHIVE);
  if (!fs.existsSync(archive)) throw new KeptError(`${dir}: no ${ARCHIVE}; keep the run with scripts/keep-run.sh`);
  for (const { name, data } of unpackTar(fs.readFileSync(archive))) {
    fs.mkdirSync(path.dirname(path.join(out, name)), { recursive: true });
    fs.writeFileSync(path.join(out, name), data);
  }
  for (const name of names) if (fs.existsSync(path.join(dir, name))) fs.copyFileSync(path.join(dir, name), path.join(out, name));
}

// reportInto DIR OUT: the kept run DIR's evidence unpacked into OUT beside its
// inputs, and reported there → the names written.
function reportInto(dir, out) {
  unpackInto(dir, out, INPUTS);
  const run = readRun(out);
  return writeOutputs(out, buildReport(run), { versions: versionsOf(out, run), command: commandIn(out) });
}

function withScratch(fn) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kept-'));
  try {
    return fn(scratch);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// partingLine A B → {line (1-based), a, b}: where two texts first part, or null.
export function partingLine(a, b) {
  if (a === b) return null;
  const x = a.split('\n');
  const y = b.split('\n');
  const i = x.findIndex((line, n) => line !== y[n]);
  const at = i === -1 ? x.length : i;
  return { line: at + 1, a: x[at], b: y[at] };
}

// firstDifference A B → "line N: ..." where two texts part, or null.
function firstDifference(a, b) {
  const p = partingLine(a, b);
  if (!p) return null;
  const cut = (s) => (s === undefined ? '(none)' : s.length > 160 ? `${s.slice(0, 160)}…` : s);
  return `line ${p.line}: kept "${cut(p.a)}", re-reported "${cut(p.b)}"`;
}

// differences DIR → [{file, difference}]: each output that re-reporting DIR
// from its archive does not give back byte for byte.
function differences(dir) {
  return withScratch((out) => {
    let names;
    try {
      names = reportInto(dir, out);
    } catch (err) {
      if (err instanceof KeptError) throw err;
      return [{ file: 'report', difference: `the report failed: ${err.message}` }];
    }
    return OUTPUTS.flatMap((name) => {
      const kept = path.join(dir, name);
      const fresh = path.join(out, name);
      if (!names.includes(name)) return fs.existsSync(kept) ? [{ file: name, difference: 'kept, and the re-report from its archive writes none' }] : [];
      if (!fs.existsSync(kept)) return [{ file: name, difference: 'the re-report from its archive writes it, and it is not kept' }];
      const d = firstDifference(fs.readFileSync(kept, 'utf8'), fs.readFileSync(fresh, 'utf8'));
      return d ? [{ file: name, difference: `re-reported from its archive, it differs at ${d}` }] : [];
    });
  });
}

// asReported DIR → why DIR keeps the outputs it made (AS-REPORTED.txt's first
// line), or null.
export function asReported(dir) {
  const file = path.join(dir, AS_REPORTED);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').find((l) => l && !l.startsWith('#')) ?? '' : null;
}

// checkKept DIR → [{file, difference}]: each output that re-reporting DIR from
// its archive does not give back byte for byte, and each file beside the
// archive that belongs in it (none: the run is as kept). A run kept as
// reported must still re-report differently, or its marker is stale.
export function checkKept(dir) {
  const loose = filesUnder(dir).filter((name) => !inClear(name) && name !== ARCHIVE)
    .map((name) => ({ file: name, difference: `beside ${ARCHIVE}, not in it: keep runs with scripts/keep-run.sh` }));
  if (loose.length) return loose;
  const found = differences(dir);
  if (asReported(dir) === null) return found;
  return found.length ? [] : [{ file: AS_REPORTED, difference: 'the run re-reports as kept: remove AS-REPORTED.txt' }];
}

// refreshKept DIR → the outputs that changed: DIR's outputs re-reported from
// its archive by today's code.
export function refreshKept(dir) {
  if (asReported(dir) !== null) return [];
  return withScratch((out) => {
    const names = reportInto(dir, out);
    return OUTPUTS.filter((name) => {
      const kept = path.join(dir, name);
      if (!names.includes(name)) {
        if (!fs.existsSync(kept)) return false;
        fs.rmSync(kept);
        return true;
      }
      const fresh = fs.readFileSync(path.join(out, name));
      if (fs.existsSync(kept) && fresh.equals(fs.readFileSync(kept))) return false;
      fs.writeFileSync(kept, fresh);
      return true;
    });
  });
}

// extractKept DIR OUT: the kept run as the runner left it (less what was left
// out), to read its raw evidence.
export function extractKept(dir, out) {
  if (fs.existsSync(out)) throw new KeptError(`${out} exists: give a new folder to extract into`);
  fs.mkdirSync(out, { recursive: true });
  unpackInto(dir, out, [...INPUTS, ...OUTPUTS]);
}

// sortedFiles SRC MAXBYTES → {files: [{name, data}] for the archive (with
// LEFT-OUT.txt naming the larger ones, size and sha256, added to any the run
// had), leftOut: their lines, inputs: the names kept in the clear}.
function sortedFiles(src, maxBytes) {
  const files = [];
  const leftOut = [];
  const inputs = [];
  for (const name of filesUnder(src)) {
    const file = path.join(src, name);
    if (inClear(name)) {
      if (INPUTS.includes(name)) inputs.push(name);
      continue;
    }
    if (name === ARCHIVE) throw new KeptError(`${src}: already kept (it has ${ARCHIVE})`);
    const size = fs.statSync(file).size;
    if (size > maxBytes) {
      const sha = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
      leftOut.push(`${name}\t${size} bytes\tsha256 ${sha}`);
    } else {
      files.push({ name, data: fs.readFileSync(file) });
    }
  }
  if (leftOut.length) {
    const previous = files.find((f) => f.name === LEFT_OUT);
    const lines = [...(previous ? previous.data.toString('utf8').split('\n').filter((l) => l && !l.startsWith('#')) : []), ...leftOut].sort();
    const text = `# Files of the run larger than ${maxBytes} bytes, left out when it was kept\n${lines.join('\n')}\n`;
    if (previous) previous.data = Buffer.from(text); else files.push({ name: LEFT_OUT, data: Buffer.from(text) });
  }
  return { files, leftOut, inputs };
}

// packRun SRC DEST {maxBytes, asReported} → {archived, leftOut, changed}: SRC
// (a finished run folder) kept as DEST: its inputs in the clear, every other
// file up to maxBytes in the archive and the larger ones named in
// LEFT-OUT.txt (inside it) with their size and sha256; then the outputs
// re-reported from DEST. changed: the outputs whose re-report differs from
// SRC's own (SRC was reported by older code, or its report read a file left
// out). asReported (why): SRC's own outputs kept instead, with AS-REPORTED.txt.
export function packRun(src, dest, { maxBytes, asReported: why = null }) {
  if (fs.existsSync(dest)) throw new KeptError(`${dest} exists: a kept run is never overwritten`);
  if (!fs.existsSync(path.join(src, 'report.md'))) throw new KeptError(`${src}: not a finished run (no report.md); keep a run that ended`);
  const mtime = stampTime(src);
  const { files, leftOut, inputs } = sortedFiles(src, maxBytes);
  const staging = fs.mkdtempSync(path.join(path.dirname(dest), '.keep-'));
  try {
    fs.writeFileSync(path.join(staging, ARCHIVE), packTar(files, mtime));
    for (const name of inputs) fs.copyFileSync(path.join(src, name), path.join(staging, name));
    const command = commandOf(src);
    const runEnv = path.join(staging, 'run.env');
    if (command && fs.existsSync(runEnv) && !commandIn(staging)) fs.appendFileSync(runEnv, `command=${command}\n`);
    let changed;
    if (why === null) {
      changed = withScratch((out) => reportInto(staging, out).filter((name) => {
        fs.copyFileSync(path.join(out, name), path.join(staging, name));
        const own = path.join(src, name);
        return !fs.existsSync(own) || !fs.readFileSync(own).equals(fs.readFileSync(path.join(out, name)));
      }));
    } else {
      for (const name of OUTPUTS) if (fs.existsSync(path.join(src, name))) fs.copyFileSync(path.join(src, name), path.join(staging, name));
      changed = differences(staging).map((d) => d.file);
      if (!changed.length) throw new KeptError(`${src} re-reports as it was reported: keep it without --as-reported`);
      fs.writeFileSync(path.join(staging, AS_REPORTED), `# Kept with the outputs the run made (${changed.join(', ')} re-report differently), because:\n${why}\n`);
    }
    fs.renameSync(staging, dest);
    return { archived: files.length, leftOut: leftOut.length, changed };
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

// keptRuns ROOT NAMED → the kept runs named (each checked), or every one
// under ROOT/docs/runs when none is.
export function keptRuns(root, named) {
  if (named.length) {
    for (const dir of named) if (!fs.existsSync(path.join(dir, ARCHIVE))) throw new KeptError(`${dir}: not a kept run (no ${ARCHIVE}); give docs/runs/SCENARIO/STAMP`);
    return named;
  }
  const runs = path.join(root, 'docs/runs');
  const found = fs.readdirSync(runs).sort().flatMap((s) => (fs.statSync(path.join(runs, s)).isDirectory() ? fs.readdirSync(path.join(runs, s)).sort().map((t) => path.join('docs/runs', s, t)) : []))
    .filter((dir) => fs.existsSync(path.join(root, dir, ARCHIVE)));
  if (!found.length) throw new KeptError(`no kept run under ${runs}`);
  return found;
}

// keptSize ROOT → bytes of every file under ROOT (docs/runs).
export function keptSize(root) {
  return filesUnder(root).reduce((total, name) => total + fs.statSync(path.join(root, name)).size, 0);
}
