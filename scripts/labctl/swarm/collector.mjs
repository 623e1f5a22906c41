// The runner's mailbox on a Swarm: load-generator replicas on other nodes
// send the files they wrote (summaries, their kernel's counters, in each
// tool's own format) here over the stack's overlay network, and the runner
// copies them off this container on the HAProxy node (docker exec ... tar),
// through the manager's engine alone. Why not `docker service logs`: through
// the manager it can hang, or cut a 100 KB summary.
//   node collector.mjs [PORT [OUT]]    (default 7070 and /out)
//   PUT or POST /PATH   with "Authorization: Bearer TOKEN", TOKEN the run's
//                       (in the file COLLECTOR_TOKEN_FILE names, which the
//                       runner writes at a run's start and removes at its
//                       end: compose.swarm.yaml): keeps the body as OUT/PATH,
//                       never over anything (written to a partial file, then
//                       linked in: a reader never sees half of it) → 204
//   GET /healthz        → ok
//   GET /resolve?name=NAME   "NODE ADDRESSES" for every node: NAME as that
//                       node's resolver gives it (its container-exporter's
//                       /resolve), "?" for a node that did not answer
//   GET /containers     every node's containers of the lab, as each node's
//                       container-exporter reads them (EXPORTER_ADDRESS, a
//                       dnsrr name with one address per node): "AT_MS NAME
//                       CPU_NS MEMORY_BYTES ALLOWANCE_CORES" lines, AT_MS when
//                       that node answered, "-" for what it did not give
// Refused, nothing written: no run's token or another 401; a PATH that is not
// segments of letters, digits, ".", "_", "-" joined by "/" (none empty, none
// starting with ".") 400; a PATH that is kept already, or whose folder is a
// file, or that is a folder, 409; a body over MAX_BYTES, or over what is left
// of MAX_TOTAL_BYTES for everything kept, 413.
// SIGTERM closes it. Importing the file (a test) starts nothing.
import { lookup } from 'node:dns/promises';
import { createWriteStream, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MAX_BYTES = 64 * 1024 * 1024;
export const MAX_TOTAL_BYTES = 512 * 1024 * 1024;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

// keptPath URL_PATH → the relative path to keep the body under, or null.
export function keptPath(urlPath) {
  let path;
  try {
    path = decodeURIComponent(String(urlPath).split('?')[0]);
  } catch {
    return null;
  }
  if (!path.startsWith('/')) return null;
  const segments = path.slice(1).split('/');
  // A segment starts with a letter, digit or "_": never ".", "..", or empty.
  if (segments.some((s) => !SEGMENT.test(s))) return null;
  return segments.join('/');
}

function answer(res, status, text = '') {
  res.statusCode = status;
  res.end(text ? `${text}\n` : undefined);
}

// runToken FILE → the token of the run collecting now, or null.
function runToken(file) {
  try {
    return readFileSync(file, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

// keptBytes DIR → the bytes of every file kept under DIR.
export function keptBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += keptBytes(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

// CONFLICT: the errors of a path that meets what is kept (a file where a
// folder is needed, or the path itself).
const CONFLICT = new Set(['EEXIST', 'ENOTDIR', 'EISDIR']);

// keep REQ RES OUT OPTIONS: the body into OUT/<path>, whole or not at all.
function keep(req, res, out, { tokenFile, maxBytes = MAX_BYTES, maxTotalBytes = MAX_TOTAL_BYTES }) {
  const token = runToken(tokenFile);
  if (!token || req.headers.authorization !== `Bearer ${token}`) {
    req.resume();
    return answer(res, 401, token ? 'not this run\'s token' : 'no run is collecting');
  }
  const rel = keptPath(req.url);
  if (!rel) return answer(res, 400, `refused path ${req.url}: segments of letters, digits, ".", "_" and "-"`);
  let room;
  try {
    room = Math.max(0, Math.min(maxBytes, maxTotalBytes - keptBytes(out)));
  } catch (err) {
    return answer(res, 500, err.message);
  }
  if (Number(req.headers['content-length'] ?? 0) > room) return answer(res, 413, `over the ${room} bytes left`);
  const file = join(out, rel);
  const partial = join(out, `.partial-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    lstatSync(file);
    return answer(res, 409, `${rel} is kept already`);
  } catch (err) {
    if (err.code !== 'ENOENT') return answer(res, CONFLICT.has(err.code) ? 409 : 500, `${rel}: ${err.code}`);
  }
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (err) {
    return answer(res, CONFLICT.has(err.code) ? 409 : 500, `${rel}: a file is kept where its folder would be (${err.code})`);
  }
  const sink = createWriteStream(partial);
  let bytes = 0;
  let failed = false;
  const fail = (status, text) => {
    if (failed) return;
    failed = true;
    sink.destroy();
    rmSync(partial, { force: true });
    answer(res, status, text);
    req.resume();
  };
  req.on('data', (chunk) => {
    bytes += chunk.length;
    if (bytes > room) fail(413, `over the ${room} bytes left`);
  });
  req.on('aborted', () => fail(400, 'body cut short'));
  sink.on('error', (err) => fail(500, err.message));
  sink.on('finish', () => {
    if (failed) return;
    try {
      // A link, not a rename: it fails when the path is taken meanwhile.
      linkSync(partial, file);
      answer(res, 204);
    } catch (err) {
      answer(res, CONFLICT.has(err.code) ? 409 : 500, `${rel}: ${err.code}`);
    } finally {
      rmSync(partial, { force: true });
    }
  });
  req.pipe(sink);
  return undefined;
}

// FAMILIES: the exporter's families, in the order of a /containers line
// (memory: the working set, the figure the runner reads from cgroups).
const FAMILIES = ['container_cpu_usage_seconds_total', 'container_memory_working_set_bytes', 'container_cpu_allowance_cores'];

// containerLines METRICS_TEXT AT_MS → /containers lines of one node's exporter.
export function containerLines(text, at) {
  const byName = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{(?:[^}]*,)?name="([^"]+)"[^}]*\} (\S+)$/.exec(line.trim());
    const column = m ? FAMILIES.indexOf(m[1]) : -1;
    if (column < 0) continue;
    if (!byName.has(m[2])) byName.set(m[2], ['-', '-', '-']);
    byName.get(m[2])[column] = column === 0 ? String(Math.round(Number(m[3]) * 1e9)) : m[3];
  }
  return [...byName].map(([name, values]) => `${at} ${name} ${values.join(' ')}`);
}

function fetchText(host, port, path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${host}: HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${host}: timeout`)));
    req.on('error', reject);
  });
}

// containers ADDRESS → every node's lines (a node that does not answer: none, logged).
async function containers(address) {
  const [host, port] = address.split(':');
  const nodes = await lookup(host, { all: true, family: 4 });
  const answers = await Promise.all(nodes.map(({ address: ip }) => fetchText(ip, Number(port), '/metrics')
    .then((text) => containerLines(text, Date.now()), (err) => { console.error(`collector: ${err.message}`); return []; })));
  return answers.flat().join('\n');
}

// collector OUT EXPORTER OPTIONS: the server (OPTIONS: { tokenFile, maxBytes,
// maxTotalBytes }, MAX_BYTES and MAX_TOTAL_BYTES unless a test says).
// resolvedEverywhere ADDRESS NAME → "NODE ADDRESSES" lines, one per node.
async function resolvedEverywhere(address, name) {
  const [host, port] = address.split(':');
  const nodes = await lookup(host, { all: true, family: 4 });
  const answers = await Promise.all(nodes.map(({ address: ip }) => fetchText(ip, Number(port), `/resolve?name=${name}`)
    .then((text) => `${ip} ${text.trim()}`, () => `${ip} ?`)));
  return answers.sort().join('\n');
}

export function collector(out, exporter, options) {
  return http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') return answer(res, 200, 'ok');
    const asked = req.method === 'GET' ? /^\/resolve\?name=([a-z0-9][a-z0-9_.-]*)$/i.exec(req.url) : null;
    if (asked) {
      if (!exporter) return answer(res, 503, 'EXPORTER_ADDRESS is not set');
      return resolvedEverywhere(exporter, asked[1]).then((text) => answer(res, 200, text), (err) => answer(res, 503, err.message));
    }
    if (req.method === 'GET' && req.url === '/containers') {
      if (!exporter) return answer(res, 503, 'EXPORTER_ADDRESS is not set');
      return containers(exporter).then((text) => answer(res, 200, text), (err) => answer(res, 503, err.message));
    }
    if (req.method === 'PUT' || req.method === 'POST') return keep(req, res, out, options);
    return answer(res, 405, 'PUT or POST /PATH, or GET /healthz');
  });
}

function serve() {
  const port = Number(process.argv[2] ?? 7070);
  const out = process.argv[3] ?? '/out';
  const tokenFile = process.env.COLLECTOR_TOKEN_FILE;
  // Under OUT, a name no upload can take (a segment never starts with ".").
  if (!tokenFile?.startsWith(`${out}/.`)) {
    console.error(`collector: COLLECTOR_TOKEN_FILE must name a file ${out}/.NAME (compose.swarm.yaml), found "${tokenFile ?? ''}"`);
    process.exit(2);
  }
  mkdirSync(out, { recursive: true });
  const server = collector(out, process.env.EXPORTER_ADDRESS, { tokenFile });
  server.listen(port, () => console.log(`collector: keeping what is sent to :${port} under ${out}`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) serve();
