// What a load tool's replicas sent, as the report reads it (the tool's reader
// in the engine, scripts/labctl/evidence/readers.mjs, on the summaries' folder),
// as "REQUESTS SUCCESSFUL FAILED DROPPED":
//   node tests/e2e/checks/load-counts.mjs TOOL SUMMARY.json...
// TOOL is the engine's name (k6, vegeta...). The SUMMARYs are one load's
// replicas, alone in their folder: the reader takes every one there, and a
// difference is an error.
import { basename, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readerOf } from '../../../scripts/labctl/evidence/readers.mjs';

export function loadCounts(tool, files) {
  const dirs = [...new Set(files.map((f) => dirname(f)))];
  if (dirs.length !== 1) throw new Error(`one load's ${tool} summaries, in one folder: expected one folder, found ${dirs.join(', ') || 'none'}`);
  const { measured, files: found, unreadable } = readerOf(tool).read(dirs[0], { load: { tool, env: {} } });
  const given = files.map((f) => basename(f)).sort().join(' ');
  if ([...found].sort().join(' ') !== given || unreadable.length > 0 || !measured) {
    throw new Error(`${tool} summaries in ${dirs[0]}: expected ${given}, the reader found ${found.join(' ') || 'none'}${unreadable.length ? ` and could not read ${unreadable.join(' ')}` : ''}`);
  }
  const { requests, successful, failed, dropped } = measured;
  return { requests, successful, failed, dropped };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [tool, ...files] = process.argv.slice(2);
  const c = loadCounts(tool, files);
  console.log(c.requests, c.successful, c.failed, c.dropped);
}
