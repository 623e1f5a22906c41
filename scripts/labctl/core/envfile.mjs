// The lab's NAME=value files (run.env, step.env, outcome.env, limits.env,
// versions.env): one NAME=value per line, the value to the end of the line
// (no quoting), "#" starts a comment line. The runner (bash) reads them with
// read_env, the engine with parseEnv.

const NAME = /^[a-z][a-z0-9_.]*$|^(load|compose)\.[A-Z][A-Z0-9_]*$/;

// envText HEADER ENTRIES: the file's text; throws on a value the runner could
// not read back as written.
export function envText(header, entries) {
  const lines = entries.map(([name, value]) => {
    const text = value === null || value === undefined ? '' : String(value);
    if (!NAME.test(name) || /[\n\r]/.test(text)) throw new Error(`cannot write ${name}=${JSON.stringify(text)} to an env file`);
    // A load value may be words (a tool's extra flags): the runner writes it
    // quoted into the tool's env file (scripts/lib/step-load.sh).
    if (/^compose\./.test(name) && /[\s'"\\$`]/.test(text)) throw new Error(`${name} must be one word (got ${JSON.stringify(text)})`);
    if (/^load\./.test(name) && /[\t'"\\$`]/.test(text)) throw new Error(`${name} must be words without tabs, quotes, \\, $ or \` (got ${JSON.stringify(text)})`);
    return `${name}=${text}`;
  });
  return `${header.map((h) => `# ${h}`).join('\n')}\n${lines.join('\n')}\n`;
}

// parseEnv TEXT: {name: value}, the runner's reading of the same format.
export function parseEnv(text) {
  const values = {};
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    values[line.slice(0, at)] = line.slice(at + 1);
  }
  return values;
}
