// FailBench over the wire: the same scenarios through the HTTP fault proxy and the MCP fault
// proxy score as they do in process, scenario by scenario; a seed fixes the results; and every
// request lands in a real SQLite store under the scenario's trace with the fault as ground truth.
// The whole default suite over both transports is the slow test at the end (FAULTLINE_SLOW_TESTS=1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createNaiveAgent } from '../agents/naive.js';
import { createRobustAgent } from '../agents/robust.js';
import { runSuite, type SuiteResult } from '../runner.js';
import { loadScenarios } from '../scenario-loader.js';
import { scoreSuite } from '../score.js';
import { DIMENSIONS, type FeedbackMode, type Scenario, type ScenarioResult } from '../types.js';
import type { WireTransport } from './wire.js';

const SUITE_DIR = fileURLToPath(new URL('../scenarios/default', import.meta.url));
const SEED = 7;
const SLOW = 600_000;
const WIRES: readonly WireTransport[] = ['http', 'mcp'];

const dir = mkdtempSync(join(tmpdir(), 'faultline-transport-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let scenarios: Scenario[];
/** Two scenarios per fault kind and one per scenario kind: every way a fault reaches the wire. */
let subset: Scenario[];

beforeAll(async () => {
  scenarios = await loadScenarios(SUITE_DIR);
  const picked = new Set<Scenario>();
  const kinds = new Set(scenarios.flatMap((s) => s.faults.map((f) => f.fault)));
  for (const kind of kinds) for (const s of scenarios.filter((x) => x.faults.some((f) => f.fault === kind)).slice(0, 2)) picked.add(s);
  for (const kind of new Set(scenarios.map((s) => s.kind))) picked.add(scenarios.find((s) => s.kind === kind)!);
  subset = scenarios.filter((s) => picked.has(s));
});

const agents = () => [createRobustAgent(), createNaiveAgent()];

function run(transport: WireTransport | 'inprocess', feedback: FeedbackMode, list: readonly Scenario[], db?: string): Promise<SuiteResult> {
  const store = db === undefined ? undefined : createSqliteStore({ path: db });
  return runSuite({ scenarios: list, agents: agents(), feedback, seed: SEED, transport, concurrency: 2, runId: `wire-${transport}-${feedback}`, ...(store !== undefined ? { store } : {}) }).finally(() => store?.close());
}

/**
 * What must not depend on the transport. The error code may (`HTTP_404` on the wire for a typed
 * `ORDER_NOT_FOUND` in process). A commit_then_drop hangs after the write until the client's
 * timeout on every transport, so its answer and times are the same too.
 */
function observable(r: ScenarioResult): unknown {
  const calls = r.calls.map((c) => [c.tool, c.ok, c.fault ?? null, c.virtualMs]);
  return { scenario: r.scenarioId, agent: r.agent, scores: r.scores, status: r.outcome.status, answer: r.outcome.answer, calls, duplicates: r.duplicateSideEffects, retryAfter: r.retryAfter };
}

function rates(suite: SuiteResult, agent: string): Record<string, number> {
  const score = scoreSuite(suite).find((s) => s.agent === agent)!;
  return Object.fromEntries(DIMENSIONS.filter((d) => score.dimensions[d].n > 0).map((d) => [d, score.dimensions[d].rate]));
}

function expectRobust(suite: SuiteResult): void {
  for (const rate of Object.values(rates(suite, 'robust'))) expect(rate).toBeGreaterThanOrEqual(0.95);
}

/** Seed 000's validity test, over the whole suite (a sample need not make the naive agent fail). */
function expectValid(suite: SuiteResult): void {
  expectRobust(suite);
  const naive = rates(suite, 'naive');
  for (const d of ['loop_avoidance', 'idempotency_safety', 'semantic_verification']) expect(naive[d]).toBeLessThanOrEqual(0.5);
}

describe.each(WIRES)('--transport %s', (transport) => {
  it(
    'scores every scenario of a sample with every fault kind as in process (robust >= 0.95), and records each request under its trace with the injected fault',
    async () => {
      const db = join(dir, `${transport}.db`);
      const [inprocess, wire] = [await run('inprocess', 'raw', subset), await run(transport, 'raw', subset, db)];
      expect(wire.meta.transport).toBe(transport);
      expect(wire.results.map((r) => observable(r))).toEqual(inprocess.results.map((r) => observable(r)));
      expect(wire.results.some((r) => r.calls.some((c) => c.fault !== undefined))).toBe(true);
      expectRobust(wire);

      const store = createSqliteStore({ path: db });
      try {
        for (const result of wire.results) {
          const records = await store.query({ traceId: result.traceId! });
          // Raw mode: one request per call, recorded by the proxy in call order.
          expect(records.map((r) => [r.tool_name, r.fault?.kind ?? null])).toEqual(result.calls.map((c) => [c.tool, c.fault ?? null]));
          for (const record of records) {
            expect(record.context_snapshot).toMatchObject({ transport, scenario_id: result.scenarioId, agent: result.agent, failbench_run_id: wire.meta.runId });
            if (record.fault !== null) expect(record.fault.transport).toBe(transport);
          }
        }
      } finally {
        await store.close();
      }
    },
    SLOW,
  );
});

it(
  'a fault that meets the tool\'s own failure (a rewrite of a 404, a drop after a refused write) is no fault on any transport: the same calls, ground truth and scores',
  async () => {
    const byId = new Map(scenarios.map((s) => [s.id, s]));
    const list: Scenario[] = [
      { ...byId.get('files/not-found-missing-en')!, id: 'files/partial-of-a-404', faults: [{ tool: 'read_file', trigger: 'always', fault: 'partial', params: { drop_fraction: 0.5 } }] },
      { ...byId.get('orders/conflict-shipped-cancel-shipped-en')!, id: 'orders/drop-after-a-409', faults: [{ tool: 'cancel_order', trigger: 'always', fault: 'commit_then_drop' }] },
    ];
    const inprocess = await run('inprocess', 'raw', list);
    // Every run meets the tool's own failure on the faulted tool, and no fault, in process.
    for (const r of inprocess.results) expect(r.calls.filter((c) => !c.ok).length).toBeGreaterThan(0);
    expect(inprocess.results.flatMap((r) => r.calls.filter((c) => c.fault !== undefined))).toEqual([]);
    for (const transport of WIRES) {
      const db = join(dir, `not-applied-${transport}.db`);
      const wire = await run(transport, 'raw', list, db);
      // The answer quotes the error code, which may differ on the wire (see observable).
      const same = (r: ScenarioResult) => ({ ...(observable(r) as object), answer: undefined });
      expect(wire.results.map(same)).toEqual(inprocess.results.map(same));
      const store = createSqliteStore({ path: db });
      try {
        for (const result of wire.results) {
          const records = await store.query({ traceId: result.traceId! });
          expect(records.length).toBe(result.calls.length);
          for (const record of records) {
            expect(record.fault).toBeNull();
            const rule = list.find((s) => s.id === result.scenarioId)!.faults[0]!;
            if (record.tool_name === rule.tool) expect(record.context_snapshot['fault_not_applied']).toMatchObject({ kind: rule.fault });
          }
        }
      } finally {
        await store.close();
      }
    }
  },
  SLOW,
);

it(
  'assisted mode over http: the runtime retries through the proxy, and the scores match in process',
  async () => {
    const [inprocess, wire] = [await run('inprocess', 'assisted', subset), await run('http', 'assisted', subset)];
    expect(wire.results.map((r) => r.scores)).toEqual(inprocess.results.map((r) => r.scores));
    expect(wire.results.map((r) => r.absorbedFailures)).toEqual(inprocess.results.map((r) => r.absorbedFailures));
  },
  SLOW,
);

it(
  'the same seed gives the same results over the wire',
  async () => {
    const list = subset.filter((_, i) => i % 4 === 0);
    for (const transport of WIRES) {
      const once = await run(transport, 'raw', list);
      const twice = await run(transport, 'raw', list);
      expect(JSON.stringify(twice.results)).toBe(JSON.stringify(once.results));
    }
  },
  SLOW,
);

const VALIDITY = 'robust >= 0.95 on every dimension, naive <= 0.5 on loop avoidance, idempotency safety and semantic verification';

it(
  `the whole default suite over http: ${VALIDITY}`,
  async () => {
    expectValid(await run('http', 'raw', scenarios));
  },
  2 * SLOW,
);

// The SDK's Streamable HTTP costs several times a plain request per call: minutes for 532 runs.
describe.skipIf(process.env['FAULTLINE_SLOW_TESTS'] !== '1')('SLOW, only with FAULTLINE_SLOW_TESTS=1', () => {
  it(
    `the whole default suite over mcp: ${VALIDITY}`,
    async () => {
      expectValid(await run('mcp', 'raw', scenarios));
    },
    4 * SLOW,
  );
});
