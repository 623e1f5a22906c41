// HAProxy's connections, once (EVERY 0) or each second until stdin ends
// (EVERY 1), for every process of one HAProxy container: run by the runner
// (scripts/lib/step-load.sh, scripts/lib/haproxy.sh haproxy_sockets) in the
// node image, in the HAProxy container's network namespace. One process
// asks every runtime API at once and reads their answers: its cost barely
// grows with HAProxy's processes (a shell reading each answer with a tool
// of its own took a fork and an exec per process per second).
//   node haproxy-sockets.mjs HOST EVERY BACKEND_PORTS FRONTEND_PORTS PROXIES MOST CLIENTS NAME=ADDRESS:PORT...
// (what follows EVERY: the run folder's samplers/CONTAINER.args, scripts/labctl/plan/samplers.mjs)
// BACKEND_PORTS, FRONTEND_PORTS: hex ports as /proc/net/tcp writes them,
// "|" between; PROXIES, CLIENTS: the backends that are proxies and the
// frontends of the topology, "|" between; MOST: the most sockets in the
// container's table for which the table is read whole.
// Prints "NAME CLIENT SERVER QUEUE CUMREQ HITS AT_MS REQS" per process:
//   CLIENT  the scur of the CLIENTS frontends (not the stats and metrics
//           frontends Prometheus scrapes, nor the runtime API's sessions)
//   SERVER  while the container's socket table (/proc/net/sockstat: in use
//           and TIME_WAIT) has at most MOST sockets, its established
//           connections to BACKEND_PORTS, under the first process (0 under
//           the others); past that, each process's own sessions on the
//           PROXIES backends (their scur), for a walk of a large table takes
//           seconds of CPU
//   QUEUE   the connections waiting in the frontends' accept queues (LISTEN
//           sockets' rx_queue), under the first process (the namespace its
//           processes share), 0 under the others
//   CUMREQ  requests received so far (CumReq: runtime API sessions too, this
//           probe's among them); HITS the 2xx answers of its be_* backends
//   REQS    the requests the CLIENTS frontends received so far (their
//           req_tot; "-" when one has none, a TCP frontend)
//   "-" for what did not answer.
// With HOST 1, first "/proc/stat NS AT_MS" (the machine's busy CPU time in
// ns, USER_HZ 100) and "/proc/stat/cpuN NS AT_MS" per core. IPv4's table
// only: the lab binds and its backends are IPv4, and /proc/net/tcp6 walks the
// host's whole table.
import fs from 'node:fs';
import net from 'node:net';

const [host, every, backendPorts, frontendPorts, proxies, mostRaw, clients, ...apis] = process.argv.slice(2);
const most = Number(mostRaw);
const anyOf = (list) => new RegExp(`^(${list})$`);
const isBackendPort = anyOf(backendPorts), isFrontendPort = anyOf(frontendPorts);
const isProxy = anyOf(proxies), isClient = anyOf(clients);
const lines = [];

function procStat() {
  const at = Date.now();
  for (const line of fs.readFileSync('/proc/stat', 'latin1').split('\n')) {
    if (!line.startsWith('cpu')) break;
    const [cpu, user, nice, system, , , irq, softirq, steal] = line.split(/\s+/);
    const busy = [user, nice, system, irq, softirq, steal].reduce((t, v) => t + BigInt(v), 0n) * 10000000n;
    lines.push(`/proc/stat${cpu === 'cpu' ? '' : `/${cpu}`} ${busy} ${at}`);
  }
}

// Whether the table is small enough to read whole: in use and TIME_WAIT ≤ MOST.
function tableIsSmall() {
  const m = /^TCP: inuse (\d+) orphan \d+ tw (\d+)/m.exec(fs.readFileSync('/proc/net/sockstat', 'latin1'));
  return Boolean(m) && Number(m[1]) + Number(m[2]) <= most;
}

// One runtime API's answer to "show info; show stat -1 3 -1" (null on no answer).
function ask(address) {
  const at = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const chunks = [];
    const socket = net.connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('connect', () => socket.end('show info; show stat -1 3 -1\n'));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(chunks.length ? Buffer.concat(chunks).toString('latin1') : null));
  });
}

// An answer → [CLIENT, CUMREQ, SERVED, HITS, REQS], "-" for what it did not have.
function readAnswer(text) {
  let conns = '-', cumreq = '-', served = '-', hits = '-', reqs = '-', column = 0, reqColumn = 0, tcp = false;
  const add = (a, b) => (a === '-' ? 0 : a) + b;
  for (const line of (text ?? '').split('\n')) {
    if (line.startsWith('CumReq: ')) { cumreq = Number(line.slice(8)); continue; }
    const f = line.split(',');
    if (f[0] === '# pxname') { column = f.indexOf('hrsp_2xx'); reqColumn = f.indexOf('req_tot'); continue; }
    if (f[1] === 'FRONTEND' && isClient.test(f[0])) {
      conns = add(conns, Number(f[4]));
      if (reqColumn > 0 && /^\d+$/.test(f[reqColumn])) reqs = add(reqs, Number(f[reqColumn]));
      else tcp = true;
    }
    if (f[1] === 'BACKEND' && isProxy.test(f[0])) served = add(served, Number(f[4]));
    if (f[1] === 'BACKEND' && f[0].startsWith('be_') && column > 0) hits = add(hits, Number(f[column]));
  }
  return [conns, cumreq, served, hits, tcp ? '-' : reqs];
}

// The first process's walk of /proc/net/tcp, a chunk at a time: its LISTEN
// lines' queues and, when the table is small, its established connections to
// the backends. → {established, queue, fell} (fell: more than MOST lines).
function walkTable(small) {
  const fd = fs.openSync('/proc/net/tcp', 'r');
  const buf = Buffer.alloc(65536);
  let rest = '', first = true, lines = 0, established = 0, queue = 0, fell = false, done = false;
  try {
    while (!done) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const parts = (rest + buf.latin1Slice(0, n)).split('\n');
      rest = parts.pop();
      for (const line of parts) {
        if (first) { first = false; continue; }
        const f = line.trim().split(/\s+/);
        if (!small && f[3] !== '0A') { done = true; break; }
        if (small && ++lines > most) { fell = true; done = true; break; }
        if (f[3] === '01' && isBackendPort.test(f[2].split(':')[1])) established++;
        if (f[3] === '0A' && isFrontendPort.test(f[1].split(':')[1])) queue += parseInt(f[4].split(':')[1], 16);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { established, queue, fell };
}

async function pass() {
  if (host === '1') procStat();
  let small = tableIsSmall();
  const answers = await Promise.all(apis.map((api) => ask(api.slice(api.indexOf('=') + 1))));
  apis.forEach((api, i) => {
    const [conns, cumreq, served, hits, reqs] = readAnswer(answers[i]);
    const name = api.slice(0, api.indexOf('=')), at = Date.now();
    if (i > 0) {
      lines.push(`${name} ${conns} ${small ? 0 : served} 0 ${cumreq} ${hits} ${at} ${reqs}`);
      return;
    }
    const walk = walkTable(small);
    if (walk.fell) small = false;
    lines.push(`${name} ${conns} ${small ? walk.established : served} ${walk.queue} ${cumreq} ${hits} ${at} ${reqs}`);
  });
  process.stdout.write(`${lines.join('\n')}\n`);
  lines.length = 0;
}

// The next pass a second after this one began; stdin ending ends the loop.
let ended = false, wake = () => {};
const end = () => { ended = true; wake(); };
process.stdin.on('end', end).on('error', end).resume();
for (;;) {
  const started = Date.now();
  await pass();
  if (every !== '1' || ended) break;
  await new Promise((resolve) => {
    const t = setTimeout(resolve, Math.max(1, 1000 - (Date.now() - started)));
    wake = () => { clearTimeout(t); resolve(); };
  });
  if (ended) break;
}
process.exit(0);
