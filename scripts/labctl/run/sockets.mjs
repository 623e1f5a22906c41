// The listening sockets that run, as `ss -ltn` shows them, against the ones
// a config asks for (plan/listeners.mjs writes those): the report's check of
// the view the runner saved after each switch of HAProxy's config
// (evidence/run.mjs listenerProblems).

// The backlog the kernel keeps: listen() silently caps it at somaxconn.
export function effectiveBacklog(asked, somaxconn) {
  return asked === null ? null : Math.min(asked, somaxconn);
}

// parseSs TEXT: `ss -ltn` output → {port: {queue, backlog}} for IPv4/IPv6
// listeners (Recv-Q: connections waiting in the accept queue; Send-Q: the
// socket's backlog).
export function parseSs(text) {
  const out = {};
  for (const line of (text ?? '').split('\n')) {
    const f = line.trim().split(/\s+/);
    // With or without the State column (ss -H omits nothing but the header).
    const at = f[0] === 'LISTEN' ? 1 : 0;
    if (!/^\d+$/.test(f[at] ?? '') || !/^\d+$/.test(f[at + 1] ?? '')) continue;
    const m = /:(\d+)$/.exec(f[at + 2] ?? '');
    if (m) out[Number(m[1])] = { queue: Number(f[at]), backlog: Number(f[at + 1]) };
  }
  return out;
}

// compareListeners EXPECTED SS_PARSED SOMAXCONN → one line per socket that
// differs from what the config asks ([] when everything runs as asked).
export function compareListeners(expected, running, somaxconn) {
  const problems = [];
  for (const l of expected) {
    const want = effectiveBacklog(l.backlog, somaxconn);
    const got = running[l.port];
    if (!got) problems.push(`${l.proxy} :${l.port} is not listening`);
    else if (want !== null && got.backlog !== want) {
      problems.push(`${l.proxy} :${l.port} has backlog ${got.backlog}, the config asks ${want}`);
    }
  }
  return problems;
}
