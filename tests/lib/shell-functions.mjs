// Every shell function a script uses is defined in that script or in a file
// it sources (directly or through another sourced file): no script leans on
// a function that only its caller happens to have defined. And no function
// is defined twice among the files one script loads: a second definition
// silently replaces the first (engines differ through scripts/lib/engine.sh,
// not by redefining). Prints one line per problem and "N files, N
// functions, N uses outside" last; exit 1 if any.
//   node tests/lib/shell-functions.mjs FILE...   (paths from the repository's root)
// What counts: a known function's name (one defined in any FILE, wrappers of
// a command such as docker() { command ...; } left out) where a command
// stands (line start, after ; | & ( ! { = or if/then/do/else/while/until),
// or as the function wait_for retries or trap runs, in the code: not in a
// comment or a quoted string (the $(...) inside a double-quoted one is code).
// Sources followed:
// source/. of "$(dirname "${BASH_SOURCE[0]}")/X", "${LAB_ROOT}/X" and X
// relative to the repository's root.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, normalize } from 'node:path';

const DEFINITION = /^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{/;
const WRAPPER = /\(\)\s*\{\s*command\s/;
const SOURCE = /^\s*(?:source|\.)\s+([^#;]+)/;
const USE = /(?:(?:^|[;&|(!{=]|\b(?:if|then|do|else|elif|while|until|time|exec)\b)\s*([A-Za-z_][A-Za-z0-9_]*)(?![\w=(-])|\b(?:wait_for\s+\S+|trap)\s+([A-Za-z_][A-Za-z0-9_]*)\b)/g;

// codeOf TEXT: TEXT with everything but code blanked out (comments, quoted
// strings; a $(...) inside double quotes stays code), lines kept in place.
export function codeOf(text) {
  const out = [];
  const stack = [{ state: 'code', depth: 0 }];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    const keep = () => out.push(c);
    const blank = () => out.push(c === '\n' ? '\n' : ' ');
    if (top.state === 'comment') {
      if (c === '\n') { stack.pop(); keep(); } else blank();
    } else if (top.state === 'sq') {
      if (c === "'") stack.pop();
      blank();
    } else if (top.state === 'dq') {
      if (c === '\\') { blank(); if (i + 1 < text.length) { i++; out.push(text[i] === '\n' ? '\n' : ' '); } }
      else if (c === '"') { stack.pop(); blank(); }
      else if (c === '$' && text[i + 1] === '(') { stack.push({ state: 'code', depth: 0 }); out.push(' ', '('); i++; }
      else blank();
    } else if (c === '\\') { keep(); if (i + 1 < text.length) { i++; out.push(text[i]); } }
    else if (c === "'") { stack.push({ state: 'sq' }); blank(); }
    else if (c === '"') { stack.push({ state: 'dq' }); blank(); }
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) { stack.push({ state: 'comment' }); blank(); }
    else if (c === '$' && text[i + 1] === '(') { stack.push({ state: 'code', depth: 0 }); out.push(' ', '('); i++; }
    else if (c === '(') { top.depth++; keep(); }
    else if (c === ')') { if (top.depth === 0 && stack.length > 1) { stack.pop(); blank(); } else { top.depth--; keep(); } }
    else keep();
  }
  return out.join('');
}

// sourcedPath FILE SPEC → the repository path SPEC names, or null (not ours,
// or built at run time).
export function sourcedPath(file, spec) {
  const bare = spec.trim().replace(/"/g, '');
  const fromHere = bare.replace(/^\$\(dirname \$\{BASH_SOURCE\[0\]\}\)\//, `${dirname(file)}/`);
  const fromRoot = fromHere.replace(/^\$\{LAB_ROOT\}\//, '');
  if (/[$<(]/.test(fromRoot)) return null;
  return normalize(fromRoot);
}

// parse TEXT FILE → {defines: Set, sources: [path], lines: [{n, text}]}.
export function parse(text, file) {
  const defines = new Set();
  const definitions = [];
  const wrappers = new Set();
  const sources = [];
  const lines = [];
  const code = codeOf(text).split('\n');
  text.split('\n').forEach((line, i) => {
    if (/^\s*#/.test(line)) return;
    const def = DEFINITION.exec(line);
    if (def) (WRAPPER.test(line) ? wrappers : defines).add(def[1]);
    if (def) definitions.push({ name: def[1], n: i + 1 });
    const src = SOURCE.exec(line);
    if (src) {
      const target = sourcedPath(file, src[1]);
      if (target) sources.push(target);
    }
    lines.push({ n: i + 1, text: code[i], defines: def?.[1] ?? null });
  });
  return { defines, definitions, wrappers, sources, lines };
}

// check FILES READ → {functions, problems: ["file:line NAME ..."]}; READ(file)
// gives a file's text (null when it does not exist).
export function check(files, read) {
  const parsed = new Map();
  const load = (file) => {
    if (!parsed.has(file)) {
      const text = read(file);
      parsed.set(file, text === null ? null : parse(text, file));
    }
    return parsed.get(file);
  };
  for (const f of files) load(f);
  const wrappers = new Set(files.flatMap((f) => [...(load(f)?.wrappers ?? [])]));
  const known = new Set(files.flatMap((f) => [...(load(f)?.defines ?? [])]).filter((n) => !wrappers.has(n)));
  // What FILE can call: its own functions and those of every file it sources.
  const reachable = (file, seen = new Set()) => {
    if (seen.has(file)) return new Set();
    seen.add(file);
    const p = load(file);
    if (!p) return new Set();
    return new Set([...p.defines, ...p.sources.flatMap((s) => [...reachable(s, seen)])]);
  };
  // The files FILE loads: itself and every file it sources, at any depth.
  const loaded = (file, seen = new Set()) => {
    if (seen.has(file) || !load(file)) return seen;
    seen.add(file);
    for (const s of load(file).sources) loaded(s, seen);
    return seen;
  };
  const problems = [];
  for (const file of files) {
    const where = new Map();
    for (const f of loaded(file)) {
      for (const { name, n } of load(f).definitions) {
        if (where.has(name)) problems.push(`${name} is defined twice among the files ${file} loads: ${where.get(name)} and ${f}:${n}`);
        else where.set(name, `${f}:${n}`);
      }
    }
  }
  for (const file of files) {
    const p = load(file);
    for (const src of p.sources) if (load(src) === null) problems.push(`${file}: sources ${src}, which does not exist`);
    const can = reachable(file);
    for (const { n, text, defines } of p.lines) {
      for (const m of text.matchAll(USE)) {
        const name = m[1] ?? m[2];
        if (!known.has(name) || can.has(name) || name === defines) continue;
        const where = files.find((f) => load(f)?.defines.has(name));
        problems.push(`${file}:${n} uses ${name}, defined in ${where}, which it does not source`);
      }
    }
  }
  return { functions: known.size, problems };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  const read = (f) => (existsSync(f) ? readFileSync(f, 'utf8') : null);
  const { functions, problems } = check(files, read);
  for (const p of [...new Set(problems)]) console.log(p);
  console.log(`${files.length} files, ${functions} functions, ${new Set(problems).size} problems`);
  process.exitCode = problems.length ? 1 : 0;
}

