// Every link in the lab's Markdown resolves on a fresh clone: a relative
// link names a file or folder that git tracks here, and a #fragment names a
// heading of its target as GitHub anchors it. A cited run folder must be
// kept in git: results/ exists only on the machine that made the run.
//
// Usage: node tests/lib/doc-links.mjs [--tracked -] FILE.md|DIR...   (from the checkout)
// --tracked - reads `git ls-files` on stdin: a link must then name a tracked
// file or a folder holding one (an ignored results/ folder does not count),
// and a run folder a file cites, results/SCENARIO/TIMESTAMP, link or not,
// must be kept in git as docs/runs/SCENARIO/TIMESTAMP (scripts/keep-run.sh):
// a figure from a run no reader can open cannot be checked.
// Prints one line per broken link (file:line: link: what is wrong) and
// exits 1 if any, else one line with the count checked.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

// Lines outside fenced code blocks, with their 1-based numbers.
export function proseLines(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const m = line.match(/^\s*(`{3,}|~{3,})/);
    if (m) {
      if (fence === null) fence = m[1][0];
      else if (m[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

// GitHub's anchor for a heading: inline code and links reduced to their
// text, lower case, punctuation dropped (letters, digits, _, - and spaces
// stay), each space a hyphen; a repeated heading gets -1, -2...
export function slug(heading) {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

export function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  for (const { line } of proseLines(text)) {
    const m = line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!m) continue;
    const base = slug(m[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

// Links of one line: [text](target), ![alt](target), [ref]: target.
// Inline code is skipped (a path in backticks is text, not a link).
export function linksOf(line) {
  const prose = line.replace(/`[^`]*`/g, '');
  const out = [];
  for (const m of prose.matchAll(/!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  const ref = prose.match(/^\s*\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)/);
  if (ref) out.push(ref[1]);
  return out;
}

// problem FILE TARGET: what is wrong with TARGET linked from FILE, or null.
export function problem(file, target, readText = (f) => readFileSync(f, 'utf8'), exists = existsSync) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:
  const [rawPath, fragment] = target.split('#', 2);
  const linked = rawPath === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(rawPath))).replace(/\/$/, '');
  if (linked.startsWith('..')) return 'points outside the checkout';
  if (!exists(linked)) return `${linked} ${exists === existsSync ? 'does not exist' : 'is not tracked by git'}`;
  if (fragment === undefined || fragment === '') return null;
  if (!linked.endsWith('.md')) return null; // a line anchor into code (#L12) is GitHub's, not the file's
  if (!anchorsOf(readText(linked)).has(decodeURIComponent(fragment))) return `${linked} has no heading with anchor #${fragment}`;
  return null;
}

function markdownFiles(arg) {
  if (!statSync(arg).isDirectory()) return [arg];
  // A folder: its Markdown (a kept run's own report.md is the run's, not checked).
  return readdirSync(arg, { recursive: true }).map((f) => path.join(arg, f)).filter((f) => f.endsWith('.md') && !f.includes('/runs/')).sort();
}

// RUN_CITATION: a run folder cited in any text (code spans included).
const RUN_CITATION = /results\/([a-z0-9-]+)\/(\d{8}T\d{6}Z)/g;

// unkeptRuns LINE EXISTS: the run folders LINE cites that are not kept under
// docs/runs/.
export function unkeptRuns(line, exists) {
  return [...line.matchAll(RUN_CITATION)]
    .filter((m) => !exists(`docs/runs/${m[1]}/${m[2]}`))
    .map((m) => `results/${m[1]}/${m[2]}`);
}

// A run cited by its timestamp alone ("…/20261125T231108Z/"): which run, and
// whether it is kept, cannot be told.
const ABBREVIATED_RUN = /(?:…|\.\.\.)\/(\d{8}T\d{6}Z)/g;

// abbreviatedRuns LINE: the runs LINE cites as …/TIMESTAMP.
export function abbreviatedRuns(line) {
  return [...line.matchAll(ABBREVIATED_RUN)].map((m) => `…/${m[1]}`);
}

// trackedPaths LIST: the tracked files and every folder above them.
export function trackedPaths(list) {
  const paths = new Set();
  for (const file of list.split('\n').filter(Boolean)) {
    paths.add(path.normalize(file));
    for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir)) paths.add(dir);
  }
  return paths;
}

function main(args) {
  let exists = existsSync;
  if (args[0] === '--tracked') {
    const tracked = trackedPaths(readFileSync(0, 'utf8'));
    exists = (p) => tracked.has(p);
    args = args.slice(2);
  }
  if (args.length === 0) {
    console.error('doc-links: usage: node tests/lib/doc-links.mjs [--tracked -] FILE.md|DIR...');
    process.exit(2);
  }
  let checked = 0;
  const broken = [];
  for (const file of args.flatMap(markdownFiles)) {
    const text = readFileSync(file, 'utf8');
    if (exists !== existsSync) {
      text.split('\n').forEach((line, i) => {
        for (const run of unkeptRuns(line, exists)) {
          checked += 1;
          broken.push(`${file}:${i + 1}: (${run}): cites a run not kept in git: keep it (scripts/keep-run.sh ${run}) or cite a kept one`);
        }
        for (const run of abbreviatedRuns(line)) {
          checked += 1;
          broken.push(`${file}:${i + 1}: (${run}): cites a run by its timestamp alone: write results/SCENARIO/TIMESTAMP in full`);
        }
      });
    }
    if (!file.endsWith('.md')) continue;
    for (const { line, n } of proseLines(text)) {
      for (const target of linksOf(line)) {
        checked += 1;
        const why = problem(file, target, undefined, exists);
        if (why) broken.push(`${file}:${n}: (${target}): ${why}`);
      }
    }
  }
  for (const b of broken) console.log(b);
  if (broken.length > 0) {
    console.log(`${broken.length} of ${checked} links broken`);
    process.exit(1);
  }
  console.log(`${checked} links resolve`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
