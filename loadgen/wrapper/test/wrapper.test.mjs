// The parts vegeta's and h2load's wrappers share (loadgen/wrapper/lib.mjs).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { duration, flag, number, ownCpu, requestSettings } from '../lib.mjs';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'wrapper-'));
const dirs = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('settings', () => {
  test('the request\'s: defaults, and an https target', () => {
    assert.deepEqual(requestSettings({}), { scheme: 'http', tls: false, host: 'haproxy', port: 8080, path: '/fast', target: 'http://haproxy:8080', summaryDir: '' });
    const t = requestSettings({ TARGET: 'https://rsa.haproxy:8443', LOAD_PATH: '/self', LOADGEN_SUMMARY_DIR: 'a/b' });
    assert.deepEqual([t.tls, t.host, t.port, t.path, t.summaryDir], [true, 'rsa.haproxy', 8443, '/self', 'a/b']);
  });
  test('a bad value: one message naming the variable and the value', () => {
    for (const [read, message] of [
      [() => requestSettings({ TARGET: 'ftp://x:1' }), 'TARGET must be an http(s)://host:port URL (got "ftp://x:1")'],
      [() => requestSettings({ LOAD_PATH: 'fast' }), 'LOAD_PATH must be a path starting with / (got "fast")'],
      [() => requestSettings({ LOADGEN_SUMMARY_DIR: '../x' }), 'LOADGEN_SUMMARY_DIR must be a relative folder without .. (got "../x")'],
      [() => number({ RATE: '-1' }, 'RATE', 200, 0.1, 1e6), 'RATE must be a number from 0.1 to 1000000 (got "-1")'],
      [() => flag({ KEEPALIVE: 'yes' }, 'KEEPALIVE', true), 'KEEPALIVE must be true or false (got "yes")'],
    ]) assert.throws(read, { message });
    // A number is a plain one: a duration is read by duration(), as every load tool does.
    assert.throws(() => number({ RATE: '6s' }, 'RATE', 10, 0.1, 86400), { message: 'RATE must be a number from 0.1 to 86400 (got "6s")' });
    assert.equal(duration({ DURATION: '6s' }, 'DURATION', 10, 0.1, 86400), 6);
    assert.equal(flag({}, 'KEEPALIVE', true), true);
  });
});

describe('its own CPU time', () => {
  test('cgroup v1 cpuacct.usage (ns), v2 cpu.stat usage_usec, else the process', () => {
    const v1 = tmp(); dirs.push(v1);
    fs.mkdirSync(path.join(v1, 'cpuacct'));
    fs.writeFileSync(path.join(v1, 'cpuacct/cpuacct.usage'), '123456789\n');
    assert.deepEqual(ownCpu(v1), { ns: 123456789, source: 'cgroup v1 cpuacct.usage' });
    const v2 = tmp(); dirs.push(v2);
    fs.writeFileSync(path.join(v2, 'cpu.stat'), 'usage_usec 4200\nuser_usec 4000\n');
    assert.deepEqual(ownCpu(v2), { ns: 4200000, source: 'cgroup v2 cpu.stat' });
    assert.equal(ownCpu(path.join(v2, 'none')).source, 'process');
  });
});

describe('the tool\'s process', () => {
  test('a SIGTERM to the wrapper reaches the tool as SIGINT; the wrapper waits for its end', async () => {
    // A wrapper (node) supervising a tool (sh) that reports the signal it got
    // and gives up by itself after 5 s. The wrapper is a plain node, not a
    // test runner's child (node --test marks its children in the environment).
    const lib = new URL('../lib.mjs', import.meta.url).href;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
    const wrapper = spawn(process.execPath, ['--input-type=module', '-e', `
      import { spawn } from 'node:child_process';
      import { superviseChild } from '${lib}';
      const child = spawn('sh', ['-c', 'trap "echo got INT; exit 3" INT; echo ready; i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; exit 9'], { stdio: ['ignore', 'inherit', 'inherit'] });
      const s = superviseChild(child);
      const r = await s.exit;
      console.log('exit', r.code, s.interrupted());`], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    wrapper.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready') && !wrapper.signaled) { wrapper.signaled = true; wrapper.kill('SIGTERM'); }
    });
    const code = await new Promise((resolve) => wrapper.on('exit', resolve));
    assert.equal(code, 0, out);
    assert.match(out, /got INT\nexit 3 true/);
  });
});
