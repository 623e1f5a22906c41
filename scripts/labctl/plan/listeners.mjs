// The listening sockets a HAProxy config asks the kernel for, and how to
// compare them with what runs. A reload passes the old worker's listening
// sockets to the new one, which keeps their backlog (HAProxy calls listen()
// only on sockets it creates): a step that changes a socket's backlog only
// takes effect after a restart, and only `ss -ltn` shows which one runs.

// Sections that own `bind` lines.
const LISTENING = /^(frontend|listen)\s+(\S+)/;

function words(line) {
  return line.trim().split(/\s+/);
}

// The value after KEYWORD in a list of words, as a number (or null).
function option(list, keyword) {
  const at = list.indexOf(keyword);
  return at >= 0 && /^\d+$/.test(list[at + 1] ?? '') ? Number(list[at + 1]) : null;
}

// An address with HAProxy's environment variables as the config's defaults
// (':"${LAB_STATS_PORT-8404}"' → ":8404": process 1's, haproxy/processes.sh).
export const withDefaults = (address) => address.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*-([^}]*)\}/g, '$1').replace(/"/g, '');

// TCP port of a bind address (":80", "0.0.0.0:80", "ipv4@127.0.0.1:9000",
// "[::]:80"); null for unix sockets and other families.
function portOf(raw) {
  const address = withDefaults(raw);
  if (/^(unix|abns|abnsz|fd|sockpair|quic\d?|udp\d?)@/.test(address) || address.startsWith('/')) return null;
  const m = /:(\d+)$/.exec(address);
  return m ? Number(m[1]) : null;
}

// expectedListeners CONFIG_TEXT → [{proxy, port, backlog}] for every TCP bind
// of a frontend or listen section. The backlog HAProxy 3.2 passes to listen()
// (read back with `ss -ltn` in tests/unit: listeners): the bind's
// "backlog", else the proxy's "backlog", else the bind's "maxconn", else the
// proxy's "maxconn", else the defaults' "maxconn", else the global maxconn.
// The kernel caps it at net.core.somaxconn (see effectiveBacklog).
export function expectedListeners(text) {
  let section = null;
  let proxy = null;
  const global = {};
  const defaults = {};
  const proxies = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '');
    if (line.trim() === '') continue;
    if (/^\S/.test(line)) {
      section = words(line)[0];
      const m = LISTENING.exec(line);
      proxy = m ? { name: m[2], maxconn: null, backlog: null, binds: [] } : null;
      if (proxy) proxies.push(proxy);
      continue;
    }
    const w = words(line);
    if (section === 'global' && w[0] === 'maxconn') global.maxconn = option(w, 'maxconn');
    if (section === 'defaults' && w[0] === 'maxconn') defaults.maxconn = option(w, 'maxconn');
    if (!proxy) continue;
    if (w[0] === 'maxconn') proxy.maxconn = option(w, 'maxconn');
    if (w[0] === 'backlog') proxy.backlog = option(w, 'backlog');
    if (w[0] === 'bind') {
      // "bind :80,:81 opts": one socket per address.
      for (const address of w[1].split(',')) {
        const port = portOf(address);
        if (port !== null) proxy.binds.push({ port, backlog: option(w, 'backlog'), maxconn: option(w, 'maxconn') });
      }
    }
  }
  return proxies.flatMap((p) => p.binds.map((b) => ({
    proxy: p.name,
    port: b.port,
    backlog: b.backlog ?? p.backlog ?? b.maxconn ?? p.maxconn ?? defaults.maxconn ?? global.maxconn ?? null,
  })));
}

// listenersText LISTENERS: a config's .listeners file, which the report
// compares with the ss view the runner saved ("proxy port backlog" per line;
// "-" when the config sets no maxconn at all); parseListeners reads it back.
export function listenersText(listeners) {
  return `${listeners.map((l) => `${l.proxy} ${l.port} ${l.backlog ?? '-'}`).join('\n')}\n`;
}

export function parseListeners(text) {
  return text.split('\n').filter(Boolean).map((line) => {
    const [proxy, port, backlog] = line.split(' ');
    return { proxy, port: Number(port), backlog: backlog === '-' ? null : Number(backlog) };
  });
}

// switchPlan BASELINE CONFIGS [COMPOSE_ENVS] → {baselineListeners, listeners,
// switches, baseline}: each config's listening sockets, and how the runner
// switches to it: a reload when it asks for the sockets already running,
// else a restart. Before the first step those are the baseline's. Where a
// step's services' settings (COMPOSE_ENVS, one object per step) differ from
// the step before's, compose may have recreated HAProxy, which then listens
// as the baseline asks, or not, which leaves the previous step's: a reload
// only when both are this step's. After the run, back to the baseline by a
// restart if any config's sockets differ from its (a Ctrl-C may come at any
// step).
export function switchPlan(baseline, configs, composeEnvs = []) {
  const first = expectedListeners(baseline);
  const listeners = configs.map((c) => expectedListeners(c));
  const settings = (i) => JSON.stringify(Object.entries(composeEnvs[i] ?? {}).sort());
  const switches = listeners.map((l, i) => {
    if (i === 0) return sameListeners(first, l) ? 'reload' : 'restart';
    const recreated = settings(i) !== settings(i - 1);
    return sameListeners(listeners[i - 1], l) && (!recreated || sameListeners(first, l)) ? 'reload' : 'restart';
  });
  return {
    baselineListeners: first,
    listeners,
    switches,
    baseline: listeners.some((l) => !sameListeners(l, first)) ? 'restart' : 'reload',
  };
}

// sameListeners A B: configs A and B (expectedListeners of each) listen on
// the same ports with the same backlogs, so a reload from one to the other
// keeps the sockets as the second asks (a reload keeps the sockets).
export function sameListeners(a, b) {
  const key = (ls) => ls.map((l) => `${l.port} ${l.backlog ?? '-'}`).sort().join(',');
  return key(a) === key(b);
}
