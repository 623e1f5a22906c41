// A kept run's raw evidence as one archive: a POSIX tar (ustar) compressed
// with brotli (node's zlib: the lab needs no xz on the host or in the node
// image; at quality 11 it is smaller than xz -9 on the lab's evidence).
// Deterministic: files in name order, mode 0644, owner 0, one mtime for all,
// so the same evidence always gives the same bytes.
// Read it without the lab: brotli -dc evidence.tar.br | tar -x
import zlib from 'node:zlib';

const BLOCK = 512;

function field(buf, offset, length, value) {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new Error(`tar: "${value}" does not fit in ${length} bytes`);
  bytes.copy(buf, offset);
}

const octal = (n, length) => `${n.toString(8).padStart(length - 1, '0')}\0`;

// ustar splits a long name at a "/" into a prefix (155 bytes) and a name (100).
function splitName(name) {
  if (Buffer.byteLength(name) <= 100) return ['', name];
  for (let at = name.indexOf('/'); at !== -1; at = name.indexOf('/', at + 1)) {
    const prefix = name.slice(0, at);
    const rest = name.slice(at + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return [prefix, rest];
  }
  throw new Error(`tar: the path "${name}" is too long for ustar`);
}

function header(name, size, mtime) {
  const buf = Buffer.alloc(BLOCK);
  const [prefix, base] = splitName(name);
  field(buf, 0, 100, base);
  field(buf, 100, 8, octal(0o644, 8));
  field(buf, 108, 8, octal(0, 8));
  field(buf, 116, 8, octal(0, 8));
  field(buf, 124, 12, octal(size, 12));
  field(buf, 136, 12, octal(mtime, 12));
  buf.fill(' ', 148, 156);
  buf[156] = '0'.charCodeAt(0);
  field(buf, 257, 6, 'ustar\0');
  field(buf, 263, 2, '00');
  field(buf, 345, 155, prefix);
  let sum = 0;
  for (const byte of buf) sum += byte;
  field(buf, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return buf;
}

const padding = (size) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

// packTar FILES MTIME → the archive's bytes. FILES: [{name, data: Buffer}],
// names relative ("steps/01-x/haproxy-log.txt").
export function packTar(files, mtime) {
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const parts = [];
  for (const { name, data } of sorted) {
    if (!name || name.startsWith('/') || name.split('/').includes('..')) throw new Error(`tar: "${name}" is not a relative path inside the run`);
    parts.push(header(name, data.length, mtime), data, padding(data.length));
  }
  const tar = Buffer.concat([...parts, Buffer.alloc(BLOCK * 2)]);
  return zlib.brotliCompressSync(tar, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: tar.length,
    },
  });
}

const text = (buf, offset, length) => {
  const end = buf.indexOf(0, offset);
  return buf.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end);
};

// unpackTar BYTES → [{name, data}]: the regular files of an archive packTar
// (or any ustar writer) made; anything else is refused.
export function unpackTar(bytes) {
  const tar = zlib.brotliDecompressSync(bytes);
  const files = [];
  for (let at = 0; at + BLOCK <= tar.length;) {
    const block = tar.subarray(at, at + BLOCK);
    if (block.every((b) => b === 0)) break;
    const type = String.fromCharCode(block[156] || 48);
    const size = parseInt(text(block, 124, 12).trim() || '0', 8);
    const prefix = text(block, 345, 155);
    const name = prefix ? `${prefix}/${text(block, 0, 100)}` : text(block, 0, 100);
    if (type !== '0' && type !== '5') throw new Error(`tar: "${name}" is of type ${type}, not a file or a folder`);
    if (name.startsWith('/') || name.split('/').includes('..')) throw new Error(`tar: "${name}" points outside the run`);
    if (type === '0') files.push({ name, data: Buffer.from(tar.subarray(at + BLOCK, at + BLOCK + size)) });
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return files;
}
