import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { AggregationTemporality, DataPointType, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../faults/plan.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { createRuntime } from '../runtime/runtime.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { collect } from '../trajectory/importers/collect.test-helpers.js';
import { importOtel } from '../trajectory/importers/otel.js';
import { otelRecordListener } from './otel.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => {
  contextManager.disable();
  context.disable();
});

let providers: BasicTracerProvider[] = [];
afterEach(async () => {
  for (const p of providers) await p.shutdown();
  providers = [];
});

function inMemoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  providers.push(provider);
  return { tracer: provider.getTracer('faultline-test'), exporter };
}

function catalogRuntime(onRecord: (r: ToolExecutionRecord) => void, rules: Parameters<typeof createFaultPlan>[0]['rules'] = []) {
  const clock = createVirtualClock({ startMs: DEFAULT_CATALOG_NOW });
  const { tools } = createToolCatalog({ seed: 3, only: ['get_weather', 'get_order', 'create_order'] });
  return createRuntime({ tools, clock, seed: 1, onRecord, faults: createFaultPlan({ version: 1, seed: 1, rules }, { clock }) });
}

describe('otelRecordListener: records as GenAI execute_tool spans', () => {
  it('gives each record a span with the semconv attributes, its timing, attempts as events and an ERROR status on failure', async () => {
    const { tracer, exporter } = inMemoryTracer();
    const records: ToolExecutionRecord[] = [];
    const listener = otelRecordListener({ tracer });
    const rt = catalogRuntime((r) => (records.push(r), listener(r)), [{ tool: 'get_weather', trigger: 'first_call_only', fault: 'http_status', params: { status: 503 } }]);
    const s = rt.session({ agent: 'a' });
    await s.execute('get_weather', { city: 'Paris', date: '2026-03-30' }, { intent: 'weather in Paris' });
    await s.execute('get_order', { order_id: 'ORD-99999' });
    await rt.close();

    const spans = exporter.getFinishedSpans();
    expect(spans.map((sp) => sp.name)).toEqual(['execute_tool get_weather', 'execute_tool get_order']);
    const [weather, order] = spans as [(typeof spans)[0], (typeof spans)[0]];
    expect(weather.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': records[0]!.execution_id,
      'faultline.status': 'success',
      'faultline.retry_count': 1,
      'faultline.fault.kind': 'http_status',
      'faultline.recovery': 'auto_recovered',
      'faultline.intent': 'weather in Paris',
      'gen_ai.tool.call.arguments': '{"city":"Paris","date":"2026-03-30"}',
    });
    expect(weather.status.code).toBe(0);
    expect(weather.events.map((e) => [e.name, e.attributes?.['faultline.outcome'], e.attributes?.['faultline.error_code']])).toEqual([
      ['faultline.attempt', 'failure', 'HTTP_503'],
      ['faultline.attempt', 'success', undefined],
    ]);
    const startMs = weather.startTime[0] * 1000 + weather.startTime[1] / 1e6;
    const endMs = weather.endTime[0] * 1000 + weather.endTime[1] / 1e6;
    expect(startMs).toBe(Date.parse(records[0]!.created_at));
    expect(endMs - startMs).toBeCloseTo(records[0]!.duration_ms, 3);

    expect(order.attributes).toMatchObject({ 'error.type': 'not_found', 'faultline.error_code': 'ORDER_NOT_FOUND', 'faultline.failure.category': 'business', 'faultline.feedback.action': 'try_alternative' });
    expect(order.attributes['http.response.status_code']).toBeUndefined();
    expect(order.status).toMatchObject({ code: 2, message: records[1]!.error_message });
    // No active span: one faultline trace is one OTel trace.
    expect(weather.spanContext().traceId).toBe(order.spanContext().traceId);
  });

  it('nests under the active span when the agent runs inside one, and leaves content out when told to', async () => {
    const { tracer, exporter } = inMemoryTracer();
    const rt = catalogRuntime(otelRecordListener({ tracer, content: false }));
    await tracer.startActiveSpan('agent run', async (root) => {
      await rt.execute('get_weather', { city: 'Tokyo', date: '2026-03-30' });
      root.end();
    });
    await rt.close();
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'agent run')!;
    const tool = spans.find((s) => s.name === 'execute_tool get_weather')!;
    expect(tool.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(tool.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(tool.attributes['gen_ai.tool.call.result']).toBeUndefined();
  });
});

describe('round trip: runtime -> OTLP/HTTP JSON exporter -> faultline import --format otel', () => {
  let server: Server;
  const bodies: string[] = [];
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('imports the exported spans back as one trajectory per trace, step for step', async () => {
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))] });
    providers.push(provider);
    const records: ToolExecutionRecord[] = [];
    const listener = otelRecordListener({ tracer: provider.getTracer('faultline') });
    const rt = catalogRuntime((r) => (records.push(r), listener(r)), [{ tool: 'create_order', trigger: 'first_call_only', fault: 'http_status', params: { status: 429, retry_after: 2 } }]);
    const one = rt.session();
    await one.execute('get_weather', { city: 'Paris', date: '2026-03-30' });
    await one.execute('get_order', { order_id: 'ORD-99999' });
    const two = rt.session();
    await two.execute('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 1 }] }, { context: { note: 'x' } });
    await two.execute('get_weather', { city: 'Atlantis' });
    await rt.close();
    await provider.forceFlush();

    // The exporter sent OTLP JSON (what a collector's file exporter writes, one request per line).
    const lines = bodies.map((b) => JSON.stringify(JSON.parse(b))).join('\n') + '\n';
    const { trajectories, skipped } = await collect(importOtel, lines);
    expect(skipped).toEqual([]);
    expect(trajectories).toHaveLength(2);
    const byFirstTool = new Map(trajectories.map((t) => [t.steps.map((s) => s.tool_name).join(','), t]));
    const expected = (traceId: string) => records.filter((r) => r.trace_id === traceId);
    for (const session of [one, two]) {
      const recs = expected(session.traceId);
      const t = byFirstTool.get(recs.map((r) => r.tool_name).join(','));
      expect(t).toBeDefined();
      expect(t!.steps.map((s) => [s.tool_name, s.status === 'success' ? 'success' : 'failed', s.input_params])).toEqual(
        recs.map((r) => [r.tool_name, r.status === 'success' ? 'success' : 'failed', r.input_params]),
      );
      // Categories survive the trip (the importer reads error.type), and so do the ordering and timing.
      expect(t!.steps.map((s) => [s.failure_category, s.failure_kind])).toEqual(recs.map((r) => [r.failure_category, r.failure_type]));
      expect(t!.steps.map((s) => s.started_at)).toEqual(recs.map((r) => r.created_at));
    }
    const notFound = trajectories.flatMap((t) => t.steps).find((s) => s.tool_name === 'get_order')!;
    expect(notFound).toMatchObject({ status: 'failure', failure_category: 'business', failure_kind: 'not_found' });
    const result = trajectories.flatMap((t) => t.steps).find((s) => s.tool_name === 'get_weather' && s.status === 'success')!;
    expect(JSON.stringify(result.response.body)).toContain('Paris');
  });
});

it('derived trace ids are stable per faultline trace and differ between traces', async () => {
  const { tracer, exporter } = inMemoryTracer();
  const listener = otelRecordListener({ tracer });
  const rt = catalogRuntime(listener);
  await rt.execute('get_weather', { city: 'Paris', date: '2026-03-30' }, { traceId: 'conv-1' });
  await rt.execute('get_weather', { city: 'Tokyo', date: '2026-03-30' }, { traceId: 'conv-2' });
  await rt.execute('get_weather', { city: 'Lima', date: '2026-03-30' }, { traceId: 'conv-1' });
  await rt.close();
  const ids = exporter.getFinishedSpans().map((s) => s.spanContext().traceId);
  expect(ids[0]).toBe(ids[2]);
  expect(ids[0]).not.toBe(ids[1]);
  expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
  expect(trace.getActiveSpan()).toBeUndefined();
});

describe('otelRecordListener with a meter: the logical call and its attempts as OTel metrics', () => {
  it('records gen_ai.execute_tool.duration per call (seconds, the span duration) and faultline.tool.attempts per try, through the real SDK', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    // The export interval is never reached: forceFlush below collects.
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { tracer, exporter: spans } = inMemoryTracer();
    const listener = otelRecordListener({ tracer, meter: meterProvider.getMeter('faultline-test') });
    const rt = catalogRuntime(listener, [{ tool: 'get_weather', trigger: 'first_call_only', fault: 'http_status', params: { status: 503 } }]);
    const s = rt.session({ agent: 'trip-planner' });
    await s.execute('get_weather', { city: 'Paris', date: '2026-03-30' }); // a 503, retried, then a success
    await s.execute('get_order', { order_id: 'ORD-99999' }); // not found, not retried
    await s.execute('get_wether', { city: 'Paris' }); // a made-up name: rejected, never tried
    await s.execute('get_wether_2', {});
    await rt.close();
    await reader.forceFlush();

    const metrics = exporter.getMetrics().flatMap((m) => m.scopeMetrics.flatMap((sm) => sm.metrics));
    const duration = metrics.find((m) => m.descriptor.name === 'gen_ai.execute_tool.duration')!;
    const attempts = metrics.find((m) => m.descriptor.name === 'faultline.tool.attempts')!;
    expect(duration.descriptor).toMatchObject({ unit: 's', type: 'HISTOGRAM' });
    expect(attempts.descriptor).toMatchObject({ unit: '{attempt}', type: 'COUNTER' });
    expect(duration.dataPointType).toBe(DataPointType.HISTOGRAM);

    type Point = { attributes: Record<string, unknown>; value: unknown };
    const points = duration.dataPoints as Point[];
    const byTool = (tool: string) => points.filter((p) => p.attributes['gen_ai.tool.name'] === tool);
    // One logical call each; the two made-up names share one series.
    expect(points.map((p) => [p.attributes['gen_ai.tool.name'], p.attributes['faultline.status'], p.attributes['error.type'], (p.value as { count: number }).count])).toEqual([
      ['get_weather', 'success', undefined, 1],
      ['get_order', 'failure', 'not_found', 1],
      ['(unknown)', 'rejected', 'unknown_tool', 2],
    ]);
    expect(byTool('get_weather')[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.type': 'function', 'gen_ai.agent.name': 'trip-planner' });
    // The metric is the span's duration, in seconds: retries and backoff included.
    const weatherSpan = spans.getFinishedSpans().find((sp) => sp.name === 'execute_tool get_weather')!;
    const spanSeconds = weatherSpan.duration[0] + weatherSpan.duration[1] / 1e9;
    expect((byTool('get_weather')[0]!.value as { sum: number }).sum).toBeCloseTo(spanSeconds, 6);
    expect(spanSeconds).toBeGreaterThan(0);
    expect((byTool('get_weather')[0]!.value as { buckets: { boundaries: number[] } }).buckets.boundaries).toEqual([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]);

    // Attempts: the get_weather call counts two (a 503, then a success); a rejected call counts none.
    const tries = (attempts.dataPoints as Point[]).map((p) => [p.attributes['gen_ai.tool.name'], p.attributes['faultline.attempt.outcome'], p.attributes['error.type'], p.value]);
    expect(tries).toEqual([
      ['get_weather', 'failure', 'dependency_down', 1],
      ['get_weather', 'success', undefined, 1],
      ['get_order', 'failure', 'not_found', 1],
    ]);
    await meterProvider.shutdown();
  });

  it('refuses to be made with neither a tracer nor a meter', () => {
    expect(() => otelRecordListener({})).toThrow(/tracer, a meter or both/);
  });
});
