/**
 * A real predictor data set: a runtime whose tools fail for reasons a pre-flight model can see
 * (fault plan rules on argument values, a tool-side limit, a tool that stays broken for the rest
 * of a trace once it broke) and for reasons it cannot (a random connection refusal), recorded
 * into a SQLite file and turned into trajectories and predictor rows as the export makes them.
 */
import { join } from 'node:path';
import { createVirtualClock } from '../core/clock.js';
import { seededRandom } from '../core/seeded-random.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { exportPredictor, type PredictorRow } from '../dataset/predictor-exporter.js';
import { createFaultPlan } from '../faults/plan.js';
import type { FaultPlanSpec, FaultRule } from '../faults/plan-spec.js';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime } from '../runtime/runtime.js';
import type { RuntimeOptions } from '../runtime/types.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { trajectoriesFromStore } from '../trajectory/from-records.js';

export const T0 = Date.UTC(2026, 2, 29, 9, 0, 0);
const BAD_DATES = ['2026-02-30', '2026-13-01', '2026-04-31'];
const CITIES = ['Paris', 'Lyon', 'Berlin', 'Madrid', 'Rome'];

/** The fault plan: bad dates answered 400, first class searches mostly 503, some refused connections. */
export const predictorFaultSpec: FaultPlanSpec = {
  version: 1,
  seed: 5,
  rules: [
    ...BAD_DATES.map((date, i): FaultRule => ({ id: `bad-date-${i}`, tool: 'get_weather', when: { date }, fault: 'http_status', params: { status: 400, message: 'invalid date' } })),
    { id: 'first-class-down', tool: 'search_flights', when: { cabin: 'first' }, trigger: { probability: 0.85 }, fault: 'http_status', params: { status: 503 } },
    { id: 'flaky-db', tool: 'query_db', trigger: { probability: 0.12 }, fault: 'connection_refused' },
  ],
};

const httpError = (status: number, message: string): Error => Object.assign(new Error(message), { status });

/** The tools: book_hotel refuses stays over 14 nights; get_quote breaks for good in some traces. */
export function predictorTools() {
  const broken = new Set<string>();
  const tool = (name: string, execute: (args: Record<string, unknown>, traceId: string) => unknown) =>
    defineTool({ name, description: name, input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, execute: async (args: Record<string, unknown>, ctx) => execute(args, ctx.traceId) });
  return [
    tool('get_weather', (a) => ({ city: a['city'], temperature: 18 })),
    tool('search_flights', (a) => ({ flights: [{ to: a['to'], cabin: a['cabin'] }] })),
    tool('book_hotel', (a) => {
      if (typeof a['nights'] === 'number' && a['nights'] > 14) throw httpError(422, 'stays are limited to 14 nights');
      return { booked: true };
    }),
    tool('get_quote', (a, traceId) => {
      if (broken.has(traceId)) throw httpError(502, 'quote service unavailable');
      if (a['symbol'] === 'ACME' && traceId.endsWith('3')) broken.add(traceId);
      return { price: 10 };
    }),
    tool('query_db', (a) => ({ rows: [a['q']] })),
  ];
}

type Agent = ReturnType<ReturnType<typeof createRuntime>['session']>;

/** One trace's calls, drawn from `random`. */
async function runTrace(s: Agent, random: () => number): Promise<void> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const calls = 4 + Math.floor(random() * 5);
  for (let c = 0; c < calls; c++) {
    const which = Math.floor(random() * 5);
    if (which === 0) await s.execute('get_weather', { city: pick(CITIES), date: random() < 0.25 ? pick(BAD_DATES) : `2026-04-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`, unit: pick(['celsius', 'fahrenheit']) });
    else if (which === 1) await s.execute('search_flights', { from: 'CDG', to: pick(CITIES), cabin: random() < 0.3 ? 'first' : 'economy' });
    else if (which === 2) await s.execute('book_hotel', { city: pick(CITIES), nights: 1 + Math.floor(random() * 20) });
    else if (which === 3) await s.execute('get_quote', { symbol: random() < 0.5 ? 'ACME' : 'GLOBEX' });
    else await s.execute('query_db', { q: pick(['hotels', 'flights', 'users']) });
  }
}

/** Runs `traces` sessions through a runtime recording into `dbPath`; trace ids `trace-<n>`. */
export async function recordPredictorRuns(dbPath: string, traces: number, extra: Partial<RuntimeOptions> = {}): Promise<string[]> {
  const clock = createVirtualClock({ startMs: T0 });
  const rt = createRuntime({
    tools: predictorTools(),
    clock,
    faults: createFaultPlan(predictorFaultSpec, { clock }),
    seed: 7,
    breaker: { failureThreshold: 10_000 },
    store: `sqlite:${dbPath}`,
    ...extra,
  });
  const random = seededRandom(11);
  const ids: string[] = [];
  for (let t = 0; t < traces; t++) {
    const traceId = `trace-${t}`;
    ids.push(traceId);
    await runTrace(rt.session({ traceId, agent: 'scripted' }), random);
    await clock.sleep(90_000);
  }
  await rt.close();
  return ids;
}

/** The recorded traces as trajectories, stored back into the same file (as `export` reads them). */
export async function storeTrajectories(dbPath: string, traceIds: readonly string[]): Promise<Trajectory[]> {
  const store = createSqliteStore({ path: dbPath });
  const trajectories = await trajectoriesFromStore(store, traceIds);
  await store.insertTrajectories(trajectories);
  await store.close();
  return trajectories;
}

/** A recorded data set's predictor rows, as `faultline export --format predictor` writes them. */
export async function predictorDataset(dir: string, traces = 160): Promise<{ dbPath: string; rows: PredictorRow[]; trajectories: Trajectory[] }> {
  const dbPath = join(dir, 'predictor.db');
  const ids = await recordPredictorRuns(dbPath, traces);
  const trajectories = await storeTrajectories(dbPath, ids);
  return { dbPath, rows: trajectories.flatMap((t) => exportPredictor(t).examples), trajectories };
}
