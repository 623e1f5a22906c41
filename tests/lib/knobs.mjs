// The lab's knobs (docs/knobs.md) against the code that reads them: every
// environment variable the lab reads has a row, every row is read somewhere,
// and a default the table says comes from .env or compose.yaml is the value
// there. Prints one line per problem, "N knobs, N read but not knobs, ..."
// last; exit 1 if any.
//   node tests/lib/knobs.mjs [ROOT]   (ROOT: the repository, by default ".")
// What counts as a read, by kind of file (docs/knobs.md says the same):
//   compose.yaml     ${NAME...} (interpolated from the shell or the env
//                    files) and "- NAME" (passed through by name)
//   *.sh, .ci/run    ${NAME:-...} and the other default forms (- = + ?, with
//                    or without :), $NAME or ${NAME} of a name no shell file
//                    assigns, "env_value NAME" and "in_image NAME"
//                    (scripts/lib/common.sh, tests/assert.sh), and the names of
//                    a "for VAR in NAME..." whose body hands ${VAR} to
//                    env_value or reads ${!VAR}; never in a comment, a
//                    single-quoted string or a quoted here-document (another
//                    program's text)
//   *.mjs, *.js      process.env.NAME, env.NAME (a config's env object),
//                    __ENV.NAME (k6), each also as [...]['NAME']; and the
//                    helpers that read a name they are given (READERS below).
//                    Under scripts/ (the engine) only process.env and __ENV:
//                    its env objects are a scenario step's variables
//   haproxy/*.cfg    "${NAME}" (HAProxy's environment variables)
// Uppercase names only: the scripts' own variables are lowercase, and the
// uppercase ones they set for themselves are the table's "Read, but not
// knobs". JavaScript under test/ and tests/ is left out: the tests set what
// it reads.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export const DOC = 'docs/knobs.md';
// The heading of docs/knobs.md's table of names read that are not knobs.
export const NOT_KNOBS_HEADING = 'Read, but not knobs';
const NAME = '[A-Z][A-Z0-9_]*';
const UPPER = new RegExp(`^${NAME}$`);
// Variables bash sets itself: never the caller's.
const BASH_OWN = new Set(`BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_COMMAND BASH_LINENO
  BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_VERSINFO BASH_VERSION COLUMNS COMP_WORDS DIRSTACK EPOCHREALTIME
  EPOCHSECONDS EUID FUNCNAME GROUPS HISTCMD HOSTNAME HOSTTYPE IFS LINENO LINES MACHTYPE OLDPWD OPTARG OPTERR
  OPTIND OSTYPE PIPESTATUS PPID PS4 PWD RANDOM REPLY SECONDS SHELLOPTS SHLVL SRANDOM UID`.split(/\s+/));
// Helpers that read the environment by a name they are given: the file, the
// function (whose body reads env[name], __ENV[name], process.env[name]) and
// how its callers name the variable. A computed read anywhere else fails the
// check: its callers' form is unknown here.
export const READERS = [
  { file: 'loadgen/lib/lab.js', fn: 'env', form: "env('NAME', ...), intEnv('NAME', ...), seconds('NAME', ...), k6Duration('NAME', ...)" },
  { file: 'loadgen/lib/values.mjs', fn: 'text', form: "duration(env, 'NAME', ...), flag(env, 'NAME', ...), extraArgs(env, 'NAME', ...)" },
  { file: 'loadgen/wrapper/lib.mjs', fn: 'number', form: "number(env, 'NAME', ...)" },
  { file: 'loadgen/holder/lib.mjs', fn: 'int', form: "int(env, 'NAME', ...)" },
  { file: 'backend/app.mjs', fn: 'loadConfig', form: "ENV_VARS rows ['NAME', 'option', max]" },
];

// lineAt TEXT OFFSET: the 1-based line of OFFSET.
export const lineAt = (text, offset) => text.slice(0, offset).split('\n').length;

// shellCode TEXT: TEXT with what the shell does not expand blanked out
// (comments, '...' and $'...' strings, escaped characters, the bodies of
// quoted here-documents), line breaks kept. A $(...) inside "..." is code.
export function shellCode(text) {
  const out = [];
  const stack = [{ state: 'code', depth: 0 }];
  const pending = []; // here-documents started on this line
  const blank = (c) => (c === '\n' ? '\n' : ' ');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '\n') {
      if (top.state === 'comment') stack.pop();
      out.push('\n');
      if (pending.length > 0 && stack[stack.length - 1].state === 'code') i = hereDocuments(text, i, pending, out);
      continue;
    }
    if (top.state === 'comment') { out.push(' '); continue; }
    if (top.state === 'sq') { if (c === "'") stack.pop(); out.push(' '); continue; }
    if (top.state === 'ansi') {
      if (c === '\\') { out.push(' ', blank(text[i + 1] ?? '')); i++; } else { if (c === "'") stack.pop(); out.push(' '); }
      continue;
    }
    if (top.state === 'dq') {
      if (c === '\\') { out.push(' ', blank(text[i + 1] ?? '')); i++; }
      else if (c === '"') { stack.pop(); out.push(' '); }
      else if (c === '$' && text[i + 1] === '(') { stack.push({ state: 'code', depth: 0 }); out.push('$', '('); i++; }
      else out.push(c);
      continue;
    }
    // code
    if (c === '\\') { out.push(' ', blank(text[i + 1] ?? '')); i++; }
    else if (c === "'") { stack.push({ state: 'sq' }); out.push(' '); }
    else if (c === '$' && text[i + 1] === "'") { stack.push({ state: 'ansi' }); out.push(' ', ' '); i++; }
    else if (c === '"') { stack.push({ state: 'dq' }); out.push(' '); }
    else if (c === '#' && (i === 0 || /[\s;&|(]/.test(text[i - 1]))) { stack.push({ state: 'comment' }); out.push(' '); }
    else if (text.startsWith('<<<', i)) { out.push('<', '<', '<'); i += 2; }
    else if (text.startsWith('<<', i)) {
      const m = /^<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|(\\?)([A-Za-z_][A-Za-z0-9_]*))/.exec(text.slice(i));
      if (!m) { out.push(c); continue; }
      pending.push({ delim: m[2] ?? m[3] ?? m[5], quoted: m[2] !== undefined || m[3] !== undefined || m[4] === '\\', strip: m[1] === '-' });
      out.push('<', '<', ...' '.repeat(m[0].length - 2));
      i += m[0].length - 1;
    }
    else if (c === '(') { top.depth++; out.push(c); }
    else if (c === ')') {
      if (top.depth === 0 && stack.length > 1) { stack.pop(); out.push(c); } else { top.depth--; out.push(c); }
    }
    else out.push(c);
  }
  return out.join('');
}

// hereDocuments TEXT I PENDING OUT: the bodies of PENDING's here-documents
// from after the line break at I (a quoted one's blanked), into OUT; the
// offset of the last line break consumed.
function hereDocuments(text, i, pending, out) {
  while (pending.length > 0) {
    const { delim, quoted, strip } = pending.shift();
    while (i < text.length - 1) {
      const end = text.indexOf('\n', i + 1) < 0 ? text.length : text.indexOf('\n', i + 1);
      const line = text.slice(i + 1, end);
      const last = (strip ? line.replace(/^\t+/, '') : line) === delim;
      out.push(last || quoted ? ' '.repeat(line.length) : line);
      if (end < text.length) out.push('\n');
      i = end;
      if (last) break;
    }
  }
  return i;
}

// shellReads FILES: [{file, line, name, how}] over FILES ([{file, text}]),
// the rules at the top of this file.
export function shellReads(files) {
  const codes = files.map(({ file, text }) => ({ file, code: shellCode(text) }));
  const assigned = new Set();
  const arrays = new Set(); // never in the environment
  for (const { code } of codes) {
    for (const m of code.matchAll(new RegExp(`(?:\\b(?:declare|local|readonly|typeset)\\s+-\\w*[aA]\\w*\\s+|(?:^|[\\s;&|(])(?=${NAME}=\\())(${NAME})`, 'gm'))) arrays.add(m[1]);
    for (const m of code.matchAll(new RegExp(`(?:^|[\\s;&|(\`{])(${NAME})(?:\\[[^\\]\\n]*\\])?\\+?=`, 'gm'))) assigned.add(m[1]);
    for (const m of code.matchAll(new RegExp(`\\b(?:for|mapfile(?:\\s+-\\w+)*|printf\\s+-v)\\s+(${NAME})\\b`, 'g'))) assigned.add(m[1]);
  }
  const reads = [];
  for (const { file, code } of codes) {
    const add = (name, offset, how) => {
      if (UPPER.test(name) && !BASH_OWN.has(name) && !arrays.has(name)) reads.push({ file, line: lineAt(code, offset), name, how });
    };
    for (const m of code.matchAll(/\$\{(!?)([A-Za-z_][A-Za-z0-9_]*)(\[[^\]\n]*\])?(:?[-=+?])?/g)) {
      if (m[1] === '!') continue;
      if (m[4]) add(m[2], m.index, `\${${m[2]}${m[4]}...}`);
      else if (!assigned.has(m[2])) add(m[2], m.index, `\${${m[2]}} (assigned by no shell file)`);
    }
    for (const m of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
      if (!assigned.has(m[1])) add(m[1], m.index, `$${m[1]} (assigned by no shell file)`);
    }
    for (const m of code.matchAll(new RegExp(`\\b(env_value|in_image)\\s+(${NAME})\\b`, 'g'))) add(m[2], m.index, `${m[1]} ${m[2]}`);
    for (const m of code.matchAll(new RegExp(`\\bfor\\s+([a-z_]\\w*)\\s+in\\s+(${NAME}(?:[ \\t]+${NAME})*)\\s*;?\\s*do\\b([\\s\\S]*?)\\bdone\\b`, 'g'))) {
      const v = m[1];
      if (!new RegExp(`env_value\\s+\\$\\{?${v}\\}?|\\$\\{!${v}\\b`).test(m[3])) continue;
      for (const w of m[2].matchAll(new RegExp(NAME, 'g'))) add(w[0], m.index, `for ${v} in ... ${w[0]}: env_value "\${${v}}"`);
    }
  }
  return reads;
}

// jsCode TEXT: TEXT with its comments blanked (strings, templates and
// regular expressions kept), line breaks kept.
export function jsCode(text) {
  const out = [];
  let state = 'code';
  let quote = '';
  let prev = ''; // the last non-blank character of code
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (state === 'line') { if (c === '\n') { state = 'code'; out.push(c); } else out.push(' '); continue; }
    if (state === 'block') {
      if (c === '*' && text[i + 1] === '/') { state = 'code'; out.push(' ', ' '); i++; } else out.push(c === '\n' ? '\n' : ' ');
      continue;
    }
    if (state === 'string' || state === 'regex') {
      out.push(c);
      if (c === '\\') { out.push(text[i + 1] ?? ''); i++; }
      else if (state === 'regex' && c === '[') quote = ']';
      else if (c === quote) { if (quote === ']') quote = '/'; else { state = 'code'; prev = c; } }
      continue;
    }
    if (c === '/' && text[i + 1] === '/') { state = 'line'; out.push(' '); continue; }
    if (c === '/' && text[i + 1] === '*') { state = 'block'; out.push(' '); continue; }
    if (c === "'" || c === '"' || c === '`') { state = 'string'; quote = c; out.push(c); continue; }
    // A regular expression where an operand may start (else a division).
    if (c === '/' && (prev === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(prev) || /\b(?:return|typeof|case|in|of)\s*$/.test(out.slice(-12).join('')))) {
      state = 'regex'; quote = '/'; out.push(c); continue;
    }
    out.push(c);
    if (!/\s/.test(c)) prev = c;
  }
  return out.join('');
}

// enclosingFunction LINES INDEX: the name of the top-level function (or
// const) that line INDEX belongs to.
function enclosingFunction(lines, index) {
  for (let i = index; i >= 0; i--) {
    const m = /^(?:export )?(?:async )?(?:function\*? ([\w$]+)|const ([\w$]+) = )/.exec(lines[i]);
    if (m) return m[1] ?? m[2];
  }
  return null;
}

// jsReads FILE TEXT [PROGRAM]: {reads: [{file, line, name, how}], computed:
// [{file, line, how}]} (each read by a computed name outside the READERS).
// PROGRAM false (scripts/labctl, the engine): only process.env and __ENV count,
// as its env objects are a scenario step's variables, not its environment.
export function jsReads(file, text, program = true) {
  const code = jsCode(text);
  const reads = [];
  const computed = [];
  const q = `(['"\`])(${NAME})\\1`;
  const forms = [
    [new RegExp(`\\bprocess\\.env\\.(${NAME})\\b`, 'g'), 1, 'process.env.NAME'],
    [new RegExp(`\\bprocess\\.env\\[\\s*${q}\\s*\\]`, 'g'), 2, "process.env['NAME']"],
    [new RegExp(`(?<![\\w.$])env\\.(${NAME})\\b`, 'g'), 1, 'env.NAME'],
    [new RegExp(`(?<![\\w.$])env\\[\\s*${q}\\s*\\]`, 'g'), 2, "env['NAME']"],
    [new RegExp(`\\b__ENV\\.(${NAME})\\b`, 'g'), 1, '__ENV.NAME'],
    [new RegExp(`\\b__ENV\\[\\s*${q}\\s*\\]`, 'g'), 2, "__ENV['NAME']"],
    [new RegExp(`\\(\\s*env\\s*,\\s*${q}`, 'g'), 2, "helper(env, 'NAME')"],
    [new RegExp(`(?<![\\w.$])(?:env|intEnv|seconds|k6Duration)\\(\\s*${q}`, 'g'), 2, "env/intEnv/seconds/k6Duration('NAME')"],
    [new RegExp(`^\\s*\\[\\s*'(${NAME})'\\s*,\\s*'[a-z]\\w*'\\s*,`, 'gm'), 1, "ENV_VARS row ['NAME', 'option', ...]"],
  ];
  for (const [re, group, how] of forms) {
    if (!program && !/process\.env|__ENV/.test(how)) continue;
    for (const m of code.matchAll(re)) reads.push({ file, line: lineAt(code, m.index), name: m[group], how });
  }
  const lines = code.split('\n');
  const computedRead = program ? /(?<![\w.$])(process\.env|__ENV|env)\[\s*(?![\s'"`])([^\]\n]*)\]/g
    : /(?<![\w.$])(process\.env|__ENV)\[\s*(?![\s'"`])([^\]\n]*)\]/g;
  for (const m of code.matchAll(computedRead)) {
    const line = lineAt(code, m.index);
    const fn = enclosingFunction(lines, line - 1);
    if (!READERS.some((r) => r.file === file && r.fn === fn)) computed.push({ file, line, how: `${m[1]}[${m[2]}] in ${fn ?? 'top level'}` });
  }
  return { reads, computed };
}

// yamlCode TEXT: a YAML file (or an HAProxy config: the same # comments)
// with its comments blanked, line breaks kept.
const yamlCode = (text) => text.split('\n').map((line) => {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) { if (c === quote) quote = ''; } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i) + ' '.repeat(line.length - i);
  }
  return line;
}).join('\n');

// composeReads TEXT: [{file, line, name, how}] of compose.yaml.
export function composeReads(text, file = 'compose.yaml') {
  const code = yamlCode(text);
  const reads = [];
  for (const m of code.matchAll(new RegExp(`(?<!\\$)\\$\\{?(${NAME})`, 'g'))) {
    reads.push({ file, line: lineAt(code, m.index), name: m[1], how: `\${${m[1]}...}` });
  }
  for (const m of code.matchAll(new RegExp(`^[ \\t]*-[ \\t]+(${NAME})[ \\t]*$`, 'gm'))) {
    reads.push({ file, line: lineAt(code, m.index), name: m[1], how: `- ${m[1]} (passed through)` });
  }
  return reads;
}

// composeDefaults TEXT: {NAME: [default...]} of compose.yaml's ${NAME:-default}
// and ${NAME-default}.
export function composeDefaults(text) {
  const defaults = {};
  for (const m of yamlCode(text).matchAll(new RegExp(`\\$\\{(${NAME}):?-([^}]*)\\}`, 'g'))) {
    (defaults[m[1]] ??= []).includes(m[2]) || defaults[m[1]].push(m[2]);
  }
  return defaults;
}

// cfgReads FILE TEXT: [{file, line, name, how}] of an HAProxy config.
export function cfgReads(file, text) {
  const code = yamlCode(text);
  return [...code.matchAll(new RegExp(`\\$\\{(${NAME})`, 'g'))]
    .map((m) => ({ file, line: lineAt(code, m.index), name: m[1], how: `"\${${m[1]}}"` }));
}

// envFile TEXT: {NAME: value} of a NAME=value file (.env).
export function envFile(text) {
  const values = {};
  for (const line of text.split('\n')) {
    const m = new RegExp(`^(${NAME})=(.*)$`).exec(line);
    if (m) values[m[1]] = m[2];
  }
  return values;
}

// parseDoc TEXT: {knobs: [{names, cells, line}], others: [...]}: the rows of
// docs/knobs.md's tables (first cell: the `NAME`s), the knobs' before the
// NOT_KNOBS_HEADING, the others' after it.
export function parseDoc(text) {
  const knobs = [];
  const others = [];
  let rows = knobs;
  text.split('\n').forEach((line, i) => {
    if (new RegExp(`^#+\\s+${NOT_KNOBS_HEADING}\\s*$`).test(line)) rows = others;
    if (!line.startsWith('|') || /^\|[\s:|-]+\|?\s*$/.test(line)) return;
    const cells = line.replace(/^\|/, '').replace(/\|\s*$/, '').split(/(?<!\\)\|/).map((c) => c.trim());
    const names = [...cells[0].matchAll(new RegExp(`\`(${NAME})\``, 'g'))].map((m) => m[1]);
    if (names.length > 0) rows.push({ names, cells, line: i + 1 });
  });
  return { knobs, others };
}

// walk ROOT: the repository's files (paths from ROOT), without .git,
// node_modules, results/ and docs/.
function walk(root, dir = '') {
  const files = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!['.git', 'node_modules'].includes(entry.name) && !['results', 'docs'].includes(path)) files.push(...walk(root, path));
    } else if (entry.isFile()) files.push(path);
  }
  return files;
}

// collectReads ROOT: {reads: [{file, line, name, how}], computed: [...]}.
export function collectReads(root) {
  const files = walk(root).sort();
  const text = (f) => readFileSync(join(root, f), 'utf8');
  const shell = files.filter((f) => f.endsWith('.sh') || f === '.ci/run').map((file) => ({ file, text: text(file) }));
  const js = files.filter((f) => /\.(mjs|js)$/.test(f) && !/(^|\/)tests?\//.test(f));
  const reads = [...composeReads(text('compose.yaml')), ...shellReads(shell)];
  const computed = [];
  for (const f of js) {
    const found = jsReads(f, text(f), !f.startsWith('scripts/'));
    reads.push(...found.reads);
    computed.push(...found.computed);
  }
  for (const f of files.filter((p) => /^haproxy\/.*\.cfg$/.test(p))) reads.push(...cfgReads(f, text(f)));
  return { reads, computed };
}

// FILE_TOKEN: a path a row's "where it acts" cell names.
const FILE_TOKEN = /(?:^|[\s(`,;])((?:\.ci\/run|\.env|[\w.-]+(?:\/[\w.-]+)*\.(?:sh|mjs|js|yaml|yml|cfg|json|txt))|[\w-]+(?:\/[\w.-]+)+\/?)(?=[\s),`;:.]|$)/g;

// whereFiles CELL: the files (or folders, ending in /) CELL names.
export const whereFiles = (cell) => [...cell.matchAll(FILE_TOKEN)].map((m) => m[1].replace(/\.$/, ''));

const at = (r) => `${r.file}:${r.line}`;

// check ROOT: the problems, one line each, and what was compared.
export function check(root) {
  const doc = parseDoc(readFileSync(join(root, DOC), 'utf8'));
  const { reads, computed } = collectReads(root);
  const env = envFile(readFileSync(join(root, '.env'), 'utf8'));
  const defaults = composeDefaults(readFileSync(join(root, 'compose.yaml'), 'utf8'));
  const byName = new Map();
  for (const r of reads) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  const problems = [];
  const rowOf = new Map();
  for (const row of [...doc.knobs, ...doc.others]) {
    for (const name of row.names) {
      if (rowOf.has(name)) problems.push(`${DOC}:${row.line} lists ${name} again (first at line ${rowOf.get(name).line})`);
      else rowOf.set(name, row);
    }
  }
  for (const [name, found] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
    if (!rowOf.has(name)) problems.push(`${DOC} lacks ${name}, read by ${found.slice(0, 3).map((r) => `${at(r)} (${r.how})`).join(', ')}${found.length > 3 ? ` and ${found.length - 3} more` : ''}`);
  }
  for (const [name, row] of rowOf) {
    if (!byName.has(name)) problems.push(`${DOC}:${row.line} lists ${name}, which nothing reads (no file has a read of it: see tests/lib/knobs.mjs for what counts)`);
  }
  for (const [name, values] of Object.entries(defaults)) {
    problems.push(`compose.yaml falls back to ${values.map((v) => `"${v}"`).join(' and ')} for ${name}: a default's one home is .env (set ${name} there; \${${name}:?set ${name} in .env})`);
  }
  for (const row of doc.knobs) problems.push(...rowProblems(root, row, byName, env, defaults));
  for (const c of computed) {
    problems.push(`${at(c)} reads the environment by a computed name (${c.how}): tests/lib/knobs.mjs cannot tell which; add the helper to its READERS and its callers' form to jsReads`);
  }
  return { problems, doc, byName, computed };
}

// rowProblems ROOT ROW BYNAME ENV DEFAULTS: a knob's row against the code: its
// "where" names at least one file that reads it, and each file named exists;
// its default, when the row says it comes from .env or compose.yaml, is the
// value there.
function rowProblems(root, row, byName, env, defaults) {
  const problems = [];
  const [name] = row.names;
  if (row.names.length > 1) problems.push(`${DOC}:${row.line}: one knob a row (found ${row.names.join(', ')})`);
  if (row.cells.length !== 4) problems.push(`${DOC}:${row.line} (${name}): expected 4 cells (variable, default, meaning, where it acts), found ${row.cells.length}`);
  const [, def = '', , where = ''] = row.cells;
  const named = whereFiles(where);
  for (const f of named) if (!existsSync(join(root, f))) problems.push(`${DOC}:${row.line} (${name}) names ${f}, which does not exist`);
  const readers = [...new Set((byName.get(name) ?? []).map((r) => r.file))];
  if (readers.length > 0 && !readers.some((f) => named.some((n) => f === n || (n.endsWith('/') && f.startsWith(n))))) {
    problems.push(`${DOC}:${row.line} (${name}): "where it acts" names ${named.join(', ') || 'no file'}, none of which reads it; read by ${readers.join(', ')}`);
  }
  if (name in env) {
    const want = env[name] === '' ? '(.env)' : `\`${env[name]}\` (.env)`;
    if (!def.includes(want)) problems.push(`${DOC}:${row.line} (${name}): default should say ${want}, found "${def}"`);
  } else if (def.includes('(.env)')) {
    problems.push(`${DOC}:${row.line} (${name}): default says (.env), but .env does not set ${name}`);
  } else if (name in defaults) {
    const want = defaults[name].map((d) => (d === '' ? 'empty (compose.yaml)' : `\`${d}\` (compose.yaml)`));
    const missing = want.filter((w) => !def.includes(w));
    if (missing.length > 0) problems.push(`${DOC}:${row.line} (${name}): default should say ${missing.join(' and ')}, found "${def}"`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? '.';
  const { problems, doc, byName } = check(root);
  for (const p of problems) console.log(p);
  const knobs = doc.knobs.reduce((n, r) => n + r.names.length, 0);
  const others = doc.others.reduce((n, r) => n + r.names.length, 0);
  console.log(`${knobs} knobs, ${others} read but not knobs, ${byName.size} names read in all; ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
  process.exitCode = problems.length ? 1 : 0;
}
