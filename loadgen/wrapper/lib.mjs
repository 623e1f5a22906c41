// What the wrappers of the lab's binary load tools (loadgen/vegeta,
// loadgen/h2load) share: reading their settings from the environment, their
// container's own CPU time, the summary's folder checked before any load,
// and the tool's process watched to its end.
import fs from 'node:fs';
import path from 'node:path';
import { bad } from '../lib/values.mjs';

// Readers of one setting: a RangeError saying "NAME must be ... (got "x")"
// for a bad value. Durations, flags, KEEPALIVE and a tool's extra flags are
// read as every load tool reads them (loadgen/lib/values.mjs).
export { bad, duration, extraArgs, flag, keepalive } from '../lib/values.mjs';
export const number = (env, name, def, min, max) => {
  const raw = String(env[name] ?? '');
  const n = raw === '' ? def : /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : NaN;
  if (n >= min && n <= max) return n;
  throw bad(name, `a number from ${min} to ${max}`, env[name]);
};

// The settings both tools read the same way: TARGET, LOAD_PATH,
// LOADGEN_SUMMARY_DIR.
export function requestSettings(env) {
  const target = env.TARGET || 'http://haproxy:8080';
  const m = /^(https?):\/\/([A-Za-z0-9._-]+):([0-9]{1,5})\/?$/.exec(target);
  if (!m) throw bad('TARGET', 'an http(s)://host:port URL', target);
  const loadPath = env.LOAD_PATH || '/fast';
  if (!/^\/[\x21-\x7e]*$/.test(loadPath)) throw bad('LOAD_PATH', 'a path starting with /', loadPath);
  const summaryDir = env.LOADGEN_SUMMARY_DIR || '';
  if (summaryDir.startsWith('/') || /(^|\/)\.\.(\/|$)/.test(summaryDir)) throw bad('LOADGEN_SUMMARY_DIR', 'a relative folder without ..', summaryDir);
  return { scheme: m[1], tls: m[1] === 'https', host: m[2], port: Number(m[3]), path: loadPath, target, summaryDir };
}

// This container's CPU time so far, from its own cgroup (v1 cpuacct.usage,
// v2 cpu.stat usage_usec), else this process's (process.cpuUsage).
export function ownCpu(root = '/sys/fs/cgroup') {
  const read = (f) => { try { return fs.readFileSync(path.join(root, f), 'utf8'); } catch { return null; } };
  const v1 = read('cpuacct/cpuacct.usage') ?? read('cpu,cpuacct/cpuacct.usage');
  if (v1 !== null && /^\d+/.test(v1)) return { ns: Number(v1.trim()), source: 'cgroup v1 cpuacct.usage' };
  const v2 = /^usage_usec (\d+)/m.exec(read('cpu.stat') ?? '');
  if (v2) return { ns: Number(v2[1]) * 1000, source: 'cgroup v2 cpu.stat' };
  const u = process.cpuUsage();
  return { ns: (u.user + u.system) * 1000, source: 'process' };
}

// superviseChild CHILD [EVENT]: a load tool's process watched to its end
// (EVENT: 'exit', or 'close' to have its output read too). SIGTERM or
// SIGINT to this wrapper is passed on as SIGINT, the tool's own stop; a
// second one ends the wrapper (130). → {exit: Promise of {code, signal} or
// {error}, interrupted(): whether a signal came}.
export function superviseChild(child, event = 'exit') {
  let interrupted = false;
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      child.kill('SIGINT');
    });
  }
  const exit = new Promise((resolve) => {
    child.on('error', (error) => resolve({ error }));
    child.on(event, (code, signal) => resolve({ code, signal }));
  });
  return { exit, interrupted: () => interrupted };
}

// summaryDirProblem CFG: null when the summary's folder exists and is
// writable (made if need be), else one line saying why not: a wrapper checks
// it before sending any load, not after.
export function summaryDirProblem(cfg) {
  if (!cfg.summaryDir) return null;
  const dir = path.join(cfg.resultsRoot, cfg.summaryDir);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return null;
  } catch (err) {
    return `cannot write the summary into ${dir}: ${err.code ?? err.message} (the results folder must be writable by uid ${process.getuid()})`;
  }
}
