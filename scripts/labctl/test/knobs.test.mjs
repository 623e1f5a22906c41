// The knobs table (docs/knobs.md) and its checker (tests/lib/knobs.mjs): what
// counts as a read in each kind of file, what does not, and the messages a
// missing or a stale row gives (the lab's own table against its code is the
// static test's: tests/static-knobs.sh).
// Also the backends' stop_grace_period: SHUTDOWN_DRAIN_MS + SHUTDOWN_GRACE_MS
// + 2 s as compose.yaml writes it.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  check, cfgReads, composeDefaults, composeReads, envFile, jsCode, jsReads, parseDoc, shellCode, shellReads, whereFiles,
} from '../../../tests/lib/knobs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const names = (reads) => [...new Set(reads.map((r) => r.name))].sort();
const sh = (text, file = 'x.sh') => names(shellReads([{ file, text }]));

describe('shell', () => {
  test('comments, single-quoted strings and quoted here-documents are blanked; "..." and $(...) in it are code', () => {
    const code = shellCode([
      'echo "$A" # $B',
      "echo '$C' \"$(printf '%s' \"$D\")\"",
      "cat <<'EOF'",
      '$E',
      'EOF',
      'cat <<EOF',
      '$F',
      'EOF',
      'read -r x <<<"$G" # a here-string is not a here-document',
      'echo "${#list[@]}" $H',
    ].join('\n'));
    assert.equal(code.split('\n').length, 10, 'line breaks kept');
    for (const kept of ['$A', '$D', '$F', '$G', '$H', '${#list[@]}']) assert.ok(code.includes(kept), `${kept} kept`);
    for (const gone of ['$B', '$C', '$E']) assert.ok(!code.includes(gone), `${gone} blanked`);
  });

  test('default forms, env_value, in_image and names no file assigns are reads', () => {
    assert.deepEqual(sh([
      'a="${ONE:-x}" b="${TWO-}" c="${THREE:+y}" d="${FOUR:?set it}" e="${FIVE:=z}"',
      'image=$(env_value SIX)',
      'in_image SEVEN node -e 1',
      'echo "${EIGHT}" $NINE',
    ].join('\n')), ['EIGHT', 'FIVE', 'FOUR', 'NINE', 'ONE', 'SEVEN', 'SIX', 'THREE', 'TWO']);
  });

  test('a for over names whose body hands each to env_value, or reads it by ${!var}', () => {
    assert.deepEqual(sh('for name in HAPROXY_NOFILE NOFILE; do\n  value=$(env_value "${name}")\ndone'), ['HAPROXY_NOFILE', 'NOFILE']);
    assert.deepEqual(sh('for name in A_PORT B_PORT; do echo "${!name:-}"; done'), ['A_PORT', 'B_PORT']);
    assert.deepEqual(sh('for name in NOT_READ ALSO_NOT; do echo "${name}"; done'), [], 'a list of words alone is no read');
  });

  test('not reads: an assigned name read plainly, arrays, bash\'s own, lowercase, another program\'s text', () => {
    assert.deepEqual(sh([
      'PROG_NAME="x"',
      'echo "${PROG_NAME}"',
      'declare -A PROBES=()',
      'echo "${PROBES[$1]:-}"',
      'echo "${BASH_SOURCE[0]}" "$SECONDS" "${lower:-x}"',
      "sh -c 'echo ${QUOTED:-x}'",
      "cat >fake <<'FAKE'",
      'echo "${FAKE_ANSWER:-1}"',
      'FAKE',
    ].join('\n')), []);
  });

  test('an assignment in any file counts: a name set by one script and read plainly by another is internal', () => {
    const reads = shellReads([{ file: 'a.sh', text: 'ROOT_DIR=/x' }, { file: 'b.sh', text: 'ls "${ROOT_DIR}"\necho "$OTHER"' }]);
    assert.deepEqual(reads, [{ file: 'b.sh', line: 2, name: 'OTHER', how: '$OTHER (assigned by no shell file)' }]);
  });
});

describe('JavaScript', () => {
  test('the forms a program reads its environment in', () => {
    const { reads, computed } = jsReads('loadgen/x.mjs', [
      "const a = process.env.ONE ?? process.env['TWO'];",
      'export function loadConfig(env = process.env) { return env.THREE || env["FOUR"]; }',
      "const r = number(env, 'FIVE', 1, 0, 9) + intEnv('SIX', 1) + env('SEVEN', 'x') + seconds('EIGHT', 0) + k6Duration('ELEVEN', 1);",
      'const k = __ENV.NINE;',
      "  ['TEN', 'ten', 65535],",
    ].join('\n'));
    assert.deepEqual(names(reads), ['EIGHT', 'ELEVEN', 'FIVE', 'FOUR', 'NINE', 'ONE', 'SEVEN', 'SIX', 'TEN', 'THREE', 'TWO']);
    assert.deepEqual(computed, []);
  });

  test('comments are not reads; strings and regular expressions do not end the code', () => {
    assert.ok(!jsCode('// process.env.GONE\nconst u = "http://x"; /* env.GONE */').includes('GONE'));
    const { reads } = jsReads('loadgen/x.mjs', "const re = /'/; // env.NOT\nconst t = process.env.KEPT;");
    assert.deepEqual(names(reads), ['KEPT']);
    const after = jsReads('loadgen/x.mjs', "function q(s) { return /'/.test(s) ? 1 : 2 / 3; } // env.NOT\nconst u = env.ALSO_KEPT;");
    assert.deepEqual(names(after.reads), ['ALSO_KEPT'], 'a regular expression after return');
  });

  test('the engine: only process.env counts, its env objects are a step\'s variables', () => {
    const { reads, computed } = jsReads('scripts/labctl/x.mjs', "const s = env.DURATION; env[tool.replicas] = '2'; process.env.REAL;", false);
    assert.deepEqual(names(reads), ['REAL']);
    assert.deepEqual(computed, []);
  });

  test('a read by a computed name outside the known helpers is reported; inside them it is not', () => {
    const text = 'export function pick(env, name) {\n  return env[name];\n}\n';
    assert.deepEqual(jsReads('loadgen/new.mjs', text).computed, [{ file: 'loadgen/new.mjs', line: 2, how: 'env[name] in pick' }]);
    assert.deepEqual(jsReads('loadgen/lib/values.mjs', 'const text = (env, name) => {\n  const raw = env[name];\n};\n').computed, []);
  });
});

describe('compose.yaml, HAProxy configs, .env', () => {
  const compose = [
    'services:',
    '  a:',
    '    image: ${IMG:?set IMG in .env} # ${IN_COMMENT}',
    '    command: ["sh", "-c", "echo $$NOT_INTERPOLATED"]',
    '    environment:',
    '      - PASSED',
    '      - FIXED=1',
    '      LIMIT: ${LIMIT:-2g}',
    '    cpuset: ${CPUSET:-}',
  ].join('\n');

  test('interpolations and pass-through names; not comments, $$ or NAME=value', () => {
    assert.deepEqual(composeReads(compose).map((r) => `${r.name}:${r.line}`), ['IMG:3', 'LIMIT:8', 'CPUSET:9', 'PASSED:6']);
  });

  test('the fallbacks of ${NAME:-default}', () => {
    assert.deepEqual(composeDefaults(compose), { LIMIT: ['2g'], CPUSET: [''] });
  });

  test('HAProxy\'s "${NAME}"; .env\'s NAME=value', () => {
    assert.deepEqual(cfgReads('h.cfg', '# "${NOT}"\n    bind :"${PORT_VAR-8404}"\n').map((r) => r.name), ['PORT_VAR']);
    assert.deepEqual(envFile('# c\nA=1\nB=x:y\n\n'), { A: '1', B: 'x:y' });
  });
});

describe('the table', () => {
  test('rows before the heading are knobs, after it names that are not; header and separator rows skipped', () => {
    const doc = parseDoc('| Variable | Default |\n|---|---|\n| `A` | `1` (.env) |\n## Read, but not knobs\n| `B`, `C` | why |\n');
    assert.deepEqual(doc.knobs.map((r) => r.names), [['A']]);
    assert.deepEqual(doc.others.map((r) => r.names), [['B', 'C']]);
    assert.equal(doc.knobs[0].line, 3);
  });

  test('the files a "where it acts" cell names', () => {
    assert.deepEqual(whereFiles('compose.yaml (haproxy ports), scripts/lib/common.sh (`env_value`), .env, topology.txt (`x`).'),
      ['compose.yaml', 'scripts/lib/common.sh', '.env', 'topology.txt']);
  });
});

// fixture FILES: a repository in a temporary folder; its path.
function fixture(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-knobs-'));
  tmpDirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const ROW = (name, def, where) => `| \`${name}\` | ${def} | what it does | ${where} |`;
const REPO = {
  '.env': 'IMG=img:1\nMEM=1g\n',
  'compose.yaml': 'services:\n  a:\n    image: ${IMG:?set IMG in .env}\n    mem_limit: ${MEM:?set MEM in .env}\n',
  'scripts/run.sh': '#!/bin/bash\necho "${VERBOSE:-}"\n',
};
const TABLE = [
  '| Variable | Default | Meaning | Where it acts |', '|---|---|---|---|',
  ROW('IMG', '`img:1` (.env)', 'compose.yaml'),
  ROW('MEM', '`1g` (.env)', 'compose.yaml'),
  ROW('VERBOSE', 'empty', 'scripts/run.sh'),
];
const doc = (rows) => `# Knobs\n\n${rows.join('\n')}\n`;

describe('check', () => {
  test('a table that matches its code: no problems', () => {
    assert.deepEqual(check(fixture({ ...REPO, 'docs/knobs.md': doc(TABLE) })).problems, []);
  });

  test('a name read but missing from the table: what reads it, where', () => {
    const rows = TABLE.filter((r) => !r.includes('`MEM`'));
    assert.deepEqual(check(fixture({ ...REPO, 'docs/knobs.md': doc(rows) })).problems,
      ['docs/knobs.md lacks MEM, read by compose.yaml:4 (${MEM...})']);
  });

  test('a row that nothing reads', () => {
    assert.deepEqual(check(fixture({ ...REPO, 'docs/knobs.md': doc([...TABLE, ROW('BOGUS', '`1`', 'scripts/run.sh')]) })).problems,
      ['docs/knobs.md:8 lists BOGUS, which nothing reads (no file has a read of it: see tests/lib/knobs.mjs for what counts)']);
  });

  test('a default that is not the one in .env; a "where" that names no reader; a file that is not there', () => {
    const rows = [
      ...TABLE.slice(0, 2),
      ROW('IMG', '`img:2` (.env)', 'compose.yaml'),
      ROW('MEM', '`2g` (.env)', 'compose.yaml'),
      ROW('VERBOSE', 'empty', 'scripts/other.sh'),
    ];
    assert.deepEqual(check(fixture({ ...REPO, 'docs/knobs.md': doc(rows) })).problems, [
      'docs/knobs.md:5 (IMG): default should say `img:1` (.env), found "`img:2` (.env)"',
      'docs/knobs.md:6 (MEM): default should say `1g` (.env), found "`2g` (.env)"',
      'docs/knobs.md:7 (VERBOSE) names scripts/other.sh, which does not exist',
      'docs/knobs.md:7 (VERBOSE): "where it acts" names scripts/other.sh, none of which reads it; read by scripts/run.sh',
    ]);
  });

  test('a fallback in compose.yaml: a default with a second home', () => {
    const compose = 'services:\n  a:\n    image: ${IMG:?set IMG in .env}\n    mem_limit: ${MEM:-1g}\n';
    assert.deepEqual(check(fixture({ ...REPO, 'compose.yaml': compose, 'docs/knobs.md': doc(TABLE) })).problems,
      ['compose.yaml falls back to "1g" for MEM: a default\'s one home is .env (set MEM there; ${MEM:?set MEM in .env})']);
  });

  test('a name listed twice', () => {
    const problems = check(fixture({ ...REPO, 'docs/knobs.md': doc([...TABLE, '## Read, but not knobs', '| `IMG` | why |']) })).problems;
    assert.deepEqual(problems, ['docs/knobs.md:9 lists IMG again (first at line 5)']);
  });
});

describe('the backends\' stop_grace_period', () => {
  const text = (f) => fs.readFileSync(path.join(root, f), 'utf8');
  // Go's duration syntax, as compose reads stop_grace_period: the sum of its parts.
  const durationMs = (d) => {
    assert.match(d, /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/, `"${d}" is a duration`);
    const unit = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
    return [...d.matchAll(/([0-9.]+)(ns|us|ms|s|m|h)/g)].reduce((t, [, v, u]) => t + Number(v) * unit[u], 0);
  };
  // interpolate VALUE ENV: compose's ${NAME...} with ENV's values (all set here).
  const interpolate = (value, env) => value.replace(/\$\{([A-Z][A-Z0-9_]*)[^}]*\}/g, (_, name) => {
    assert.ok(name in env, `${name} set`);
    return env[name];
  });

  test('SHUTDOWN_DRAIN_MS + SHUTDOWN_GRACE_MS + 2 s: 15 s with .env\'s values, and follows them', () => {
    const compose = text('compose.yaml');
    const line = /^ {4}stop_grace_period: "(.*)"$/m.exec(compose);
    assert.ok(line, 'the backends\' stop_grace_period');
    const env = envFile(text('.env'));
    assert.equal(durationMs(interpolate(line[1], env)), Number(env.SHUTDOWN_DRAIN_MS) + Number(env.SHUTDOWN_GRACE_MS) + 2000);
    assert.equal(durationMs(interpolate(line[1], env)), 15000, '3 s + 10 s + 2 s, as before');
    assert.equal(durationMs(interpolate(line[1], { SHUTDOWN_DRAIN_MS: '500', SHUTDOWN_GRACE_MS: '60000' })), 62500);
    for (const name of ['SHUTDOWN_DRAIN_MS', 'SHUTDOWN_GRACE_MS']) {
      assert.match(compose, new RegExp(`^ {6}${name}: \\$\\{${name}:\\?set ${name} in \\.env\\}$`, 'm'), `the backends get ${name} from .env`);
    }
  });

  test('.env\'s values are the backend\'s own defaults (backend/app.mjs)', async () => {
    const { DEFAULTS } = await import('../../../backend/app.mjs');
    const env = envFile(text('.env'));
    assert.equal(Number(env.SHUTDOWN_DRAIN_MS), DEFAULTS.shutdownDrainMs);
    assert.equal(Number(env.SHUTDOWN_GRACE_MS), DEFAULTS.shutdownGraceMs);
  });
});
