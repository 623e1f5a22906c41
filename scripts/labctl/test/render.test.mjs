import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderConfig } from '../plan/render.mjs';
import { TOPOLOGY } from '../core/topology.mjs';

// The port haproxy.cfg binds and the backends listen on (topology.txt).
const PORT = TOPOLOGY.frontends[0].port;

const baseline = readFileSync(new URL('../../../haproxy/haproxy.cfg', import.meta.url), 'utf8');
const section = (text, header) => {
  const start = text.indexOf(`\n${header}\n`);
  const next = text.slice(start + 1).search(/\n[a-z]/);
  return text.slice(start + 1, next < 0 ? undefined : start + 1 + next);
};

test('no settings: the baseline with only the description changed', () => {
  const out = renderConfig(baseline, {}, 'baseline');
  assert.equal(out, baseline);
});

test('replaces a global setting and sets the description', () => {
  const out = renderConfig(baseline, { global: { maxconn: '20' } }, 'maxconn-sweep/maxconn-20');
  const global = section(out, 'global');
  assert.match(global, /^ {4}maxconn 20$/m);
  assert.doesNotMatch(global, /maxconn 5000/);
  assert.match(global, /^ {4}description maxconn-sweep\/maxconn-20$/m);
  assert.equal((global.match(/^\s+maxconn /gm) ?? []).length, 1);
});

test('adds a missing setting at the end of its section, not after trailing comments', () => {
  const out = renderConfig(baseline, { 'backend be_fast': { fullconn: '1' } }, 'x');
  const be = section(out, 'backend be_fast');
  assert.match(be, new RegExp(`server-template fast 10 backend-fast:${PORT}\n {4}fullconn 1`));
  // other backends untouched
  assert.doesNotMatch(section(out, 'backend be_slow'), /fullconn/);
});

test('lists give several lines, null removes, "+" appends', () => {
  const out = renderConfig(baseline, {
    global: { 'cpu-map': ['1/1 0', '1/2 1'], 'stats timeout': null },
    'backend be_slow': { 'default-server+': 'minconn 1 maxconn 20' },
    'frontend fe_main': { bind: `:${PORT} backlog 128` },
  }, 'x');
  assert.match(section(out, 'global'), / {4}cpu-map 1\/1 0\n {4}cpu-map 1\/2 1/);
  assert.doesNotMatch(section(out, 'global'), /stats timeout/);
  assert.match(section(out, 'global'), /stats socket/, 'a longer keyword sharing a prefix stays');
  assert.match(section(out, 'backend be_slow'), /default-server check .* resolve-prefer ipv4 minconn 1 maxconn 20$/m);
  assert.match(section(out, 'frontend fe_main'), new RegExp(`^ {4}bind :${PORT} backlog 128$`, 'm'));
});

test('multi-word keywords match whole words only', () => {
  const out = renderConfig(baseline, { defaults: { 'timeout client': '5s' } }, 'x');
  const d = section(out, 'defaults');
  assert.match(d, /timeout client 5s/);
  assert.match(d, /timeout connect 4s/);
  assert.doesNotMatch(d, /timeout client 42s/);
});

test('unknown section or appending to a missing line is an error naming it', () => {
  assert.throws(() => renderConfig(baseline, { 'backend be_nope': { fullconn: '1' } }, 'x'), /section "backend be_nope" is not in the baseline/);
  assert.throws(() => renderConfig(baseline, { global: { 'nosuch+': 'x' } }, 'x'), /"nosuch" is not set in section "global"/);
  assert.throws(() => renderConfig(baseline, { global: { maxconn: 20 } }, 'x'), /must be a string/);
});
