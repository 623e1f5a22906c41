// Memory and CPU of every container of this compose project, in Prometheus
// text format, read from the Docker API (the mounted socket): what cAdvisor
// would give, with no image beyond the lab's node one and no dependencies.
//   GET /metrics  container_memory_usage_bytes, container_cpu_usage_seconds_total
//   GET /healthz
import http from 'node:http';
import os from 'node:os';

const SOCKET = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';
const PORT = Number(process.env.PORT ?? 9102);

function docker(path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath: SOCKET, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`docker ${path}: HTTP ${res.statusCode}`));
        // A container being removed can answer with an empty or cut body.
        try {
          return resolve(JSON.parse(body));
        } catch (err) {
          return reject(new Error(`docker ${path}: ${err.message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`docker ${path}: timeout`)));
    req.on('error', reject);
  });
}

// The project is our own container's compose label, so a second lab (the
// tests' haproxy-lab-test) is measured apart.
let project;
async function ownProject() {
  if (!project) {
    const self = await docker(`/containers/${os.hostname()}/json`);
    project = self.Config.Labels['com.docker.compose.project'];
  }
  return project;
}

function label(value) {
  return String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

async function metrics() {
  const filters = encodeURIComponent(JSON.stringify({ label: [`com.docker.compose.project=${await ownProject()}`] }));
  const containers = await docker(`/containers/json?filters=${filters}`);
  const lines = [
    '# HELP container_memory_usage_bytes Memory used by the container, page cache excluded (as docker stats shows it).',
    '# TYPE container_memory_usage_bytes gauge',
    '# HELP container_cpu_usage_seconds_total CPU time used by the container.',
    '# TYPE container_cpu_usage_seconds_total counter',
  ];
  const stats = await Promise.all(containers.map((c) => docker(`/containers/${c.Id}/stats?stream=false&one-shot=true`)
    .then((s) => [c, s], () => [c, null])));
  for (const [c, s] of stats) {
    if (!s?.memory_stats?.usage) continue;
    const name = (c.Names?.[0] ?? c.Id).replace(/^\//, '');
    const l = `service="${label(c.Labels?.['com.docker.compose.service'] ?? '')}",container="${label(name)}"`;
    const m = s.memory_stats;
    const cache = m.stats?.total_inactive_file ?? m.stats?.inactive_file ?? 0;
    lines.push(`container_memory_usage_bytes{${l}} ${m.usage - cache}`);
    lines.push(`container_cpu_usage_seconds_total{${l}} ${(s.cpu_stats?.cpu_usage?.total_usage ?? 0) / 1e9}`);
  }
  return `${lines.join('\n')}\n`;
}

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.end('ok');
    return;
  }
  if (req.url !== '/metrics') {
    res.statusCode = 404;
    res.end('not found\n');
    return;
  }
  metrics().then((text) => {
    res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    res.end(text);
  }, (err) => {
    res.statusCode = 503;
    res.end(`${err.message}\n`);
  });
});
server.listen(PORT, () => console.log(`container-exporter listening on :${PORT} (docker socket ${SOCKET})`));
// A scrape must never take the exporter down: log and keep serving.
process.on('uncaughtException', (err) => console.error(`container-exporter: ${err.stack ?? err}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
