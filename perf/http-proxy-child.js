// A child process of perf/http-proxy.bench.js, so that the load generator, the upstream and the
// proxy each run in their own process (as they would in production) instead of sharing one event
// loop. `node http-proxy-child.js upstream` serves a plain JSON endpoint and the mock tool server;
// `node http-proxy-child.js proxy <target>...` starts one fault proxy per target (empty plan,
// every call recorded to a temporary SQLite file, written from a worker thread as `faultline proxy`
// writes it; HTTP_PROXY_BENCH_WRITER=thread writes on the proxy's event loop instead). The
// upstream also has a "slow" endpoint that answers after SLOW_SERVICE_MS, like a real tool API.
// Loopback only.
//
// Talks to the parent over IPC: sends { ready, urls }, answers { cpu } with its CPU time and its
// event-loop delay since the last { cpu } (p99 and max, ms: what a SQLite transaction on the
// event loop shows up as), and on
// { stop } (or when the parent goes away, or after a hard deadline) closes everything, sends
// { stopped, ... } and exits, so no process outlives the bench. Exiting through process.exit()
// is also what lets `--cpu-prof` write its profile.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';

const HARD_DEADLINE_MS = 15 * 60_000;
const role = process.argv[2];
const send = (message) => {
  if (process.connected) process.send(message);
};

/** Service time of the slow endpoint, ms. */
const SLOW_SERVICE_MS = 5;
/** A fixed JSON answer after reading the request: the cheapest upstream node:http can be. */
const ORDER = JSON.stringify({ order_id: 'ORD-10041', status: 'shipped', total: 129.5, currency: 'EUR', items: [{ sku: 'SKU-1', qty: 2 }] });

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

async function startUpstream() {
  const { createToolCatalog, startMockToolServer } = await import('../dist/tools/index.js');
  const json = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ORDER) }).end(ORDER));
  });
  const jsonUrl = await listen(json);
  const slow = createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ORDER) }).end(ORDER), SLOW_SERVICE_MS));
  });
  const slowUrl = await listen(slow);
  const tools = await startMockToolServer({ catalog: createToolCatalog({ seed: 1 }), port: 0 });
  return {
    urls: { json: jsonUrl, slow: slowUrl, tools: tools.url },
    async stop() {
      for (const server of [json, slow]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await tools.close();
      return {};
    },
  };
}

async function startProxies(targets) {
  const { startHttpFaultProxy } = await import('../dist/faults/http-proxy/index.js');
  const { createFaultPlan } = await import('../dist/faults/plan.js');
  const { openStore } = await import('../dist/store/open-store.js');
  const { createSqliteWorkerStore } = await import('../dist/store/sqlite/sqlite-worker-store.js');
  const dir = mkdtempSync(join(tmpdir(), 'faultline-proxy-bench-'));
  const path = join(dir, 'records.db');
  const store = process.env.HTTP_PROXY_BENCH_WRITER === 'thread' ? await openStore(path) : await createSqliteWorkerStore({ path });
  const proxies = [];
  for (const target of targets) {
    proxies.push(
      await startHttpFaultProxy({
        target,
        plan: createFaultPlan({ version: 1, rules: [] }),
        port: 0,
        store,
        // HTTP_PROXY_BENCH_BATCH=<n> sets the recorder's batch size (default: the recorder's).
        recording: { spool: false, ...(process.env.HTTP_PROXY_BENCH_BATCH ? { batchSize: Number(process.env.HTTP_PROXY_BENCH_BATCH) } : {}) },
        adminToken: 'bench',
        // HTTP_PROXY_BENCH_FAST_PATH=0 sends every request through node:http, for an A/B of the fast path.
        fastPath: process.env.HTTP_PROXY_BENCH_FAST_PATH !== '0',
      }),
    );
  }
  return {
    urls: Object.fromEntries(targets.map((t, i) => [t, proxies[i].url])),
    async stop() {
      await Promise.all(proxies.map((p) => p.close()));
      const handed = proxies.reduce((n, p) => n + p.stats().recorded, 0);
      const requests = proxies.reduce((n, p) => n + p.stats().requests, 0);
      const fastPath = proxies.reduce((n, p) => n + p.stats().fastPath, 0);
      const stored = await store.count({});
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      return { requests, fastPath, recorded: handed, stored };
    },
  };
}

/**
 * The floor: the least a node:http reverse proxy can do (keep-alive agent, headers copied, bodies
 * piped), with no naming, plan, record or store. What it costs is the price of the extra hop
 * itself on this machine, whatever the proxy does besides.
 */
async function startBareProxies(targets) {
  const { Agent, request } = await import('node:http');
  const servers = [];
  const urls = {};
  for (const target of targets) {
    const { hostname, port } = new URL(target);
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    const server = createServer((req, res) => {
      const upstream = request({ hostname, port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    servers.push(server);
    urls[target] = await listen(server);
  }
  return {
    urls,
    async stop() {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      return {};
    },
  };
}

const started =
  role === 'upstream'
    ? await startUpstream()
    : role === 'proxy'
      ? await startProxies(process.argv.slice(3))
      : role === 'bare-proxy'
        ? await startBareProxies(process.argv.slice(3))
        : undefined;
if (started === undefined) {
  console.error('usage: http-proxy-child.js upstream | proxy <target>... | bare-proxy <target>...');
  process.exit(2);
}

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();

let stopping;
function stop() {
  stopping ??= (async () => {
    let summary = {};
    try {
      summary = await started.stop();
    } catch (error) {
      summary = { error: String(error) };
    }
    send({ stopped: true, ...summary });
    process.exit(0);
  })();
}

/** CPU time of the main thread alone (ms), from /proc (Linux); undefined elsewhere. */
function mainThreadCpuMs() {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

process.on('message', (message) => {
  if (message?.cpu) {
    const u = process.resourceUsage();
    const delay = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 };
    loopDelay.reset();
    send({ cpu: { user: u.userCPUTime, system: u.systemCPUTime, mainMs: mainThreadCpuMs(), switches: u.voluntaryContextSwitches + u.involuntaryContextSwitches }, delay });
  }
  if (message?.stop) stop();
});
process.on('disconnect', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setTimeout(stop, HARD_DEADLINE_MS).unref();
send({ ready: true, urls: started.urls });
