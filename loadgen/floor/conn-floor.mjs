// The floor of a held connection in Node: the least a client and a server
// spend to open one TCP connection and hold it, with nothing else done (no
// HTTP, no timers, no bookkeeping beyond a count). The connections scenario
// runs it beside its levels (scripts/lib/floors.sh) to put the holder's and
// the backends' CPU per connection against what the job needs at least.
//   node conn-floor.mjs serve PORT
//     accepts and holds every connection; on SIGTERM prints
//     {"role":"server","accepted":N,"user_us":U,"system_us":S} and exits.
//   node conn-floor.mjs connect HOST PORT CONNECTIONS [IN_FLIGHT]
//     opens CONNECTIONS connections as fast as the server takes them (at most
//     IN_FLIGHT connects pending, 500 by default), holds them, prints
//     {"role":"client","connected":N,"failed":F,"seconds":T,"user_us":U,"system_us":S}
//     and exits (0 when all connected).
import net from 'node:net';

const die = (line) => {
  process.stderr.write(`conn-floor: ${line}\n`);
  process.exit(2);
};
const count = (raw, name, min, max) => {
  const n = /^[0-9]+$/.test(raw ?? '') ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) die(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw ?? '')})`);
  return n;
};
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return { user_us: user, system_us: system };
};

function serve(port) {
  const held = [];
  let accepted = 0;
  const start = cpu();
  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    accepted++;
    socket.on('error', () => {});
    held.push(socket);
  });
  server.on('error', (err) => die(`cannot listen on ${port}: ${err.message}`));
  server.listen({ port, backlog: 65535 }, () => process.stderr.write(`conn-floor: listening on ${port}\n`));
  process.on('SIGTERM', () => {
    const end = cpu();
    process.stdout.write(`${JSON.stringify({ role: 'server', accepted, user_us: end.user_us - start.user_us, system_us: end.system_us - start.system_us })}\n`);
    process.exit(0);
  });
}

function connect(host, port, total, inFlight) {
  const held = [];
  let started = 0, pending = 0, connected = 0, failed = 0;
  const t0 = performance.now(), start = cpu();
  const done = () => {
    if (connected + failed < total) return;
    const end = cpu();
    process.stdout.write(`${JSON.stringify({
      role: 'client', connected, failed, seconds: (performance.now() - t0) / 1000,
      user_us: end.user_us - start.user_us, system_us: end.system_us - start.system_us,
    })}\n`);
    process.exit(failed === 0 ? 0 : 1);
  };
  const next = () => {
    while (started < total && pending < inFlight) {
      started++;
      pending++;
      const socket = net.connect({ host, port });
      socket.once('connect', () => {
        pending--;
        connected++;
        held.push(socket);
        next();
        done();
      });
      socket.once('error', () => {
        if (socket.connecting) pending--;
        failed++;
        next();
        done();
      });
    }
  };
  next();
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'serve') serve(count(args[0], 'PORT', 1, 65535));
else if (mode === 'connect') {
  if (!args[0]) die('usage: conn-floor.mjs connect HOST PORT CONNECTIONS [IN_FLIGHT]');
  connect(args[0], count(args[1], 'PORT', 1, 65535), count(args[2], 'CONNECTIONS', 1, 1000000), args[3] === undefined ? 500 : count(args[3], 'IN_FLIGHT', 1, 100000));
} else die('usage: conn-floor.mjs serve PORT | connect HOST PORT CONNECTIONS [IN_FLIGHT]');
