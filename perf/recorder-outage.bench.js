// The recorder during a store outage: memory stays bounded (records go to the spool on disk),
// and everything arrives once the store is back.
//
// A SQLite store behind a wrapper that throws on every insert while "down". The recorder runs
// with its defaults (batchSize 512, maxQueue 50 000, spool on) except overflow 'block' (so the
// feed is paced by the recorder and nothing is dropped) and a probe backoff capped at 1 s (so the
// time to notice the store is back stays short and predictable). Sequence:
// 1. 10 000 records while the store is up (so the recorder knows a stored record to probe with);
// 2. the store goes down; N records (synthetic, ~0.9 KB as JSON) are fed, sampling memory, the
//    in-memory queue and the spool size on disk every 100 000 records (plus heap/RSS peaks on a
//    20 ms timer);
// 3. the store comes back; time until every record was replayed from the spool, then the count in
//    the store is checked, and the rollup totals (a record replayed twice would count twice there).
// The measurement runs in a child process of its own (this file with --child), so memory figures
// start from a fresh process rather than from whatever the benchmarks before it left behind.
// FAULTLINE_PERF_OUTAGE_N sets N (default 1 000 000).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRecorder, createSqliteStore } from '../dist/store.js';
import { table } from './harness.js';
import { syntheticRecords } from './workload.js';

const N = Number(process.env.FAULTLINE_PERF_OUTAGE_N ?? 1_000_000);
const PRELOAD = 10_000;
const SAMPLE_EVERY = 100_000;

const gc = globalThis.gc ?? (() => undefined);
const mb = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function dirBytes(dir) {
  let total = 0;
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    try {
      total += statSync(join(dir, name)).size;
    } catch {
      // replayed and deleted meanwhile
    }
  }
  return total;
}

function liveHeap() {
  gc();
  return process.memoryUsage().heapUsed;
}

/** The measurement itself (in the child process); returns the figures. */
async function measure() {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-perf-outage-'));
  const spoolDir = join(dir, 'spool');
  const real = createSqliteStore({ path: join(dir, 'outage.db') });
  let down = false;
  let failedInserts = 0;
  const store = {
    kind: real.kind,
    async insert(records) {
      if (down) {
        failedInserts++;
        throw new Error('store unavailable (simulated outage)');
      }
      return real.insert(records);
    },
    get: (id) => real.get(id),
    query: (q) => real.query(q),
    count: (q) => real.count(q),
    toolStats: (f) => real.toolStats(f),
    failureBreakdown: (f) => real.failureBreakdown(f),
    hourly: (f) => real.hourly(f),
    signatures: (f) => real.signatures(f),
    close: () => real.close(),
  };
  const errors = [];
  const recorder = createRecorder({
    store,
    spool: { path: join(spoolDir, 'outage.jsonl') },
    overflow: 'block',
    retry: { initialDelayMs: 200, maxDelayMs: 1000 },
    onError: (e) => errors.push(e instanceof Error ? e.message : String(e)),
  });

  const now = Date.now();
  const source = syntheticRecords(PRELOAD + N, { fromMs: now - 3_600_000, untilMs: now });
  const feed = async (count) => {
    for (let i = 0; i < count; i++) {
      const wait = recorder.enqueue(source.next().value);
      if (wait !== undefined) await wait;
    }
  };

  const samples = [];
  let peakHeap = 0;
  let peakRss = 0;
  const peaks = setInterval(() => {
    const m = process.memoryUsage();
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    if (m.rss > peakRss) peakRss = m.rss;
  }, 20);
  let replayS;
  let stored;
  let rolledUp;
  let feedS;
  let baseline;
  let afterOutage;
  try {
    await feed(PRELOAD);
    await recorder.flush();
    baseline = { heap: liveHeap(), ...process.memoryUsage() };
    peakHeap = baseline.heapUsed;
    peakRss = baseline.rss;

    down = true;
    const feedStart = process.hrtime.bigint();
    for (let fed = 0; fed < N; ) {
      const step = Math.min(SAMPLE_EVERY, N - fed);
      await feed(step);
      fed += step;
      const m = process.memoryUsage();
      const st = recorder.stats();
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
      if (m.rss > peakRss) peakRss = m.rss;
      samples.push({ fed, heapUsed: m.heapUsed, live: liveHeap(), rss: m.rss, queued: st.queued, spooled: st.spooled, spoolBytes: dirBytes(spoolDir), dropped: st.dropped });
    }
    await recorder.flush();
    feedS = seconds(feedStart);
    afterOutage = { stats: recorder.stats(), spoolBytes: dirBytes(spoolDir), live: liveHeap() };

    down = false;
    const upStart = process.hrtime.bigint();
    const total = PRELOAD + N;
    for (;;) {
      const st = recorder.stats();
      if (st.written + st.replayed >= total && st.pendingSpoolFiles === 0) break;
      if (seconds(upStart) > 300) throw new Error(`replay stalled: ${JSON.stringify(st)}`);
      await sleep(20);
    }
    replayS = seconds(upStart);
    await recorder.close();
    stored = await real.count();
    // The primary key rules out duplicate rows; the rollups would show a record counted twice.
    rolledUp = (await real.toolStats({ since: now - 7_200_000, until: Date.now() + 3_600_000 })).reduce((sum, t) => sum + t.total, 0);
  } finally {
    clearInterval(peaks);
    await recorder.close();
    await real.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const final = recorder.stats();
  return { samples, baseline: { heap: baseline.heap, rss: baseline.rss }, peakHeap, peakRss, feedS, failedInserts, afterOutage, replayS, stored, rolledUp, final, errors: [...new Set(errors)].slice(0, 2), errorCount: errors.length };
}

/** Runs `measure` in a fresh Node process with --expose-gc. */
function inChild() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`recorder-outage child exited ${code}`));
      else resolve(JSON.parse(out));
    });
  });
}

export async function run() {
  const { samples, baseline, peakHeap, peakRss, feedS, failedInserts, afterOutage, replayS, stored, rolledUp, final, errors, errorCount } = await inChild();
  const rows = samples.map((s) => [s.fed.toLocaleString('en-US'), mb(s.heapUsed), mb(s.live), mb(s.rss), s.queued.toLocaleString('en-US'), s.spooled.toLocaleString('en-US'), mb(s.spoolBytes), s.dropped]);
  const peakLive = Math.max(...samples.map((s) => s.live));
  const total = PRELOAD + N;
  return {
    title: `Recorder during a store outage: ${N.toLocaleString('en-US')} records with every insert failing`,
    markdown: [
      table(['records fed while down', 'heapUsed', 'live heap (after GC)', 'RSS', 'queued in memory', 'spooled', 'spool on disk', 'dropped'], rows),
      '',
      `Baseline (store up, ${PRELOAD.toLocaleString('en-US')} records written): live heap ${mb(baseline.heap)}, RSS ${mb(baseline.rss)}.`,
      `Peak while down (20 ms sampling): heapUsed ${mb(peakHeap)} (+${mb(peakHeap - baseline.heap)} over the baseline live heap), live heap at checkpoints ${mb(peakLive)} (+${mb(peakLive - baseline.heap)}), RSS ${mb(peakRss)} (+${mb(peakRss - baseline.rss)}).`,
      `Feeding ${N.toLocaleString('en-US')} records into the outage took ${feedS.toFixed(1)} s (${Math.round(N / feedS).toLocaleString('en-US')} records/s, spool appends fsync'd per batch); ${failedInserts.toLocaleString('en-US')} failed insert attempts (probes); after the last flush: ${afterOutage.stats.queued} queued, ${afterOutage.stats.spooled.toLocaleString('en-US')} spooled, ${mb(afterOutage.spoolBytes)} on disk, live heap ${mb(afterOutage.live)}.`,
      `Store back: everything replayed ${replayS.toFixed(1)} s later (probe backoff capped at 1 s; ${Math.round(final.replayed / replayS).toLocaleString('en-US')} records/s replay incl. detection). Store holds ${stored.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} records (${stored === total ? 'all arrived' : 'MISSING RECORDS'}), rollups count ${rolledUp.toLocaleString('en-US')} (${rolledUp === stored ? 'none twice' : 'MISMATCH'}); recorder: written ${final.written.toLocaleString('en-US')}, replayed ${final.replayed.toLocaleString('en-US')}, dropped ${final.dropped}, rejected ${final.rejected}, malformed spool lines ${final.malformedSpoolLines}.`,
      `Errors reported through onError: ${errorCount} (${errors.join('; ')}). Measured in a fresh Node process (--expose-gc).`,
    ].join('\n'),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--child')) {
  process.stdout.write(JSON.stringify(await measure()));
}
