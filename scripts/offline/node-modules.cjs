// Usage (in the node stand-in's Debian build stage): node node-modules.cjs PATH...
//
// Prints, one a line, every package folder (its real path) that the JavaScript
// packages in PATH... (Debian's npm, corepack) need at run time, those included.
// A PATH that is a file (libnode.so) is searched for the package files node
// loads its own externalized builtins from (undici, acorn, minimatch...: Debian
// builds node with them outside the binary, under /usr/share/nodejs). Debian
// installs npm's dependencies as separate packages under /usr/share/nodejs,
// beside hundreds npm never loads. A package is needed when a package.json
// lists it (dependencies, optional and peer dependencies) or when a file of a
// needed package requires or imports it by name; each name is resolved as
// node resolves it (node_modules folders up from the file, then node's global
// folders). Names that resolve nowhere (optional, never installed) are skipped.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const builtins = new Set(Module.builtinModules);
const globalDirs = Module.globalPaths.filter((d) => fs.existsSync(d));
const SOURCE = /\.(c|m)?js$/;
// Files no program loads at run time: tests, examples, benchmarks, build scripts.
const NOT_RUNTIME = /(^|\/)(tests?|__tests__|spec|examples?|bench(mark)?s?|scripts|tools|operations|docs?)\/|(^|\/)(tests?|.*\.test|.*\.spec|build-.*|gulpfile|Gruntfile|karma\.conf|rollup\.config|webpack\.config)\.(c|m)?js$/;
// require("x"), import("x"), import ... from "x", export ... from "x", import "x"
const SPECIFIERS = [
  /\brequire\s*\(\s*['"]([^'"\s]+)['"]\s*\)/g,
  /\bimport\s*\(\s*['"]([^'"\s]+)['"]\s*\)/g,
  /\bfrom\s*['"]([^'"\s]+)['"]/g,
  /\bimport\s*['"]([^'"\s]+)['"]/g,
];

function packageName(specifier) {
  if (specifier.startsWith('node:') || specifier.startsWith('.') || specifier.startsWith('/')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) || builtins.has(specifier) ? null : name;
}

// Symlinks node goes through to reach a package (Debian links, e.g.,
// /usr/share/nodejs/@npmcli/node_modules to ../npm/node_modules): the image
// needs them as well as the folders they lead to.
const links = new Set();
function found(candidate) {
  let prefix = '';
  for (const part of candidate.split('/').slice(1)) {
    prefix += `/${part}`;
    if (fs.lstatSync(prefix).isSymbolicLink()) links.add(prefix);
  }
  return fs.realpathSync(candidate);
}

function resolvePackage(name, fromDir) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules', name);
      if (fs.existsSync(candidate)) return found(candidate);
    }
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of globalDirs) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return found(candidate);
  }
  return null;
}

// The packages a binary names by path under a global folder.
function packagesNamedIn(file) {
  const text = fs.readFileSync(file, 'latin1');
  const found = new Set();
  for (const dir of globalDirs) {
    const pattern = new RegExp(`${dir.replace(/[/.]/g, '\\$&')}/((?:@[\\w.-]+/)?[\\w.-]+)`, 'g');
    for (const match of text.matchAll(pattern)) found.add(path.join(dir, match[1]));
  }
  return [...found].filter((p) => fs.existsSync(p)).map((p) => fs.realpathSync(p));
}

// The package folder a file belongs to: the nearest folder up with a package.json.
function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    let stat;
    try {
      stat = fs.statSync(full);
    } catch {
      continue; // a dangling link
    }
    if (stat.isDirectory()) yield* walk(full);
    else if (stat.isFile()) yield full;
  }
}

const needed = new Set();
const queue = [];
function add(dir) {
  if (!dir || needed.has(dir)) return;
  needed.add(dir);
  queue.push(dir);
}

for (const arg of process.argv.slice(2)) {
  if (!fs.existsSync(arg)) {
    console.error(`node-modules: ${arg} not found`);
    process.exit(1);
  }
  if (fs.statSync(arg).isDirectory()) add(fs.realpathSync(arg));
  else for (const dir of packagesNamedIn(arg)) add(dir);
}

while (queue.length > 0) {
  const dir = queue.shift();
  for (const file of walk(dir)) {
    const base = path.basename(file);
    if (base === 'package.json') {
      let pkg;
      try {
        pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch {
        continue;
      }
      for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
        for (const name of Object.keys(pkg[field] ?? {})) add(resolvePackage(name, path.dirname(file)));
      }
    } else if (SOURCE.test(base) && !NOT_RUNTIME.test(path.relative(dir, file)) && fs.statSync(file).size < 4e6) {
      const text = fs.readFileSync(file, 'utf8');
      for (const pattern of SPECIFIERS) {
        for (const match of text.matchAll(pattern)) {
          const name = packageName(match[1]);
          if (name) add(resolvePackage(name, path.dirname(file)));
        }
      }
    }
  }
}

// Folders inside another needed folder are copied with it; then the links.
const sorted = [...needed].sort();
const top = sorted.filter((dir, i) => !sorted.slice(0, i).some((parent) => dir.startsWith(`${parent}/`)));
console.log([...top, ...[...links].sort()].join('\n'));
