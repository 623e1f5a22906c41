// Functions longer than a reader can hold: bash functions ("name() {" to the
// "}" at the same indent) and JavaScript top-level functions ("function name("
// or "const name = (...) => {" to the closing line at column 0). Prints
// "file:line name N lines" for each over MAX; exit 1 if any.
//   node tests/lib/function-length.mjs MAX FILE...
import { readFileSync } from 'node:fs';

const [max, ...files] = process.argv.slice(2);
const START = [
  /^(\s*)([A-Za-z_][A-Za-z0-9_]*)\(\) \{\s*$/, // bash
  /^()(?:export )?(?:async )?function\*? ([A-Za-z_$][\w$]*)\(.*\{\s*$/, // js
  /^()(?:export )?const ([A-Za-z_$][\w$]*) = (?:async )?\(.*\) => \{\s*$/, // js arrow
];
const long = [];
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    const m = START.map((re) => re.exec(line)).find(Boolean);
    if (!m) return;
    const end = lines.findIndex((l, j) => j > i && new RegExp(`^${m[1]}\\}`).test(l));
    const length = (end < 0 ? lines.length : end) - i + 1;
    if (length > Number(max)) long.push(`${file}:${i + 1} ${m[2]} ${length} lines`);
  });
}
for (const l of long) console.log(l);
console.log(`${files.length} files, ${long.length} functions over ${max} lines`);
process.exitCode = long.length ? 1 : 0;
