// The requests k6 sent and those that failed, as the report reads them (the
// engine's k6 reader, scripts/lab/evidence/k6.mjs, on the summaries' folder),
// as "REQUESTS FAILED":
//   node tests/e2e/checks/k6-counts.mjs SUMMARY.json...
// The SUMMARYs are one load's replicas, alone in their folder: the reader
// takes every loadgen-N.json there, and a difference is an error.
import { basename, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { read } from '../../../scripts/lab/evidence/k6.mjs';

export function k6Counts(files) {
  const dirs = [...new Set(files.map((f) => dirname(f)))];
  if (dirs.length !== 1) throw new Error(`one load's k6 summaries, in one folder: expected one folder, found ${dirs.join(', ')}`);
  const { measured, files: found, unreadable } = read(dirs[0], { load: { env: {} } });
  const given = files.map((f) => basename(f)).sort().join(' ');
  if ([...found].sort().join(' ') !== given || unreadable.length > 0) {
    throw new Error(`k6 summaries in ${dirs[0]}: expected ${given}, the reader found ${found.join(' ') || 'none'}${unreadable.length ? ` and could not read ${unreadable.join(' ')}` : ''}`);
  }
  return { requests: measured.requests, failed: measured.failed };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { requests, failed } = k6Counts(process.argv.slice(2));
  console.log(requests, failed);
}
