// tests/lib/doc-links.mjs: GitHub's anchors, the links of a line, run citations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { abbreviatedRuns, anchorsOf, linksOf, slug, unkeptRuns } from '../../../tests/lib/doc-links.mjs';

test('anchors as GitHub makes them: punctuation dropped, code and links reduced to their text, repeats numbered', () => {
  assert.equal(slug("HAProxy's own ceiling: ceiling"), 'haproxys-own-ceiling-ceiling');
  assert.equal(slug('Connections and memory: `connections`, `oom`'), 'connections-and-memory-connections-oom');
  assert.equal(slug('HAProxy as N processes (the article\'s nbproc)'), 'haproxy-as-n-processes-the-articles-nbproc');
  assert.equal(slug('See [the docs](docs/x.md) — now'), 'see-the-docs--now');
  const anchors = anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n');
  assert.deepEqual([...anchors], ['a', 'b', 'b-1']);
});

test('links of a line: inline, images, references; not inline code', () => {
  assert.deepEqual(linksOf('[a](x.md) ![i](d/c.svg "t") `[no](y.md)` [b](<z.md#s>)'), ['x.md', 'd/c.svg', 'z.md#s']);
  assert.deepEqual(linksOf('[ref]: docs/knobs.md'), ['docs/knobs.md']);
});

test('a cited run is kept; saying it is not does not excuse it', () => {
  const kept = (p) => p === 'docs/runs/ceiling/20261125T192126Z';
  assert.deepEqual(unkeptRuns('→ `results/ceiling/20261125T192126Z/` and `results/oom/20261122T052059Z/`', kept), ['results/oom/20261122T052059Z']);
  assert.deepEqual(unkeptRuns('`results/oom/20261122T052059Z/` (not kept)', kept), ['results/oom/20261122T052059Z']);
});

test('a run cited by its timestamp alone is reported, a full citation is not', () => {
  assert.deepEqual(abbreviatedRuns('at 1,000/s (`…/20261125T231108Z/`) and (.../20261126T021826Z)'), ['…/20261125T231108Z', '…/20261126T021826Z']);
  assert.deepEqual(abbreviatedRuns('`results/oom/20261122T052059Z/`'), []);
});
