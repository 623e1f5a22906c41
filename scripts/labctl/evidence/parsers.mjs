// Parsers of the raw files a step leaves behind: text in, plain data out,
// null for a missing file (text null). No I/O here.
export { parseSs } from '../run/sockets.mjs';

// HAProxy "show info": "Key: value" lines.
export function parseInfo(text) {
  if (text === null) return null;
  const info = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) info[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return info;
}

// One CSV line; HAProxy quotes fields that hold commas (e.g. check descriptions).
function splitCsvLine(line) {
  const cells = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted && c === '"' && line[i + 1] === '"') { cell += '"'; i++; }
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) { cells.push(cell); cell = ''; }
    else cell += c;
  }
  cells.push(cell);
  return cells;
}

// HAProxy "show stat": "# pxname,svname,..." then one row per proxy/server.
export function parseStat(text) {
  if (text === null) return null;
  const lines = text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
  if (lines.length === 0 || !lines[0].startsWith('#')) return null;
  const names = splitCsvLine(lines[0].replace(/^#\s*/, ''));
  return lines.slice(1).map((line) => {
    const cells = splitCsvLine(line);
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? '']));
  });
}

// /proc/net/netstat: per prefix a header line then a values line → {"TcpExt.ListenOverflows": 12, ...}.
export function parseNetstat(text) {
  if (text === null) return null;
  const counters = {};
  const header = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    const fields = m[2].split(/\s+/);
    if (!header.has(m[1])) {
      header.set(m[1], fields);
      continue;
    }
    header.get(m[1]).forEach((name, i) => { counters[`${m[1]}.${name}`] = Number(fields[i]); });
    header.delete(m[1]);
  }
  return counters;
}

// "container cpu% mem" lines; a container sampled more than once keeps its peak.
export function parseCpu(text) {
  if (text === null) return null;
  const cpu = {};
  for (const line of text.split('\n')) {
    const [name, percent] = line.trim().split(/\s+/);
    const value = Number.parseFloat(percent);
    if (name && Number.isFinite(value)) cpu[name] = Math.max(cpu[name] ?? 0, value);
  }
  return cpu;
}

const UNITS = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 };

// Each container's memory → {name: bytes used}: container_memory's "name
// bytes" lines, or docker stats' "name cpu% used / limit" (runs before it).
export function parseMemory(text) {
  if (text === null) return null;
  const memory = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const bytes = /^(\S+)\s+(\d+)$/.exec(line.trim());
    if (bytes) { memory[bytes[1]] = Number(bytes[2]); continue; }
    const m = /^(\S+)\s+\S+\s+([\d.]+)\s*([A-Za-z]+)/.exec(line.trim());
    if (m && UNITS[m[3]]) memory[m[1]] = Number(m[2]) * UNITS[m[3]];
  }
  return memory;
}

// show activity: "name: total [per thread]" lines → {name: total} (numbers only).
export function parseActivity(text) {
  if (text === null) return null;
  const out = {};
  for (const m of text.matchAll(/^(\w+): (-?\d+(?:\.\d+)?)(?: \[|$)/gm)) out[m[1]] = Number(m[2]);
  return Object.keys(out).length ? out : null;
}

// samples.txt: "t haproxy_conns backend_conns [accept_queue [cum_req at_ms
// [frontend_req]]]" per second of load ("-": no answer; older runs have 3, 4
// or 6 columns). requests: the requests received so far, the load's
// frontends' req_tot where every answer had it (an HTTP frontend), else
// CumReq, which also counts each runtime API session: the lab's own probes,
// about 3 a second.
export function parseSamples(text) {
  if (text === null) return null;
  const number = (v) => (v === undefined || v === '-' ? null : Number(v));
  const [header = '', ...rows] = text.split('\n');
  const fields = rows.map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 3 && f.length <= 7);
  const byFrontend = header.trim().split(/\s+/).includes('frontend_req') && fields.every((f) => number(f[4]) === null || number(f[6]) !== null);
  return fields.map(([t, h, b, q, r, at, fr]) => ({ t: Number(t), haproxy: number(h), backend: number(b), queue: number(q),
    requests: number(byFrontend ? fr : r), at: number(at) }));
}

// loadgen-N-sysctl.txt: "name value" lines → {name: value}.
export function parseSysctl(text) {
  if (text === null) return null;
  return Object.fromEntries(text.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 2));
}

// A container log's lines as the program wrote them: without terminal
// control sequences (CSI, ESC [ ... letter) a display may have added, e.g.
// the ESC[2K that "docker compose logs" 2.26 puts before every line (run
// folders recorded through it before the runner read logs from the engine).
const CONTROL_SEQUENCE = /\x1b\[[0-?]*[ -/]*[@-~]/g;
export function logLines(text) {
  return (text ?? '').replace(CONTROL_SEQUENCE, '').split('\n').map((l) => l.replace(/\r$/, ''));
}

// HAProxy httplog lines → {"SD": n, "CD": n, ...} by the first two letters of
// the termination state (who ended the session, and in which phase).
export function parseTerminations(text) {
  if (text === null) return null;
  const counts = {};
  for (const line of logLines(text)) {
    const m = / (?:-1|\d{3}) -?\d+ \S+ \S+ ([A-Za-z-]{2})[A-Za-z-]{2} \d+\/\d+\/\d+\/\d+\/\d+ /.exec(line);
    if (m && m[1] !== '--') counts[m[1]] = (counts[m[1]] ?? 0) + 1;
  }
  return counts;
}

// HAProxy's own words when a worker died or a config failed (OOM kill: "exited with code 137").
export function parseAlerts(text) {
  return logLines(text).filter((l) => /^\[(ALERT|WARNING)\].*(exit|Cannot raise|Killed)/.test(l)).slice(0, 4);
}

// The reloads HAProxy's master logged as done ("[NOTICE] (1) : Loading success.").
export function parseReloads(text) {
  return logLines(text).filter((l) => /^\[NOTICE\].*Loading success/.test(l)).length;
}

// Stat cells are empty when a counter does not apply: count them as 0.
export const cell = (value) => Number(value) || 0;
