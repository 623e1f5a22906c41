// Reading a step's files. A missing or half-written file is normal (an
// interrupted run): null, not an exception.
import fs from 'node:fs';
import path from 'node:path';

export function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  }
}

export function readJson(file) {
  const text = readText(file);
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null; // half-written by an interrupted run
  }
}

// numberedFiles DIR PREFIX: "PREFIX-1.json", "PREFIX-2.json", ... (one per
// load-generator replica), in replica order.
function numberedFiles(dir, prefix) {
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  const pattern = new RegExp(`^${prefix}-(\\d+)\\.json$`);
  return names.filter((n) => pattern.test(n))
    .sort((a, b) => Number(pattern.exec(a)[1]) - Number(pattern.exec(b)[1]));
}

// readSummaries DIR PREFIX: every replica's summary → {names, summaries
// (the parsed ones), files (their names), unreadable (names of the others)}.
export function readSummaries(dir, prefix) {
  const names = numberedFiles(dir, prefix);
  const parsed = names.map((n) => readJson(path.join(dir, n)));
  return {
    names,
    summaries: parsed.filter((s) => s !== null),
    files: names.filter((_, i) => parsed[i] !== null),
    unreadable: names.filter((_, i) => parsed[i] === null),
  };
}
