// What a step's HAProxy settings ({"<section>": {"<keyword>": value}}, laid
// over the baseline by plan/render.mjs) may say. The loader checks them to
// name the scenario or --settings file; renderConfig checks them again, so
// no config the planner writes holds a setting refused here.
import { portProblem } from '../core/ports.mjs';
import { withDefaults } from './listeners.mjs';

// A line break in a section, keyword or value would start a config line of
// its own (any setting, the ones refused below too); other control
// characters have no business in a config line either.
export const CONTROL = /[\u0000-\u001f\u007f]/;

// The global lines the runner depends on, with what it loses: a step may not
// set, replace or remove them (the master CLI itself is haproxy's -S, in
// compose.yaml, out of a config's reach).
export const RUNNER_LINES = {
  'stats socket': 'the runtime API the runner reads (show info, show stat) and the exporter\'s socket',
  'master-worker': 'the master process whose CLI the runner reads (show proc)',
  'mworker-max-reloads': 'the master process whose CLI the runner reads (show proc, one reload per step)',
  description: 'the step\'s name, which the runner reads back from show info (the planner sets it)',
};

// Where a directive's line names an address (its word's index, the
// directive's own being 0), and the options a port follows on server lines.
const ADDRESS_AT = { bind: 1, server: 2, 'server-template': 3, nameserver: 2 };
const PORT_OPTIONS = ['port', 'agent-port'];
const SERVER_LINES = ['server', 'server-template', 'default-server'];

const words = (text) => text.trim().split(/\s+/).filter(Boolean);
const startsWith = (list, prefix) => prefix.every((w, i) => list[i] === w);

// The port part of one address: null when it has none (a unix socket, fd@,
// a name alone); a range (bind ":7080-7089") or an offset (server "+1") is
// checked number by number.
function addressPortProblem(raw) {
  const address = withDefaults(raw);
  if (/^(unix|abns|abnsz|fd|sockpair)@/.test(address) || address.startsWith('/')) return null;
  const at = address.lastIndexOf(':');
  if (at < 0) return null;
  const spec = address.slice(at + 1).replace(/^[+-]/, '');
  return spec.split('-').map(portProblem).find(Boolean) ?? null;
}

// portsProblem LINE [APPENDED]: what is wrong with the ports LINE's words
// name (its addresses, a server's "port N"), or null. APPENDED: the words
// after the directive are options added to its line (no address).
function portsProblem(line, appended = false) {
  const at = appended ? undefined : ADDRESS_AT[line[0]];
  const addresses = at === undefined || line[at] === undefined ? [] : line[at].split(',');
  const options = SERVER_LINES.includes(line[0]) ? line.flatMap((w, i) => (PORT_OPTIONS.includes(w) ? [line[i + 1] ?? ''] : [])) : [];
  for (const text of [...addresses.map(addressPortProblem), ...options.map(portProblem)]) if (text) return text;
  return null;
}

// settingProblem SECTION KEYWORD VALUE: null when renderConfig may apply
// the setting, else one line: what is wrong and what to write instead.
export function settingProblem(section, keyword, value) {
  const name = JSON.stringify(keyword);
  const append = keyword.endsWith('+');
  const texts = [section, keyword, ...[].concat(value ?? [])];
  const control = texts.map((t) => CONTROL.exec(String(t))).find(Boolean);
  if (control) {
    return `${name}: ${JSON.stringify(control.input)} has a control character (${JSON.stringify(control[0])}): `
      + 'each setting is one line of haproxy.cfg; write it on one line, without control characters';
  }
  const ok = append ? typeof value === 'string' : value === null || typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'));
  if (!ok) return `setting ${name} must be ${append ? 'a string' : 'a string, a list of strings or null'}, found ${JSON.stringify(value)}`;
  const base = words(append ? keyword.slice(0, -1) : keyword);
  if (base.length === 0) return `${name}: a setting needs a keyword ("maxconn", "timeout client")`;
  if (words(section).join(' ') === 'global') {
    const line = Object.keys(RUNNER_LINES).find((l) => startsWith(words(l), base) || startsWith(base, words(l)));
    if (line) return `${name} would set, replace or remove "${line}", ${RUNNER_LINES[line]}: take ${name} out of the settings`;
  }
  // The lines the setting gives, as words; "keyword+": what it adds to the
  // baseline's line, after the directive.
  const ports = append ? portsProblem([base[0], ...words(value)], true)
    : [].concat(value ?? []).map((v) => portsProblem([...base, ...words(v)])).find(Boolean);
  return ports ? `${name}: ${ports}` : null;
}
