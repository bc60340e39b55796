// A small measuring harness shared by the benchmarks.
//
// Why not tinybench: it times every iteration with performance.now(), and at sub-microsecond
// costs that timer overhead dominates. Here each sample times a batch of calls and divides, and
// the reported figure is the median over samples, which is what matters on a small, noisy machine.

/** `npm run perf -- --quick`: a fifth of the samples and warm-up, one round (the shape, not the figures). */
export const QUICK = process.env.FAULTLINE_PERF_QUICK === '1';

/** Runs `fn` (sync or async) in batches; returns ns/op percentiles over samples. */
export async function measure(fn, options = {}) {
  let { batch = 1000, samples = 150, warmupBatches = 30 } = options;
  if (QUICK) [batch, samples, warmupBatches] = [Math.max(10, Math.ceil(batch / 5)), Math.max(10, Math.ceil(samples / 5)), Math.max(2, Math.ceil(warmupBatches / 5))];
  for (let i = 0; i < warmupBatches; i++) for (let j = 0; j < batch; j++) await fn();
  const perOp = [];
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    for (let j = 0; j < batch; j++) await fn();
    perOp.push(Number(process.hrtime.bigint() - start) / batch);
  }
  perOp.sort((a, b) => a - b);
  const q = (p) => perOp[Math.min(perOp.length - 1, Math.floor(p * perOp.length))];
  return { medianNs: q(0.5), p95Ns: q(0.95), minNs: perOp[0], opsPerSec: 1e9 / q(0.5) };
}

/** Interleaves contenders over several rounds so drift in machine load hits all of them alike. */
export async function compare(contenders, options = {}, rounds = 3) {
  if (QUICK) rounds = 1;
  const results = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(contenders)) results[name].push(await measure(fn, options));
  }
  // Best-of-rounds median: the round least disturbed by other work on the machine.
  return Object.fromEntries(Object.entries(results).map(([k, rs]) => [k, rs.reduce((a, b) => (b.medianNs < a.medianNs ? b : a))]));
}

export function fmtNs(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} us` : `${ns.toFixed(0)} ns`;
}

export function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
