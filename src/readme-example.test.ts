/**
 * The README's API example, run for real against a loopback HTTP server, so the first code a
 * new user copies keeps working; its integration examples, with a mock model (the AI SDK's
 * own) and a real MCP server from npm; and its custom FailBench agent, run from a .ts file by the
 * CLI.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { metrics, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineTool } from './index.js';
import { openStore } from './store.js';
import { aiSdkTools, answerInvalidToolCalls } from './integrations/ai-sdk.js';
import { mcpClientTools } from './integrations/mcp-client.js';
import { otelRecordListener } from './integrations/otel.js';
import type { ToolExecutionRecord } from './core/record-types.js';
import { runCapture } from './cli/run-cli.test-helpers.js';

let server: Server;
let base = '';
const dir = mkdtempSync(join(tmpdir(), 'faultline-readme-'));
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const city = url.searchParams.get('city');
    if (city !== 'Paris') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unknown city' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temperature: url.searchParams.get('unit') === 'celsius' ? 18 : 64 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('the README API example', () => {
  it('runs as written', async () => {
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'Weather for a city. 404 when the city is unknown.',
      input: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
          unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius', 'x-synonyms': { c: 'celsius', f: 'fahrenheit' } },
        },
        required: ['city'],
      },
      output: { type: 'object', properties: { temperature: { type: 'number' } }, required: ['temperature'] },
      idempotent: true,
      timeoutMs: 3000,
      retry: { maxRetries: 3, baseDelayMs: 200, factor: 2, maxDelayMs: 5000 },
      execute: async ({ city, unit }: { city: string; unit: string }, { signal }) => {
        const res = await fetch(`${base}/v1?city=${encodeURIComponent(city)}&unit=${unit}`, { signal });
        return res.ok ? res.json() : res; // a non-ok Response is classified by its status and Retry-After
      },
    });

    const path = join(dir, 'faultline.db');
    const rt = createRuntime({ tools: [getWeather], store: `sqlite:${path}` });
    const session = rt.session({ agent: 'support-bot', model: 'gpt-4o' });
    const r = await session.execute('get_weather', { city: 'Paris', unit: 'C' }, { intent: 'weather in Paris tomorrow' });
    expect(r).toMatchObject({ ok: true, output: { temperature: 18 } });
    const missing = await session.execute('get_weather', { city: 'Atlantis' });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect([missing.error.category, missing.error.type, missing.feedback.action]).toEqual(['business', 'not_found', 'try_alternative']);
    await rt.close();

    const store = await openStore(path);
    expect(await store.count()).toBe(2);
    const [first] = await store.query({ limit: 1 });
    expect(first?.context_snapshot).toEqual({ intent: 'weather in Paris tomorrow', agent: 'support-bot', model: 'gpt-4o' });
    await store.close();
  });
});

/** A README code block that contains `marker`, so each test below runs the block it names. */
function readmeBlock(marker: string): string {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(marker));
  expect(block, `a README ts block with ${marker}`).toBeDefined();
  return block!;
}

describe('the README integration examples', () => {
  it('AI SDK: generateText with aiSdkTools and answerInvalidToolCalls records a made-up tool name', async () => {
    const block = readmeBlock("from 'faultline/ai-sdk'");
    // The lines run below, as the README has them.
    expect(block).toContain('tools: aiSdkTools(rt, { session }),');
    expect(block).toContain('experimental_repairToolCall: answerInvalidToolCalls,');
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
    const replies = [
      { content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'get_wether', input: '{"city":"Paris"}' }], finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] },
      { content: [{ type: 'text' as const, text: 'Sunny.' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] },
    ];
    const model = new MockLanguageModelV3({ doGenerate: async () => replies.shift()! });
    const getWeather = defineTool({ name: 'get_weather', description: 'Weather.', input: { type: 'object', properties: { city: { type: 'string' } } }, execute: async () => ({ sky: 'clear' }) });
    const records: ToolExecutionRecord[] = [];
    const rt = createRuntime({ tools: [getWeather], onRecord: (r) => records.push(r) });
    const prompt = 'Weather in Paris?';

    const session = rt.session({ agent: 'trip-planner', model: 'gpt-4.1' });
    const { text } = await generateText({
      model,
      tools: aiSdkTools(rt, { session }),
      experimental_repairToolCall: answerInvalidToolCalls, // unknown tools and malformed JSON, recorded and answered
      stopWhen: stepCountIs(8),
      prompt,
    });
    expect(text).toBe('Sunny.');
    expect(records.map((r) => [r.tool_name, r.failure_type])).toEqual([['get_wether', 'unknown_tool']]);
    await rt.close();
  });

  it('MCP and OpenTelemetry: a server from npm behind a runtime whose records become spans and metrics', async () => {
    const block = readmeBlock("from 'faultline/otel'");
    expect(block).toContain("onRecord: otelRecordListener({ tracer: trace.getTracer('my-agent'), meter: metrics.getMeter('my-agent') }),");
    expect(block).toContain("tools: await mcpClientTools(client, { prefix: 'memory_', settings: { create_entities: { timeoutMs: 5000 } } }),");
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      const client = new Client({ name: 'my-agent', version: '1.0.0' });
      // The README starts the server with npx; here, the installed copy, with its graph in the temp dir.
      const server = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url));
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [server], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'graph.jsonl') }, stderr: 'ignore' }));
      const rt = createRuntime({
        tools: await mcpClientTools(client, { prefix: 'memory_', settings: { create_entities: { timeoutMs: 5000 } } }),
        store: `sqlite:${join(dir, 'mcp.db')}`,
        onRecord: otelRecordListener({ tracer: trace.getTracer('my-agent'), meter: metrics.getMeter('my-agent') }),
      });
      const r = await rt.execute('memory_read_graph', {});
      expect(r.ok).toBe(true);
      await rt.close();
      await client.close();
      await reader.forceFlush();
      expect(spans.getFinishedSpans().map((s) => s.name)).toEqual(['execute_tool memory_read_graph']);
      const names = metricExporter.getMetrics().flatMap((m) => m.scopeMetrics.flatMap((sm) => sm.metrics.map((x) => x.descriptor.name)));
      expect(names).toEqual(['gen_ai.execute_tool.duration', 'faultline.tool.attempts']);
    } finally {
      trace.disable();
      metrics.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    }
  });
});

describe('the README custom FailBench agent', () => {
  it('runs as written, from a .ts file, through faultline bench --agent module:', { timeout: 300_000 }, async () => {
    const block = readmeBlock("from 'faultline/bench'");
    const agentDir = join(dir, 'agent');
    mkdirSync(agentDir);
    writeFileSync(join(agentDir, 'package.json'), '{ "type": "module" }\n');
    // The one change: the package's name resolves to this checkout's source.
    writeFileSync(join(agentDir, 'my-agent.ts'), block.replace("'faultline/bench'", JSON.stringify(pathToFileURL(fileURLToPath(new URL('./bench.ts', import.meta.url))).href)));
    const run = await runCapture(['bench', '--agent', 'module:./my-agent.ts', '--agent', 'robust', '--filter', 'weather/*-en', '--db', join(agentDir, 'bench.db'), '--out', join(agentDir, 'out'), '--json'], agentDir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [mine, robust] = JSON.parse(run.stdout) as { agent: string; score: number; dimensions: unknown }[];
    expect(mine!.agent).toBe('robust-logged');
    // It is the robust agent, with a log: the same scores.
    expect(mine!.dimensions).toEqual(robust!.dimensions);
    expect(mine!.score).toBe(robust!.score);
    const logged = readFileSync(join(agentDir, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string; ok: boolean });
    expect(logged.length).toBeGreaterThan(10);
    expect(logged.some((c) => !c.ok)).toBe(true);
  });
});
