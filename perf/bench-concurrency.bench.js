// FailBench through the real runner (runSuite: a fresh world per run, the fault plan, the
// runtime, scoring) with an `openai:` agent whose model is a local OpenAI-compatible endpoint
// that answers every request after 200 ms, at --concurrency 1 and 16, interleaved. Scenario time
// is almost all model latency, so runs should overlap almost perfectly: the goal is >= 10x.
//
// The scenarios are a fixed, evenly spread subset of the default suite (every domain and fault
// family). The "model" is the robust reference playbook behind the chat.completions wire format:
// for each conversation it runs createRobustAgent() on what the request carries (the user's
// instruction, the offered functions, the time in the system prompt) and turns what the
// playbook does into tool calls: a tool call per call, wait_seconds per sleep, report_tool_failure
// per diagnosis and finish at the end. So the conversations are as long, and the answers as
// right, as a careful model's would be; the oracle pass rate is printed as a check.
//
// The endpoint runs in a worker thread, like a server in its own process: its JSON work is not
// billed to the runner's event loop.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createServer } from 'node:http';
import { defaultSuiteDir } from '../dist/failbench/default-suite.js';
import { createRobustAgent, resolveAgent } from '../dist/failbench/agents/index.js';
import { runSuite } from '../dist/failbench/runner.js';
import { loadScenarios } from '../dist/failbench/scenario-loader.js';
import { createToolCatalog } from '../dist/tools/index.js';
import { QUICK, table } from './harness.js';

// --quick: fewer, faster runs at a lower concurrency.
const LATENCY_MS = QUICK ? 50 : 200;
const CONCURRENCY = QUICK ? 8 : 16;
/** Scenario runs per measurement: one agent x this many scenarios of the default suite. */
const RUNS = QUICK ? 16 : 48;
/** Rounds of (concurrency 1, concurrency 16), interleaved so drift in machine load hits both. */
const ROUNDS = QUICK ? 1 : 2;
const CONTROL = new Set(['report_tool_failure', 'wait_seconds', 'finish']);

// ---------------------------------------------------------------------------------------------
// The model endpoint (worker thread).

/** One conversation: a robust playbook run whose actions become the model's tool calls. */
function startPlaybook(id, body, annotations) {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const now = /The current time is (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(system)?.[1] ?? new Date(0).toISOString();
  const queue = [];
  let wake;
  const push = (action) => {
    queue.push(action);
    const w = wake;
    wake = undefined;
    w?.();
  };
  const tools = (body.tools ?? [])
    .map((t) => t.function)
    .filter((f) => !CONTROL.has(f.name))
    .map((f) => ({ name: f.name, description: f.description ?? '', inputSchema: f.parameters ?? { type: 'object' }, ...(annotations.has(f.name) ? { annotations: annotations.get(f.name) } : {}) }));
  const task = {
    id: `conversation-${id}`,
    instruction: body.messages.find((m) => m.role === 'user')?.content ?? '',
    now,
    tools,
    feedback: system.includes('"assisted"') ? 'assisted' : 'raw',
    signal: new AbortController().signal,
    callTool: (name, args) => new Promise((resolve) => push({ call: [name, args], resolve })),
    sleep: (ms) => new Promise((resolve) => push({ call: ['wait_seconds', { seconds: ms / 1000 }], resolve })),
  };
  createRobustAgent()
    .run(task)
    .then(
      (outcome) => push({ outcome }),
      (error) => push({ outcome: { status: 'gave_up', answer: `the playbook threw: ${error.message}`, diagnoses: [] } }),
    );
  return {
    /** The actions the playbook takes before it next waits on an answer. */
    async next() {
      if (queue.length === 0) await new Promise((resolve) => (wake = resolve));
      // Calls issued together (Promise.all) go out in one turn.
      await new Promise((resolve) => setImmediate(resolve));
      return queue.splice(0);
    },
  };
}

async function modelEndpoint() {
  const annotations = new Map(createToolCatalog().tools.map((t) => [t.name, t.annotations]));
  const conversations = new Map();
  let sequence = 0;
  let requests = 0;

  async function turn(body) {
    const messages = body.messages;
    const lastAssistant = messages.findLast((m) => m.role === 'assistant' && m.tool_calls?.length > 0);
    let conversation;
    if (lastAssistant === undefined) {
      const id = ++sequence;
      conversation = { id, playbook: startPlaybook(id, body, annotations), pending: new Map(), turn: 0 };
      conversations.set(id, conversation);
    } else {
      conversation = conversations.get(Number(/^c(\d+)_/.exec(lastAssistant.tool_calls[0].id)?.[1]));
      if (conversation === undefined) return { text: 'I lost track of this conversation.' };
      for (const m of messages.slice(messages.lastIndexOf(lastAssistant) + 1)) {
        const action = conversation.pending.get(m.tool_call_id);
        conversation.pending.delete(m.tool_call_id);
        action?.resolve(action.call[0] === 'wait_seconds' ? undefined : JSON.parse(m.content));
      }
    }
    const actions = await conversation.playbook.next();
    const calls = [];
    for (const action of actions) {
      if (action.outcome !== undefined) {
        for (const d of action.outcome.diagnoses) calls.push({ call: ['report_tool_failure', d] });
        calls.push({ call: ['finish', { status: action.outcome.status, answer: action.outcome.answer }] });
        conversations.delete(conversation.id);
      } else {
        calls.push(action);
      }
    }
    conversation.turn++;
    return {
      calls: calls.map((action, i) => {
        const callId = `c${conversation.id}_${conversation.turn}_${i}`;
        if (action.resolve !== undefined) conversation.pending.set(callId, action);
        return { id: callId, type: 'function', function: { name: action.call[0], arguments: JSON.stringify(action.call[1]) } };
      }),
    };
  }

  const server = createServer((req, res) => {
    const arrived = Date.now();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { calls = [], text = null } = await turn(body);
      const message = { role: 'assistant', content: text, refusal: null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
      const payload = JSON.stringify({
        id: `chatcmpl-${requests}`,
        object: 'chat.completion',
        created: 1_767_225_600,
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 },
      });
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
          res.end(payload);
        },
        Math.max(0, arrived + LATENCY_MS - Date.now()),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
  parentPort.on('message', (message) => {
    if (message === 'requests') parentPort.postMessage({ requests });
  });
}

if (!isMainThread && workerData?.role === 'model-endpoint') void modelEndpoint();

function startModelEndpoint() {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'model-endpoint' } });
  const reply = (key) => new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (!(key in m)) return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      resolve(m[key]);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  return reply('port').then((port) => ({
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => {
      const answer = reply('requests');
      worker.postMessage('requests');
      return answer;
    },
    close: () => worker.terminate(),
  }));
}

// ---------------------------------------------------------------------------------------------
// The measurement (main thread).

/** RUNS scenarios spread evenly over the default suite (sorted by id, so over domains and families). */
async function subset() {
  const all = (await loadScenarios(defaultSuiteDir())).sort((a, b) => a.id.localeCompare(b.id));
  const n = Math.min(RUNS, all.length);
  return { total: all.length, scenarios: Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]) };
}

/**
 * The wall time a greedy pool of `concurrency` workers needs for jobs of these durations, taken
 * in order, with zero overhead: the best any runner can do with this job mix and order.
 */
function scheduleBound(durations, concurrency) {
  const free = new Array(concurrency).fill(0);
  for (const d of durations) {
    const i = free.indexOf(Math.min(...free));
    free[i] += d;
  }
  return Math.max(...free);
}

async function timed(endpoint, scenarios, concurrency, round) {
  const agent = await resolveAgent('openai:perf-model', { env: { OPENAI_BASE_URL: endpoint.baseUrl, OPENAI_API_KEY: 'sk-perf-local' } });
  const before = await endpoint.requests();
  const started = process.hrtime.bigint();
  const elapsedMs = () => Number(process.hrtime.bigint() - started) / 1e6;
  // At concurrency 1 the gaps between completions are the runs' own durations.
  const doneAt = [];
  const suite = await runSuite({ scenarios, agents: [agent], feedback: 'raw', seed: 7, concurrency, onProgress: () => doneAt.push(elapsedMs()) });
  const wallMs = elapsedMs();
  const results = suite.results;
  return {
    round,
    concurrency,
    wallMs,
    durations: doneAt.map((t, i) => t - (doneAt[i - 1] ?? 0)),
    runs: results.length,
    modelRequests: (await endpoint.requests()) - before,
    toolCalls: results.reduce((n, r) => n + r.calls.length, 0),
    passed: results.filter((r) => r.oraclePassed).length,
    errors: results.filter((r) => r.outcome.status === 'error').length,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function run() {
  const { total, scenarios } = await subset();
  const endpoint = await startModelEndpoint();
  try {
    // Warm-up: module loading, JIT and the first connections are billed to neither side.
    await timed(endpoint, scenarios.slice(0, CONCURRENCY), CONCURRENCY, 0);
    const measured = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const concurrency of [1, CONCURRENCY]) measured.push(await timed(endpoint, scenarios, concurrency, round));
    }
    const serial = measured.filter((m) => m.concurrency === 1);
    const parallel = measured.filter((m) => m.concurrency === CONCURRENCY);
    const speedup = median(serial.map((m) => m.wallMs)) / median(parallel.map((m) => m.wallMs));
    const perRound = serial.map((s, i) => s.wallMs / parallel[i].wallMs);
    const bound = median(serial.map((s) => s.wallMs / scheduleBound(s.durations, CONCURRENCY)));
    const first = serial[0];
    const rows = measured.map((r) => [
      r.round,
      r.concurrency,
      r.runs,
      r.modelRequests,
      r.toolCalls,
      `${(r.wallMs / 1000).toFixed(2)} s`,
      `${(r.wallMs / r.runs).toFixed(0)} ms`,
      `${r.passed}/${r.runs}`,
      r.errors,
    ]);
    const count = (f) => new Set(scenarios.map(f)).size;
    const spread = `${count((s) => s.id.split('/')[0])} domains, ${count((s) => s.taxonomy.category)} failure categories, ${count((s) => s.kind)} scenario kinds, ${count((s) => s.language)} languages`;
    return {
      title: `FailBench concurrency: runSuite with an openai: agent against a ${LATENCY_MS} ms model endpoint`,
      markdown: [
        table(['round', 'concurrency', 'runs', 'model requests', 'tool calls', 'wall time', 'wall per run', 'oracle passed', 'errors'], rows),
        '',
        `${scenarios.length} of the default suite's ${total} scenarios, spread evenly by id (${spread}), feedback raw, one \`openai:perf-model\` agent; ` +
          `${(first.modelRequests / first.runs).toFixed(2)} model responses per run on average (${((first.modelRequests / first.runs) * LATENCY_MS).toFixed(0)} ms of pure model latency).`,
        `Speedup at concurrency ${CONCURRENCY} (median wall time of ${ROUNDS} interleaved rounds each): **${speedup.toFixed(1)}x** (goal >= 10x; per round ${perRound.map((x) => `${x.toFixed(1)}x`).join(', ')}). ` +
          `A zero-overhead pool running the same runs in the same order would reach ${bound.toFixed(1)}x.`,
      ].join('\n'),
    };
  } finally {
    await endpoint.close();
  }
}
