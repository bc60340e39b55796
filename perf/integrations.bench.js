// What the integrations cost, each against the call it wraps, in the same run:
//
// - MCP client tools (`faultline/mcp`): `rt.execute` of a tool made by `mcpClientTools` (input
//   validated against the server's schema, breaker, deadline, classification, a redacted record
//   to an in-memory sink) against the same SDK Client's `callTool`, over the SDK's
//   InMemoryTransport to an in-process SDK server (no pipes or sockets, so the figure is the
//   runtime's own cost).
// - OpenAI tool calls (`faultline/openai`): `runChatToolCalls` answering an assistant message with
//   two tool calls (arguments as JSON text) against calling the two tools' functions directly
//   with `JSON.parse` of the same arguments and `JSON.stringify` of the results.
// - Shared breakers (`faultline/redis`): the runtime's success and failure paths with breakers
//   shared through the local Redis against the default in-process breakers. A success costs no
//   Redis traffic while the count is zero; each counted failure sends one script call (async,
//   the call does not wait for it). Skipped when Redis does not answer.
import { Redis } from 'ioredis';
import { createRuntime, defineTool, HttpError } from '../dist/index.js';
import { mcpClientTools } from '../dist/integrations/mcp-client.js';
import { runChatToolCalls } from '../dist/integrations/openai.js';
import { createRedisBreakers } from '../dist/runtime/redis-breakers.js';
import { compare, fmtNs, table } from './harness.js';
import { connectedClient, weatherArgs, weatherServer } from './mcp-weather-server.js';

const REDIS_URL = process.env.FAULTLINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function mcpRows() {
  const { server, clientSide } = await weatherServer();
  const client = await connectedClient(clientSide);
  let recorded = 0;
  const rt = createRuntime({ tools: await mcpClientTools(client), onRecord: () => void recorded++ });
  const args = weatherArgs;
  const results = await compare(
    {
      'client.callTool (direct)': async () => {
        const r = await client.callTool({ name: 'get_weather', arguments: args });
        if (r.isError) throw new Error('unexpected tool error');
      },
      'rt.execute of mcpClientTools': async () => {
        const r = await rt.execute('get_weather', args);
        if (!r.ok) throw new Error(`unexpected failure: ${r.error.message}`);
      },
    },
    { batch: 200, samples: 40, warmupBatches: 10 },
  );
  await rt.close();
  await client.close();
  await server.close();
  if (recorded === 0) throw new Error('nothing recorded');
  return results;
}

function catalogTools() {
  const getWeather = (args) => ({ city: args.city, temperature: 18, unit: args.unit ?? 'celsius' });
  const getOrder = (args) => ({ order_id: args.order_id, status: 'shipped', items: 2 });
  const tools = [
    defineTool({
      name: 'get_weather',
      description: 'Weather',
      input: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' } }, required: ['city'] },
      idempotent: true,
      execute: getWeather,
    }),
    defineTool({ name: 'get_order', description: 'An order', input: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }, idempotent: true, execute: getOrder }),
  ];
  return { tools, direct: { get_weather: getWeather, get_order: getOrder } };
}

async function openaiRows() {
  const { tools, direct } = catalogTools();
  let recorded = 0;
  const rt = createRuntime({ tools, onRecord: () => void recorded++ });
  const message = {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_order', arguments: '{"order_id":"ORD-1"}' } },
    ],
  };
  const results = await compare(
    {
      'parse + call + stringify (direct)': async () => {
        const out = [];
        for (const c of message.tool_calls) out.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify(await direct[c.function.name](JSON.parse(c.function.arguments))) });
        if (out.length !== 2) throw new Error('lost a call');
      },
      'runChatToolCalls (through the runtime)': async () => {
        const out = await runChatToolCalls(rt, message);
        if (out.length !== 2) throw new Error('lost a call');
      },
    },
    { batch: 500, samples: 60, warmupBatches: 20 },
  );
  await rt.close();
  if (recorded === 0) throw new Error('nothing recorded');
  return results;
}

async function redisAnswers() {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function breakerRows() {
  if (!(await redisAnswers())) return undefined;
  const prefix = `faultline-perf-${process.pid}`;
  const shared = createRedisBreakers({ url: REDIS_URL, prefix });
  const tool = (name, fails) =>
    defineTool({
      name,
      description: name,
      input: { type: 'object', properties: {} },
      idempotent: true,
      retry: { maxRetries: 0 },
      // A threshold no run reaches: the failure path stays "closed, counting" throughout.
      breaker: { failureThreshold: 1e9 },
      execute: () => {
        if (fails) throw new HttpError(503, 'down');
        return { ok: true };
      },
    });
  const tools = [tool('steady', false), tool('flaky', true)];
  const local = createRuntime({ tools, onRecord: () => undefined, correctionMemory: false });
  const redis = createRuntime({ tools, onRecord: () => undefined, correctionMemory: false, breakers: shared });
  await shared.ready();
  const results = await compare(
    {
      'success, in-process breaker': () => local.execute('steady', {}),
      'success, breaker shared through Redis': () => redis.execute('steady', {}),
      'failure (503), in-process breaker': () => local.execute('flaky', {}),
      'failure (503), breaker shared through Redis': () => redis.execute('flaky', {}),
    },
    { batch: 500, samples: 60, warmupBatches: 10 },
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const states = await shared.sharedStates();
  await local.close();
  await redis.close();
  const admin = new Redis(REDIS_URL);
  await admin.del(`${prefix}:breaker:steady`, `${prefix}:breaker:flaky`);
  admin.disconnect();
  await shared.close();
  return { results, reported: states['flaky']?.consecutiveFailures ?? 0, dropped: shared.droppedReports };
}

function ratioRows(results, base) {
  const b = results[base].medianNs;
  return Object.entries(results).map(([name, m]) => [name, fmtNs(m.medianNs), fmtNs(m.p95Ns), `${(m.medianNs / b).toFixed(2)}x`, `+${fmtNs(Math.max(0, m.medianNs - b))}`]);
}

export async function run() {
  const mcp = await mcpRows();
  const openai = await openaiRows();
  const breakers = await breakerRows();
  const headers = ['path', 'median', 'p95', 'vs baseline', 'added'];
  const parts = [
    table(headers, ratioRows(mcp, 'client.callTool (direct)')),
    '',
    table(headers, ratioRows(openai, 'parse + call + stringify (direct)')),
    '',
  ];
  if (breakers === undefined) parts.push(`Shared breakers: skipped (no Redis at ${REDIS_URL}).`);
  else {
    const { results, reported, dropped } = breakers;
    const rows = [
      ...ratioRows({ a: results['success, in-process breaker'], b: results['success, breaker shared through Redis'] }, 'a').map((r, i) => [i === 0 ? 'success, in-process breaker' : 'success, breaker shared through Redis', ...r.slice(1)]),
      ...ratioRows({ a: results['failure (503), in-process breaker'], b: results['failure (503), breaker shared through Redis'] }, 'a').map((r, i) => [i === 0 ? 'failure (503), in-process breaker' : 'failure (503), breaker shared through Redis', ...r.slice(1)]),
    ];
    parts.push(table(['runtime call', 'median', 'p95', 'vs in-process', 'added'], rows), '', `Failures counted in Redis: ${reported.toLocaleString('en-US')}; reports dropped: ${dropped}.`);
  }
  return { title: 'Integrations: MCP client tools, OpenAI tool calls and shared breakers against the calls they wrap', markdown: parts.join('\n') };
}
