// The minimal HTTP/1.1 response parser: lengths, chunked bodies, any split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseParser } from '../lib.mjs';

// Feeds `text` in pieces of `size` bytes; returns the parser and the piece
// index at which it said "complete" (-1 if never).
function parse(text, size = Infinity) {
  const buf = Buffer.from(text, 'latin1');
  const p = new ResponseParser();
  let doneAt = -1;
  for (let i = 0, n = 0; i < buf.length; i += size, n++) {
    if (p.feed(buf, i, Math.min(buf.length, i + size)) && doneAt < 0) doneAt = n;
    if (p.error) break;
  }
  return { p, doneAt, pieces: Math.ceil(buf.length / Math.min(size, buf.length)) };
}

const SLOW = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nX-Replica: b1\r\n\r\nI'm slooooow";
const CHUNKED = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n' +
  '4\r\npong\r\nA;ext=1\r\n0123456789\r\n4\r\npong\r\n0\r\n\r\n';

test('Content-Length body: complete exactly at its last byte', () => {
  for (const size of [Infinity, 1, 2, 3, 7, 13]) {
    const { p, doneAt, pieces } = parse(SLOW, size);
    assert.equal(p.status, 200);
    assert.equal(p.error, null);
    assert.equal(doneAt, pieces - 1, `pieces of ${size}`);
  }
  assert.equal(parse(SLOW.slice(0, -1)).doneAt, -1);
  assert.equal(parse(SLOW.replace('Content-Length: 12', 'content-length:12')).doneAt, 0);
});

test('chunked body: complete at 0\\r\\n\\r\\n, whatever the split', () => {
  for (const size of [Infinity, 1, 2, 3, 5, 8, 64]) {
    const { p, doneAt, pieces } = parse(CHUNKED, size);
    assert.equal(p.error, null, `pieces of ${size}`);
    assert.equal(doneAt, pieces - 1, `pieces of ${size}`);
  }
  for (let cut = 1; cut < CHUNKED.length; cut++) assert.equal(parse(CHUNKED.slice(0, cut)).doneAt, -1, `cut at ${cut}`);
  // Trailers, and a body after headers and body in the same packet.
  assert.equal(parse(CHUNKED.replace(/0\r\n\r\n$/, '0\r\nX-T: 1\r\n\r\n'), 1).p.done, true);
  assert.equal(parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n').p.done, true);
});

test('no body, 1xx, and body until EOF', () => {
  assert.equal(parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n').p.done, true);
  assert.equal(parse('HTTP/1.1 204 No Content\r\n\r\n').p.done, true);
  const cont = parse(`HTTP/1.1 100 Continue\r\n\r\n${SLOW}`, 4);
  assert.deepEqual([cont.p.status, cont.p.done], [200, true]);
  const eof = parse('HTTP/1.0 200 OK\r\n\r\nsome body', 3);
  assert.equal(eof.p.done, false);
  assert.equal(eof.p.eof(), true);
  assert.equal(parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab').p.eof(), false);
});

test('non-200 status is parsed like any response', () => {
  const r = parse('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbye', 2);
  assert.deepEqual([r.p.status, r.p.done, r.p.error], [503, true, null]);
  const noReason = parse('HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n');
  assert.deepEqual([noReason.p.status, noReason.p.done], [404, true]);
});

test('garbage is bad_response, not a hang or a crash', () => {
  for (const text of ['SSH-2.0-OpenSSH\r\n\r\n', 'HTTP/1.1 20 OK\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npongXX\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n']) {
    assert.equal(parse(text, 3).p.error, 'bad_response', JSON.stringify(text));
  }
  assert.equal(parse(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(20000)}`, 1000).p.error, 'bad_response');
});
