// SQLite recorder throughput through the full path, side by side with raw better-sqlite3.
//
// Full path: `rt.execute` of the workload tools (perf/workload.js: 80% successes, 20% failures and
// rejections, sessions with an intent, a payment token to redact) on the system clock -> record
// built and redacted by the runtime -> batching recorder (default batch size 512, spool on, overflow
// 'block' so nothing is dropped) -> `createSqliteStore` (one transaction per batch: rows, four
// secondary indexes, rollups). Timed from the first call until `rt.close()` resolves.
//
// Raw: the same kind of rows (records produced by the same workload, generated before timing)
// inserted with one prepared better-sqlite3 statement into a plain table with the same columns
// (execution_id TEXT PRIMARY KEY, no other index), one transaction per 1000 rows, same pragmas as
// the store (WAL, synchronous NORMAL, 16 KB pages). JSON columns are serialized inside the timing,
// as any insert of records must.
//
// Both for (a) UUIDv7 ids, as the runtime mints them, and (b) random UUIDv4 ids (crypto.randomUUID:
// the full path swaps the id in `onRecord`, which runs before the record is enqueued).
//
// Diagnostic rows split the full path: the runtime alone (records built and redacted, kept in
// an array: the run that makes the raw contender's rows), `store.insert` alone on pre-built
// records in batches of 512, and the runtime feeding the store through a minimal sink that only
// sends full batches of 512 (what the recorder could reach). The full path also reports how many
// records the recorder sent per `store.insert`.
//
// Fresh temporary database files for every run; contenders interleaved over 3 rounds; the figure
// reported is the best round (the least disturbed by other work on the machine); all rounds are
// shown. FAULTLINE_PERF_RECORDER_N sets records per run (default 200 000);
// FAULTLINE_PERF_RECORDER_CONCURRENCY the number of concurrent agent sessions (default 4).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { createRuntime, createSqliteStore } from '../dist/index.js';
import { table } from './harness.js';
import { drive, workloadTools } from './workload.js';

const N = Number(process.env.FAULTLINE_PERF_RECORDER_N ?? 200_000);
const CONCURRENCY = Number(process.env.FAULTLINE_PERF_RECORDER_CONCURRENCY ?? 4);
const ROUNDS = 3;
const RAW_TXN_ROWS = 1000;
const STORE_BATCH = 512;

const COLUMNS = [
  'execution_id', 'trace_id', 'step_index', 'tool_name', 'status', 'failure_stage', 'failure_category', 'failure_type',
  'error_code', 'input_params', 'params_hash', 'raw_output', 'output_length', 'error_message', 'error_stack', 'duration_ms',
  'retry_count', 'attempts', 'breaker_state', 'idempotent', 'fault', 'feedback', 'recovery', 'fallback', 'context_snapshot',
  'created_at', 'created_ms', 'schema_version', 'summary_only',
];

const json = (v) => (v === null || v === undefined ? null : JSON.stringify(v));
function rowOf(r) {
  return [
    r.execution_id, r.trace_id, r.step_index, r.tool_name, r.status, r.failure_stage, r.failure_category, r.failure_type,
    r.error_code, json(r.input_params), r.params_hash, r.raw_output, r.output_length, r.error_message, r.error_stack, r.duration_ms,
    r.retry_count, JSON.stringify(r.attempts), r.breaker_state, r.idempotent ? 1 : 0, json(r.fault), json(r.feedback), r.recovery,
    json(r.fallback), JSON.stringify(r.context_snapshot), r.created_at, Date.parse(r.created_at), r.schema_version, r.summary_only ? 1 : 0,
  ];
}

const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

function tempDir() {
  return mkdtempSync(join(tmpdir(), 'faultline-perf-recorder-'));
}

/** Passes everything to `store`, counting insert calls (to report the batch sizes the recorder sends). */
function countingStore(store) {
  const counts = { calls: 0, rows: 0 };
  const wrapped = {
    kind: store.kind,
    insert(records) {
      counts.calls++;
      counts.rows += records.length;
      return store.insert(records);
    },
    get: (id) => store.get(id),
    query: (q) => store.query(q),
    count: (q) => store.count(q),
    toolStats: (f) => store.toolStats(f),
    failureBreakdown: (f) => store.failureBreakdown(f),
    hourly: (f) => store.hourly(f),
    signatures: (f) => store.signatures(f),
    close: () => store.close(),
  };
  return { wrapped, counts };
}

/** The full path; returns { rate, rowsPerTxn }. */
async function fullPath(v4) {
  const dir = tempDir();
  const store = createSqliteStore({ path: join(dir, 'full.db') });
  try {
    const { wrapped, counts } = countingStore(store);
    const rt = createRuntime({
      tools: workloadTools(),
      store: wrapped,
      recording: { spool: { path: join(dir, 'spool', 'bench.jsonl') }, overflow: 'block' },
      ...(v4 ? { onRecord: (r) => void (r.execution_id = randomUUID()) } : {}),
    });
    const start = process.hrtime.bigint();
    await drive(rt, N, { concurrency: CONCURRENCY });
    await rt.close();
    const s = seconds(start);
    const stored = await store.count();
    if (stored !== N) throw new Error(`full path stored ${stored} of ${N} records`);
    return { rate: N / s, rowsPerTxn: counts.rows / counts.calls };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the recorder could reach: the same runtime and store, with a minimal sink in front that
 * only ever sends full batches of 512 (no spool, no timers). Returns records/s.
 */
async function fullBatchesOnly() {
  const dir = tempDir();
  const store = createSqliteStore({ path: join(dir, 'ideal.db') });
  try {
    let queue = [];
    const sink = {
      enqueue(record) {
        queue.push(record);
        if (queue.length >= STORE_BATCH) {
          const batch = queue;
          queue = [];
          void store.insert(batch);
        }
        return undefined;
      },
      async close() {
        if (queue.length > 0) await store.insert(queue);
        queue = [];
      },
    };
    const rt = createRuntime({ tools: workloadTools(), recorder: sink });
    const start = process.hrtime.bigint();
    await drive(rt, N, { concurrency: CONCURRENCY });
    await rt.close();
    const s = seconds(start);
    const stored = await store.count();
    if (stored !== N) throw new Error(`full-batch sink stored ${stored} of ${N} records`);
    return N / s;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The workload's records, built by a runtime with a sink that keeps them (outside the timing of
 * the inserts). Also times the runtime alone: records built and redacted, no store.
 */
async function workloadRecords(v4) {
  const records = [];
  const rt = createRuntime({ tools: workloadTools(), recorder: { enqueue: (r) => void records.push(r) } });
  const start = process.hrtime.bigint();
  await drive(rt, N, { concurrency: CONCURRENCY });
  await rt.close();
  const runtimeRate = N / seconds(start);
  if (v4) for (const r of records) r.execution_id = randomUUID();
  return { records, runtimeRate };
}

/** Raw better-sqlite3 inserts of `records`; returns records/s. */
function rawInsert(records) {
  const dir = tempDir();
  const db = new Database(join(dir, 'raw.db'));
  try {
    db.pragma('page_size = 16384');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE tool_executions (execution_id TEXT PRIMARY KEY, ${COLUMNS.slice(1).join(', ')})`);
    const insert = db.prepare(`INSERT INTO tool_executions (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`);
    const insertMany = db.transaction((from, to) => {
      for (let i = from; i < to; i++) insert.run(rowOf(records[i]));
    });
    const start = process.hrtime.bigint();
    for (let i = 0; i < records.length; i += RAW_TXN_ROWS) insertMany(i, Math.min(i + RAW_TXN_ROWS, records.length));
    const s = seconds(start);
    const stored = db.prepare('SELECT count(*) AS n FROM tool_executions').get().n;
    if (stored !== records.length) throw new Error(`raw insert stored ${stored} of ${records.length}`);
    return records.length / s;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `store.insert` alone on pre-built records; returns records/s. */
async function storeOnly(records) {
  const dir = tempDir();
  const store = createSqliteStore({ path: join(dir, 'store.db') });
  try {
    const start = process.hrtime.bigint();
    for (let i = 0; i < records.length; i += STORE_BATCH) await store.insert(records.slice(i, i + STORE_BATCH));
    return records.length / seconds(start);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Best of the rounds: the run least disturbed by other work on the (shared, noisy) machine. */
const best = (xs) => Math.max(...xs);
const fmtRate = (r) => `${Math.round(r).toLocaleString('en-US')}/s`;
const usPer = (r) => `${(1e6 / r).toFixed(2)} us`;

export async function run() {
  const results = { fullV7: [], rawV7: [], fullV4: [], rawV4: [], storeV7: [], runtime: [], ideal: [] };
  const batches = { fullV7: [], fullV4: [] };
  // Warm-up: JIT the runtime before the first timed run.
  {
    const rt = createRuntime({ tools: workloadTools(), recorder: { enqueue: () => undefined } });
    await drive(rt, Math.min(N, 30_000), { concurrency: CONCURRENCY });
    await rt.close();
  }
  for (let round = 0; round < ROUNDS; round++) {
    let full = await fullPath(false);
    results.fullV7.push(full.rate);
    batches.fullV7.push(full.rowsPerTxn);
    let { records, runtimeRate } = await workloadRecords(false);
    results.runtime.push(runtimeRate);
    results.rawV7.push(rawInsert(records));
    results.storeV7.push(await storeOnly(records));
    records = null;
    full = await fullPath(true);
    results.fullV4.push(full.rate);
    batches.fullV4.push(full.rowsPerTxn);
    records = (await workloadRecords(true)).records;
    results.rawV4.push(rawInsert(records));
    records = null;
    results.ideal.push(await fullBatchesOnly());
  }
  const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, best(v)]));
  const rounds = (k) => results[k].map((r) => `${Math.round(r / 1000)}k`).join(' / ');
  const perTxn = (k) => median(batches[k]).toFixed(1);
  const vs = (a, b) => `${(a / b).toFixed(2)}x`;
  const rows = [
    ['(a) UUIDv7', 'full path: runtime -> redact -> recorder -> SQLite store', fmtRate(m.fullV7), usPer(m.fullV7), rounds('fullV7'), perTxn('fullV7'), vs(m.fullV7, m.rawV7)],
    ['(a) UUIDv7', 'raw better-sqlite3, plain table', fmtRate(m.rawV7), usPer(m.rawV7), rounds('rawV7'), RAW_TXN_ROWS, '1.00x'],
    ['(b) UUIDv4', 'full path: runtime -> redact -> recorder -> SQLite store', fmtRate(m.fullV4), usPer(m.fullV4), rounds('fullV4'), perTxn('fullV4'), vs(m.fullV4, m.rawV4)],
    ['(b) UUIDv4', 'raw better-sqlite3, plain table', fmtRate(m.rawV4), usPer(m.rawV4), rounds('rawV4'), RAW_TXN_ROWS, '1.00x'],
    ['diagnostic', 'runtime alone (records built + redacted, kept in an array)', fmtRate(m.runtime), usPer(m.runtime), rounds('runtime'), '-', vs(m.runtime, m.rawV7)],
    ['diagnostic', 'store.insert alone (pre-built records, UUIDv7)', fmtRate(m.storeV7), usPer(m.storeV7), rounds('storeV7'), STORE_BATCH, vs(m.storeV7, m.rawV7)],
    ['diagnostic', 'runtime -> sink sending only full batches -> SQLite store', fmtRate(m.ideal), usPer(m.ideal), rounds('ideal'), STORE_BATCH, vs(m.ideal, m.rawV7)],
  ];
  const okRate = m.fullV7 >= 100_000;
  const okRatio = m.fullV7 / m.rawV7 >= 0.8;
  return {
    title: `SQLite recorder: ${N.toLocaleString('en-US')} records through the full path vs raw better-sqlite3`,
    markdown: [
      table(['ids', 'contender', 'records/s (best of 3)', 'per record', 'rounds', 'rows per transaction', 'vs raw (same ids)'], rows),
      '',
      `${CONCURRENCY} concurrent agent sessions; 80% successes / 20% failures and rejections; system clock; fresh temp DB per run; contenders interleaved over ${ROUNDS} rounds, best round reported (all rounds shown); rows per transaction: median.`,
      `Full path (UUIDv7): ${fmtRate(m.fullV7)} (goal >= 100,000/s: ${okRate ? 'met' : 'NOT met'}), ${vs(m.fullV7, m.rawV7)} raw (goal >= 0.8x: ${okRatio ? 'met' : 'NOT met'}); UUIDv4: ${vs(m.fullV4, m.rawV4)} raw.`,
      `The recorder sent ${perTxn('fullV7')} records per store.insert on average (batchSize is 512): each insert is one transaction, so commits, not rows, set the pace.`,
      `Runtime and store share the one JS thread, so even with full batches the path costs about runtime + store.insert = ${usPer(m.runtime)} + ${usPer(m.storeV7)} = ${(1e6 / m.runtime + 1e6 / m.storeV7).toFixed(2)} us per record (measured with full batches: ${usPer(m.ideal)}).`,
    ].join('\n'),
  };
}
