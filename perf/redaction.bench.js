// Redaction cost per record: `redactor.record(r)` (every free-text field, then the scrub of what
// it found) over a mix of records like those the runtime writes, against the same call in a base
// build of the package (FAULTLINE_PERF_BASE_DIST: the dist folder of a build of the base commit),
// in the same run, and against JSON.stringify of the same record as a yardstick.
//
//   npm run build && FAULTLINE_PERF_BASE_DIST=/path/to/base/dist node perf/run.js redaction
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createRedactor } from '../dist/index.js';
import { makeRecord } from '../dist/testing.js';
import { compare, fmtNs, table } from './harness.js';

/** Records of the kinds the runtime writes, most of them with nothing to redact. */
function records() {
  const clean = makeRecord({
    input_params: { city: 'Paris', unit: 'celsius', days: 3 },
    raw_output: JSON.stringify({ city: 'Paris', temperature: 18, condition: 'cloudy', forecast: Array.from({ length: 5 }, (_, d) => ({ day: d, high: 20 + d, low: 10 + d })) }),
    context_snapshot: { intent: 'weather for the trip next week', session_id: 'sess-42', agent: 'planner' },
  });
  const failure = makeRecord({
    status: 'failure',
    failure_type: 'not_found',
    error_code: 'HTTP_404',
    input_params: { order_id: 'ORD-20391', include: ['items', 'shipping'] },
    raw_output: JSON.stringify({ error: { code: 'not_found', message: 'order ORD-20391 does not exist' } }),
    error_message: 'HTTP 404: order ORD-20391 does not exist',
    error_stack: 'Error: HTTP 404\n    at call (/app/tool.js:10:5)\n    at run (/app/runtime.js:3:1)',
    context_snapshot: { intent: 'check the status of my last order', session_id: 'sess-43' },
    feedback: { action: 'skip', hint: 'get_order failed (HTTP_404): the order does not exist.', retryable: false, retry_after_ms: null },
  });
  const echoed = makeRecord({
    status: 'failure',
    input_params: { headers: { 'x-api-key': 'k_live_4f9Q2mZx7Lp0Vb6N' }, query: 'orders since monday' },
    raw_output: JSON.stringify({ error: { message: 'Invalid API key provided: k_live_4f9Q2mZx7Lp0Vb6N' } }),
    error_message: 'HTTP 401: Invalid API key provided: k_live_4f9Q2mZx7Lp0Vb6N',
    context_snapshot: { intent: 'list my orders', session_id: 'sess-44' },
    feedback: { action: 'refresh_credential', hint: 'list_orders failed (HTTP_401): Invalid API key provided: k_live_4f9Q2mZx7Lp0Vb6N', retryable: false, retry_after_ms: null },
  });
  const payment = makeRecord({
    input_params: { customer: 'cus_8821', card_token: 'tok_1Nq2Xw3Vb4Nm5Lp6', amount: 4200, currency: 'EUR' },
    raw_output: JSON.stringify({ id: 'ch_3MqLx2', status: 'succeeded', receipt_email: 'ann@example.com' }),
    context_snapshot: { intent: 'pay the invoice', session_id: 'sess-45' },
  });
  const config = makeRecord({
    input_params: { path: 'deploy/app.yaml' },
    raw_output: `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: registry.example.com/app@sha256:59932001997786b176dec02bd16128ee9ea83628f0eb1acf0da84c06a50c5b2c\n          env:\n            - name: LOG_LEVEL\n              value: info\n            - name: DB_PASSWORD\n              value: "${'{{ .Values.db.password }}'}"\n`.repeat(4),
  });
  // Four clean and failure records for each one with a secret, as in the runtime workload.
  return [clean, failure, clean, payment, failure, clean, echoed, clean, failure, config];
}

export async function run() {
  const base = process.env.FAULTLINE_PERF_BASE_DIST;
  const contenders = {};
  const mix = records();
  let i = 0;
  const next = () => mix[i++ % mix.length];
  const redactor = createRedactor();
  contenders.new = () => redactor.record(next());
  if (base !== undefined) {
    const baseline = await import(pathToFileURL(join(base, 'index.js')).href);
    const baseRedactor = baseline.createRedactor();
    contenders.base = () => baseRedactor.record(next());
  }
  contenders.stringify = () => JSON.stringify(next());
  const results = await compare(contenders, { batch: 1000, samples: 60, warmupBatches: 20 }, 5);
  const rows = Object.entries(results).map(([name, r]) => [
    name === 'new' ? 'this build: redactor.record(r)' : name === 'base' ? 'base build: redactor.record(r)' : 'JSON.stringify(r) (yardstick)',
    fmtNs(r.medianNs),
    fmtNs(r.p95Ns),
    results.base === undefined ? '-' : `${(r.medianNs / results.base.medianNs).toFixed(2)}x`,
  ]);
  return {
    title: 'Redaction per record (a mix of 10 runtime-like records)',
    markdown: table(['contender', 'median / record', 'p95', 'vs base'], rows),
  };
}
