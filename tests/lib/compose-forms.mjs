// The forms of `docker compose` the lab uses: every call of the lab's scripts
// (the compose helper or docker compose itself, in the code: not in comments
// or messages) and every command its documents show a user (README.md,
// docs/*.md, lessons/*.md: fenced code blocks and inline code; compose.yaml:
// its comments). Prints "FORM<TAB>FILE:LINE" per call, in file order.
//   node tests/lib/compose-forms.mjs FILE...          (paths from the repository's root)
//   node tests/lib/compose-forms.mjs --stdin NAME     (one file's text on stdin, read as NAME)
// A form is what a Compose version may answer differently: the global flags
// (--profile, -f...), the subcommand and its flags, each set sorted, and the
// value of --format (the template is the output's shape); service names and
// other values (--scale N, --profile P) are left out. A combined short flag
// is its letters (-sf: -f -s). A word built at run time ("$@", ${target}) is
// left out: the helper that passes it on is the call. An inline code span
// that is only "docker compose SUBCOMMAND" names a subcommand in prose (README:
// "what would make `docker compose up` fail"), not a command: skipped.
import { readFileSync } from 'node:fs';
import { codeOf } from './shell-functions.mjs';

// Flags that take a value (the next word unless written --flag=value).
const GLOBAL_VALUED = new Set(['--profile', '-f', '--file', '-p', '--project-name', '--project-directory',
  '--env-file', '--ansi', '--progress', '--parallel']);
const VALUED = {
  ps: ['--format', '--status', '--filter'],
  config: ['--format', '-o', '--output', '--hash'],
  exec: ['-e', '--env', '-u', '--user', '-w', '--workdir', '--index'],
  run: ['-e', '--env', '--entrypoint', '--name', '-u', '--user', '-w', '--workdir', '-v', '--volume',
    '-p', '--publish', '-l', '--label', '--pull', '--cap-add', '--cap-drop'],
  up: ['--scale', '--wait-timeout', '-t', '--timeout', '--exit-code-from', '--attach', '--no-attach', '--pull'],
  kill: ['-s', '--signal'],
  down: ['-t', '--timeout', '--rmi'],
  stop: ['-t', '--timeout'],
  restart: ['-t', '--timeout'],
  logs: ['--since', '--until', '-n', '--tail', '--index'],
  cp: ['--index'],
  build: ['--build-arg', '--ssh', '-m', '--memory', '--builder'],
  pull: ['--policy'],
};
// Subcommands whose first plain word (the service) starts the command run in it.
const COMMAND_AFTER_SERVICE = new Set(['exec', 'run']);

// readWords TEXT I → the shell words from I to the end of the command (an
// unquoted newline, ; | & ) ` or a comment), redirections left out: each
// {raw, value, dynamic}: value unquoted, dynamic when it holds an expansion.
export function readWords(text, i) {
  const words = [];
  for (;;) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || (text[i] === '\\' && text[i + 1] === '\n'))) {
      i += text[i] === '\\' ? 2 : 1;
    }
    const c = text[i];
    if (i >= text.length || c === '\n' || c === ';' || c === '|' || c === '&' || c === ')' || c === '#' || c === '`') break;
    const redirect = /^(?:\d*>>?|\d*<|&>)(?:&\d+|&-)?/.exec(text.slice(i));
    if (redirect && /&[\d-]$/.test(redirect[0])) { i += redirect[0].length; continue; } // 2>&1: no target word
    const word = readWord(text, redirect ? i + redirect[0].length : i);
    if (!redirect) words.push(word);
    if (word.end === i) break;
    i = word.end;
  }
  return words;
}

// readWord TEXT I → {raw, value, dynamic, end}: one word from I.
function readWord(text, i) {
  const start = i;
  let value = '';
  let dynamic = false;
  // skipDouble J: the index after the double-quoted string whose body starts at J.
  const skipDouble = (j) => {
    for (; j < text.length; j++) {
      if (text[j] === '\\') { j++; continue; }
      if (text[j] === '"') return j + 1;
      if (text[j] === '$' && text[j + 1] === '(') j = skip(j + 1, '(', ')') - 1;
    }
    return text.length;
  };
  // skip J OPEN CLOSE: the index after the balanced OPEN..CLOSE at J (quotes inside honoured).
  const skip = (j, open, close) => {
    let depth = 0;
    for (; j < text.length; j++) {
      const ch = text[j];
      if (ch === '\\') { j++; continue; }
      if (ch === "'" && open === '(') { j = text.indexOf("'", j + 1); if (j < 0) return text.length; continue; }
      if (ch === '"') { j = skipDouble(j + 1) - 1; continue; }
      if (ch === open) depth++;
      else if (ch === close && --depth === 0) return j + 1;
    }
    return text.length;
  };
  while (i < text.length && !/[\s;|&)<>`]/.test(text[i])) {
    const c = text[i];
    if (c === '\\') { value += text[i + 1] ?? ''; i += 2; }
    else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      const close = end < 0 ? text.length : end;
      value += text.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      const end = skipDouble(i + 1);
      const inner = text.slice(i + 1, end - 1);
      if (inner.includes('$')) dynamic = true;
      value += inner.replace(/\\(["\\$`])/g, '$1');
      i = end;
    } else if (c === '$') {
      dynamic = true;
      if (text[i + 1] === '(') i = skip(i + 1, '(', ')');
      else if (text[i + 1] === '{') i = skip(i + 1, '{', '}');
      else if (/[@*#?$!0-9-]/.test(text[i + 1] ?? '')) i += 2;
      else { i++; while (i < text.length && /\w/.test(text[i])) i++; }
    } else { value += c; i++; }
  }
  return { raw: text.slice(start, i), value, dynamic, end: i };
}

// formOf WORDS → "GLOBALS SUBCOMMAND FLAGS" (see the head of this file), or
// null when no subcommand is written (the helper's own pass-through).
export function formOf(words) {
  const globals = new Set();
  const flags = new Set();
  let sub = null;
  let plain = 0;
  for (let k = 0; k < words.length; k++) {
    const w = words[k];
    if (sub && COMMAND_AFTER_SERVICE.has(sub) && plain > 0) break;
    if (w.dynamic && !w.value.startsWith('-')) { if (sub) plain++; continue; }
    const v = w.value;
    if (!v.startsWith('-') || v === '-' || v === '--') {
      if (!sub && v !== '--') sub = v;
      else plain++;
      continue;
    }
    const valued = new Set(sub ? VALUED[sub] ?? [] : GLOBAL_VALUED);
    const target = sub ? flags : globals;
    if (v.startsWith('--')) {
      const [name, ...rest] = v.split('=');
      let value = rest.length ? rest.join('=') : null;
      if (valued.has(name) && value === null) {
        k++;
        value = words[k] ? (words[k].dynamic ? '?' : words[k].value) : '';
      }
      target.add(name === '--format' && value !== null ? `--format=${value}` : name);
      continue;
    }
    // -sf: -s -f; a valued short flag's value is the rest of the word or the next word.
    for (let j = 1; j < v.length; j++) {
      const name = `-${v[j]}`;
      target.add(name);
      if (valued.has(name)) { if (j === v.length - 1) k++; break; }
    }
  }
  if (!sub) return null;
  return [...[...globals].sort(), sub, ...[...flags].sort()].join(' ');
}

const lineOf = (text, i) => text.slice(0, i).split('\n').length;

// shellCalls TEXT → [{line, form}]: the compose calls in the code of a script
// (where a command stands: codeOf blanks comments and quoted strings).
export function shellCalls(text) {
  const code = codeOf(text);
  const calls = [];
  const at = /(^|[;&|(!{]|\b(?:if|then|do|else|elif|while|until|time|exec)\b)([ \t]*)(docker[ \t]+compose|compose)(?=[ \t\\]|$)/gm;
  for (const m of code.matchAll(at)) {
    const i = m.index + m[1].length + m[2].length;
    const form = formOf(readWords(text, i + m[3].length));
    if (form) calls.push({ line: lineOf(text, i), form });
  }
  return calls;
}

// textCalls TEXT LINE → [{line, form, bare}]: "docker compose ..." in
// documentation text whose first line is LINE; one quoted ("docker compose
// ...") ends at its quote; bare: the subcommand alone.
function textCalls(text, lineBase) {
  const calls = [];
  for (const m of text.matchAll(/docker[ \t]+compose(?=[ \t\\\n]|$)/g)) {
    const before = text[m.index - 1];
    let rest = text.slice(m.index + m[0].length);
    if (before === '"' || before === "'") rest = rest.slice(0, Math.max(0, rest.indexOf(before)));
    const words = readWords(rest, 0);
    const form = formOf(words);
    if (form) calls.push({ line: lineBase + lineOf(text, m.index) - 1, form, bare: words.length === 1 });
  }
  return calls;
}

// markdownCalls TEXT → the commands of fenced code blocks and inline code spans.
export function markdownCalls(text) {
  const calls = [];
  const lines = text.split('\n');
  let fenced = false;
  let prose = [];
  const flush = (endLine) => {
    const block = prose.join('\n');
    const first = endLine - prose.length + 1;
    for (const m of block.matchAll(/(`+)([^`]+?)\1/g)) {
      // A span may wrap onto the next line: one command still.
      const span = m[2].replace(/\n/g, ' ');
      for (const c of textCalls(span, first + lineOf(block, m.index) - 1)) if (!c.bare) calls.push(c);
    }
    prose = [];
  };
  lines.forEach((line, k) => {
    if (/^\s*(```|~~~)/.test(line)) { flush(k); fenced = !fenced; return; }
    if (fenced) calls.push(...textCalls(line, k + 1));
    else prose.push(line);
  });
  flush(lines.length);
  return calls;
}

// yamlCalls TEXT → the commands in compose.yaml's comments.
export function yamlCalls(text) {
  return text.split('\n').flatMap((line, k) => {
    const hash = line.indexOf('#');
    return hash < 0 ? [] : textCalls(line.slice(hash + 1), k + 1);
  });
}

// callsOf NAME TEXT → [{line, form}] by the file's kind.
export function callsOf(name, text) {
  if (name.endsWith('.md')) return markdownCalls(text);
  if (/\.ya?ml$/.test(name)) return yamlCalls(text);
  return shellCalls(text);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const files = args[0] === '--stdin'
    ? [[args[1], readFileSync(0, 'utf8')]]
    : args.map((f) => [f, readFileSync(f, 'utf8')]);
  for (const [name, text] of files) {
    for (const { line, form } of callsOf(name, text)) console.log(`${form}\t${name}:${line}`);
  }
}
