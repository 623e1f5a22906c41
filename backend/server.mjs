// Entry point: `node /app/server.mjs`. Settings come from environment variables
// (see loadConfig in app.mjs); a bad value stops the container at once with exit 2.
//   PORT=8080 HOST=0.0.0.0 SLOW_MS=3000 MAX_SLEEP_MS=3600000 REPLICA=<hostname>
//   SERVER_TIMEOUT_MS=0 (socket inactivity; 120000 = Node's old 2-minute cut)
//   REQUEST_TIMEOUT_MS=0 HEADERS_TIMEOUT_MS=60000 KEEPALIVE_TIMEOUT_MS=65000
//   SHUTDOWN_DRAIN_MS=3000 SHUTDOWN_GRACE_MS=10000
// Routes: GET /fast, GET /slow[?ms=N|?until=EPOCH_MS][&early=1], GET|POST /ping (headers sleep, times),
// GET /healthz, GET /metrics (Prometheus text).
import { createBackend, loadConfig } from './app.mjs';

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  process.stderr.write(`backend: ${err.message}\n`);
  process.exit(2);
}

const backend = createBackend(config);
const { port } = await backend.listen().catch((err) => {
  process.stderr.write(`backend: cannot listen on ${config.host}:${config.port}: ${err.message}\n`);
  process.exit(1);
});
const c = backend.config;
console.log(
  `backend ${c.replica} listening on :${port} (slow=${c.slowMs}ms maxSleep=${c.maxSleepMs}ms ` +
    `serverTimeout=${c.serverTimeoutMs}ms requestTimeout=${c.requestTimeoutMs}ms headersTimeout=${c.headersTimeoutMs}ms ` +
    `keepAliveTimeout=${c.keepAliveTimeoutMs}ms shutdownDrain=${c.shutdownDrainMs}ms shutdownGrace=${c.shutdownGraceMs}ms)`,
);

// First SIGTERM/SIGINT drains (exit 0 once every connection is gone, 1 if the
// grace period had to cut some); a second one exits at once (exit 1).
let signals = 0;
function onSignal(signal) {
  if (++signals > 1) process.exit(1);
  const { inFlight, openConnections } = backend.stats();
  console.log(
    `backend ${c.replica} got ${signal}: draining ${inFlight} in-flight requests on ${openConnections} connections ` +
      `(still accepting for ${c.shutdownDrainMs}ms, then grace ${c.shutdownGraceMs}ms)`,
  );
  backend.shutdown().then(({ forced }) => process.exit(forced ? 1 : 0));
}
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
