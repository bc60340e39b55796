// What each part of faultline is worth to an agent that does nothing but follow its feedback: the
// follow-feedback reference agent (naive habits; it does what `feedback.action` says) over the
// whole default suite, in-process, seed 1, once per configuration:
//
// - raw: no feedback (it is the naive agent); assisted: the runtime as it ships;
// - assisted + each optional check of the runtime alone (bench --capabilities), and all of them;
// - peer harnesses in raw mode, the same agent behind: cockatiel (retry 3 attempts with
//   exponential backoff, a consecutive-failure breaker per tool, a timeout), LangChain.js's
//   toolRetryMiddleware (its defaults: 2 retries, 1 s doubling, Retry-After honoured; no
//   jitter here, so runs repeat), and a plain wrapper that retries every failure 3 times at once.
//
// Peer backoffs wait on the scenario's virtual clock (task.sleep), as the runtime's do: cockatiel's
// own delay is set to 0 and its backoff's duration is slept virtually before the attempt, so a
// 30 s wait costs nothing and Retry-After compliance is measured on the same clock. cockatiel's
// timeout and breaker half-open run on the wall clock, which barely moves in a virtual run: the
// timeout never fires (the runtime's per-tool timeout, on the virtual clock, ends hangs) and an
// open breaker stays open for the rest of the run. LangChain's middleware is driven the same way:
// its own sleep is set to 0 and its delay formula (initialDelayMs x backoffFactor^retry, at least
// the Retry-After) is slept on the virtual clock by the attempt. The LangChain row is left out,
// with a note, when the langchain devDependency is not installed.
//
// Rates per scenario run, 95% Wilson intervals; n counts the runs that scored the measure.
import { ConsecutiveBreaker, ExponentialBackoff, TimeoutStrategy, circuitBreaker, handleWhenResult, isBrokenCircuitError, noJitterGenerator, retry, timeout, wrap } from 'cockatiel';
import { CAPABILITIES, createFeedbackFollowingAgent, loadSuite, runSuite, scoreSuite } from '../dist/bench.js';
import { QUICK, table } from './harness.js';

/** --quick: two domains of the default suite. */
const FILTER = QUICK ? (s) => s.id.startsWith('orders/') || s.id.startsWith('weather/') : () => true;
const DIMENSIONS = ['identification', 'recovery', 'loop_avoidance', 'semantic_verification', 'idempotency_safety'];

/** The same agent with every tool call going through `wrapCall(task, call)`. */
function behind(name, agent, wrapCall) {
  return {
    name,
    run(task) {
      const call = (tool, args) => task.callTool(tool, args);
      const wrapped = wrapCall(task, call);
      return agent.run({ ...task, callTool: wrapped });
    },
  };
}

/** cockatiel's retry + breaker + timeout around each call; a failed result counts as a failure. */
function cockatielHarness(task, call) {
  const policies = new Map();
  const policyFor = (tool) => {
    let entry = policies.get(tool);
    if (entry !== undefined) return entry;
    const pending = { ms: 0 };
    const exponential = new ExponentialBackoff({ initialDelay: 1_000, maxDelay: 30_000, generator: noJitterGenerator });
    // cockatiel waits 0 ms on the wall clock; the attempt itself waits the backoff on the virtual one.
    const virtual = (b) => ({ duration: 0, next: (ctx) => { const n = b.next(ctx); pending.ms = n.duration; return virtual(n); } });
    const backoff = { next: (ctx) => { const b = exponential.next(ctx); pending.ms = b.duration; return virtual(b); } };
    const failed = handleWhenResult((r) => r.ok === false);
    const policy = wrap(
      retry(failed, { maxAttempts: 3, backoff }),
      circuitBreaker(failed, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(5) }),
      timeout(10_000, TimeoutStrategy.Cooperative),
    );
    entry = { policy, pending };
    policies.set(tool, entry);
    return entry;
  };
  return async (tool, args) => {
    const { policy, pending } = policyFor(tool);
    try {
      return await policy.execute(async ({ attempt }) => {
        if (attempt > 0 && pending.ms > 0) await task.sleep(pending.ms);
        return call(tool, args);
      });
    } catch (error) {
      if (isBrokenCircuitError(error)) return { ok: false, error: { code: 'CIRCUIT_OPEN', message: `${tool}: the circuit is open (cockatiel)` } };
      throw error;
    }
  };
}

/** LangChain's toolRetryMiddleware defaults, slept on the virtual clock (see the top of the file). */
const LANGCHAIN_RETRY = { maxRetries: 2, initialDelayMs: 1_000, backoffFactor: 2, maxDelayMs: 60_000 };

/** A failed tool result as the error a LangChain tool throws, so the middleware retries it. */
class ToolCallFailed extends Error {
  constructor(result) {
    super(result.error.message);
    this.result = result;
  }
}

function langchainHarness(toolRetryMiddleware) {
  const middleware = toolRetryMiddleware({ maxRetries: LANGCHAIN_RETRY.maxRetries, initialDelayMs: 0, backoffFactor: 0, maxDelayMs: 0, jitter: false, onFailure: 'error' });
  return (task, call) => async (tool, args) => {
    let attempt = 0;
    let retryAfterMs;
    const handler = async () => {
      if (attempt > 0) {
        const backoff = Math.min(LANGCHAIN_RETRY.initialDelayMs * LANGCHAIN_RETRY.backoffFactor ** (attempt - 1), LANGCHAIN_RETRY.maxDelayMs);
        await task.sleep(Math.max(backoff, retryAfterMs ?? 0));
      }
      attempt++;
      const result = await call(tool, args);
      if (result.ok) return result;
      const header = result.error.headers?.['retry-after'];
      retryAfterMs = header !== undefined && /^\d+$/.test(header) ? Number(header) * 1000 : undefined;
      throw new ToolCallFailed(result);
    };
    try {
      return await middleware.wrapToolCall({ toolCall: { id: `${tool}-${attempt}`, name: tool, args }, tool: { name: tool }, state: {}, runtime: {} }, handler);
    } catch (error) {
      if (error instanceof ToolCallFailed) return error.result;
      throw error;
    }
  };
}

/** langchain's toolRetryMiddleware, or undefined when the package is not installed. */
async function loadLangchain() {
  try {
    return (await import('langchain')).toolRetryMiddleware;
  } catch {
    return undefined;
  }
}

/** Retries every failed call 3 times, at once: the wrapper most code starts with. */
function retryThreeTimes(_task, call) {
  return async (tool, args) => {
    let result = await call(tool, args);
    for (let i = 0; i < 3 && !result.ok; i++) result = await call(tool, args);
    return result;
  };
}

const cell = (d) => (d.n === 0 ? 'n=0' : `${d.rate.toFixed(2)} [${d.ci95[0].toFixed(2)}, ${d.ci95[1].toFixed(2)}]`);

export async function run() {
  const scenarios = (await loadSuite('default')).filter(FILTER);
  const agent = createFeedbackFollowingAgent();
  const langchain = await loadLangchain();
  const configs = [
    { label: 'raw (no feedback)', feedback: 'raw', agent },
    { label: 'assisted (the runtime as it ships)', feedback: 'assisted', agent },
    ...CAPABILITIES.map((c) => ({ label: `assisted + ${c}`, feedback: 'assisted', agent, capabilities: [c] })),
    { label: 'assisted + all four', feedback: 'assisted', agent, capabilities: [...CAPABILITIES] },
    { label: 'raw, behind cockatiel (retry + breaker + timeout)', feedback: 'raw', agent: behind('follow-feedback', agent, cockatielHarness) },
    ...(langchain !== undefined ? [{ label: 'raw, behind LangChain toolRetryMiddleware', feedback: 'raw', agent: behind('follow-feedback', agent, langchainHarness(langchain)) }] : []),
    { label: 'raw, behind retry 3 times', feedback: 'raw', agent: behind('follow-feedback', agent, retryThreeTimes) },
  ];
  const rows = [];
  const raw = [];
  for (const config of configs) {
    const started = Date.now();
    const suite = await runSuite({ scenarios, agents: [config.agent], feedback: config.feedback, seed: 1, ...(config.capabilities ? { capabilities: config.capabilities } : {}) });
    const [score] = scoreSuite(suite);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    rows.push([config.label, ...DIMENSIONS.map((d) => cell(score.dimensions[d])), score.score.toFixed(3), `${seconds} s`]);
    raw.push({ label: config.label, dimensions: score.dimensions, score: score.score });
  }
  const runs = scenarios.length;
  const markdown = [
    `The follow-feedback agent over ${runs} scenarios of the default suite${QUICK ? ' (--quick: orders and weather only)' : ''}, in-process, seed 1, one run each. Rate [95% Wilson interval].`,
    '',
    ...(langchain === undefined ? ['The LangChain row needs the langchain devDependency installed (npm install).', ''] : []),
    table(['configuration', 'identification', 'recovery', 'loop avoidance', 'semantic verification', 'idempotency safety', 'overall', 'time'], rows),
  ].join('\n');
  return { title: 'FailBench ablation: what the feedback and each runtime check are worth', markdown, raw };
}
