/**
 * `faultline bench` against real model endpoints on loopback: one that nothing listens on, one
 * that rejects the key (in the real wire formats, from the fake model server), one that serves
 * and then stops. Each is bad input: one line, exit 2, no report, the API key never shown. A
 * request rejected for itself (a 400 for one scenario) loses that run only.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startFakeModelServer, type FakeModelServer, type WireFormat } from '../../llm/fake-model-server.test-helpers.js';
import type { ResultsFile } from '../../failbench/report/write-report.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCli } from '../run-cli.js';
import { captureIo, type CliRun } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-endpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Long enough that the scrubber replaces it (it leaves strings under 6 characters alone). */
const API_KEY = 'sk-test-wrong-key-4f2a9c';

const scenario = (n: number) => `
title: Weather service down ${n}
language: en
kind: single_step
taxonomy: { category: system, subtype: 5xx }
dimensions: [identification, loop_avoidance]
recoverable: false
instruction: What will the weather be in Paris on 2026-03-30?
tools: [get_weather]
faults:
  - { id: down, tool: get_weather, trigger: always, fault: http_status, params: { status: 503 } }
oracle:
  status: [gave_up, escalated]
  diagnosis: { tool: get_weather, category: system }
`;

const SCENARIOS = 5;
let suite: string;
beforeAll(() => {
  suite = join(dir, 'suite');
  mkdirSync(join(suite, 'weather'), { recursive: true });
  for (let n = 1; n <= SCENARIOS; n++) writeFileSync(join(suite, 'weather', `s${n}.yaml`), scenario(n));
});

let server: FakeModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A loopback port nothing listens on: bound, then let go. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const ENV_OF: Record<WireFormat, (baseUrl: string) => Record<string, string>> = {
  openai: (baseUrl) => ({ OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: API_KEY }),
  anthropic: (baseUrl) => ({ ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: API_KEY }),
};
const AGENT_OF: Record<WireFormat, string> = { openai: 'openai:gpt-4o', anthropic: 'anthropic:claude-sonnet-4-5' };

/** `faultline bench` in a fresh working directory, with the suite above and `env`. */
async function bench(args: readonly string[], env: Record<string, string>): Promise<CliRun & { cwd: string }> {
  const cwd = mkdtempSync(join(dir, 'cwd-'));
  const captured = captureIo(cwd);
  captured.io.env = env;
  const code = await runCli(['bench', '--suite', suite, ...args], captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr(), cwd };
}

/** What every refusal has in common: exit 2, nothing on stdout, one line on stderr, no stack, no key. */
function expectOneLine(run: CliRun): string {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toContain(API_KEY);
  return lines[0]!;
}

describe('faultline bench: model endpoint checked before any scenario runs', () => {
  it.each(['openai', 'anthropic'] as const)('%s: nothing listens on the port: one line naming it, exit 2, in seconds, nothing written', async (format) => {
    const port = await freePort();
    const baseUrl = format === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
    const started = Date.now();
    const run = await bench(['--agent', AGENT_OF[format]], ENV_OF[format](baseUrl));
    expect(Date.now() - started).toBeLessThan(5000);
    const envVar = format === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL';
    expect(expectOneLine(run)).toBe(`faultline: cannot reach the ${format} endpoint ${baseUrl} (ECONNREFUSED); set ${envVar}`);
    // No store file, no .faultline directory, no report directory: the working directory is as it was.
    expect(readdirSync(run.cwd)).toEqual([]);
  });

  it('--fission checks it too, before its store is opened', async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
    const run = await bench(['--agent', AGENT_OF.openai, '--fission', '2'], ENV_OF.openai(baseUrl));
    expect(expectOneLine(run)).toBe(`faultline: cannot reach the openai endpoint ${baseUrl} (ECONNREFUSED); set OPENAI_BASE_URL`);
    expect(readdirSync(run.cwd)).toEqual([]);
  });

  it('a password in the base URL is masked in the message', async () => {
    const port = await freePort();
    const run = await bench(['--agent', AGENT_OF.openai], ENV_OF.openai(`http://gateway:hunter2-secret@127.0.0.1:${port}/v1`));
    const line = expectOneLine(run);
    expect(line).toContain(`http://gateway:***@127.0.0.1:${port}/v1 (ECONNREFUSED)`);
    expect(line).not.toContain('hunter2');
  });
});

describe('faultline bench: a model endpoint that cannot serve the run stops it', () => {
  it.each(['openai', 'anthropic'] as const)('%s answers 401: stops after the first run with the status and its message, key scrubbed, no report', async (format) => {
    server = await startFakeModelServer({ apiKey: 'sk-the-right-key-000000' });
    const baseUrl = format === 'openai' ? server.openaiBaseUrl : server.anthropicBaseUrl;
    const run = await bench(['--agent', AGENT_OF[format], '--out', 'report'], ENV_OF[format](baseUrl));
    const line = expectOneLine(run);
    // The fake server echoes the key it was sent, as OpenAI does; the agent scrubbed it.
    expect(line).toBe(
      `faultline: the ${format} endpoint ${baseUrl} rejected the request (HTTP 401: Incorrect API key provided: [redacted]); stopped after 1 of ${SCENARIOS} runs, no report written (the records of those runs are kept)`,
    );
    // Rejected requests are not retried, and no other scenario was tried.
    expect(server.requests).toHaveLength(1);
    expect(existsSync(join(run.cwd, 'report'))).toBe(false);
    expect(existsSync(join(run.cwd, '.faultline', 'bench'))).toBe(false);
  });

  it('--fission: a rejected key stops it the same way, with no group stored', async () => {
    server = await startFakeModelServer({ apiKey: 'sk-the-right-key-000000' });
    const run = await bench(['--agent', AGENT_OF.openai, '--fission', '2', '--db', 'fission.db'], ENV_OF.openai(server.openaiBaseUrl));
    expect(expectOneLine(run)).toBe(
      `faultline: the openai endpoint ${server.openaiBaseUrl} rejected the request (HTTP 401: Incorrect API key provided: [redacted]); stopped after 1 of ${SCENARIOS} runs, no group stored (the records of those runs are kept)`,
    );
    expect(server.requests).toHaveLength(1);
    const store = createSqliteStore({ path: join(run.cwd, 'fission.db') });
    expect(await store.countTrajectories!()).toBe(0);
    await store.close();
  });

  it('answers 404 for the model, with several runs in flight: stops them all, one line', async () => {
    server = await startFakeModelServer({ latencyMs: 20 });
    server.respondWith(() => reply.error(404, 'The model `gpt-4o` does not exist or you do not have access to it.'));
    const run = await bench(['--agent', AGENT_OF.openai, '--concurrency', '3', '--out', 'report'], ENV_OF.openai(server.openaiBaseUrl));
    expect(expectOneLine(run)).toMatch(/^faultline: the openai endpoint \S+ rejected the request \(HTTP 404: The model `gpt-4o` does not exist or you do not have access to it\.\); stopped after 1 of 5 runs/);
    expect(server.requests.length).toBeLessThanOrEqual(3);
    expect(existsSync(join(run.cwd, 'report'))).toBe(false);
  });

  it('serves, then fails every request: stops once 3 runs in a row failed after every retry; their records stay', async () => {
    server = await startFakeModelServer();
    // The first scenario: one tool call (recorded), then an answer.
    server.enqueue(reply.toolCall('get_weather', { city: 'Paris', date: '2026-03-30' }), reply.text('The weather service is down.'));
    // Overloaded, come back at once: retried without waiting, so the test takes no backoff time.
    server.respondWith(() => reply.error(503, undefined, { 'retry-after': '0' }));
    const run = await bench(['--agent', AGENT_OF.openai, '--db', 'bench.db', '--out', 'report'], ENV_OF.openai(server.openaiBaseUrl));
    expect(expectOneLine(run)).toBe(
      `faultline: the openai endpoint ${server.openaiBaseUrl} stopped answering: 3 runs in a row failed despite retries ` +
        `(last: HTTP 503: The engine is currently overloaded, please try again later., 4 attempts); stopped after 4 of ${SCENARIOS} runs, no report written (the records of those runs are kept)`,
    );
    // Two answers, then 3 runs x 4 attempts; the fifth scenario never ran.
    expect(server.requests).toHaveLength(2 + 3 * 4);
    expect(existsSync(join(run.cwd, 'report'))).toBe(false);
    // The records of the runs made are kept, flushed: the first scenario's tool call.
    const store = createSqliteStore({ path: join(run.cwd, 'bench.db') });
    const records = await store.query({});
    await store.close();
    expect(records.map((r) => [r.tool_name, r.trace_id.replace(/^failbench:[^:]+:/, '')])).toEqual([['get_weather', 'openai:gpt-4o:weather/s1:0']]);
  });

  it.each(['openai', 'anthropic'] as const)('%s answers 400 for one scenario (its context too long): that run is lost, listed and not scored; the others run', async (format) => {
    server = await startFakeModelServer();
    const tooLong = "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.";
    server.enqueue(reply.text('Sunny in Paris.'), reply.error(400, tooLong));
    server.respondWith(() => reply.text('Sunny in Paris.'));
    const baseUrl = format === 'openai' ? server.openaiBaseUrl : server.anthropicBaseUrl;
    const run = await bench(['--agent', AGENT_OF[format], '--out', 'report'], ENV_OF[format](baseUrl));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Runs lost to the model endpoint after its retries are not scored (${AGENT_OF[format]} 1); the report lists them.`);
    // Not retried, and every other scenario ran.
    expect(server.requests).toHaveLength(SCENARIOS);
    const saved = JSON.parse(readFileSync(join(run.cwd, 'report', 'results.json'), 'utf8')) as ResultsFile;
    const lost = saved.suite.results.filter((r) => r.modelEndpointFailure !== undefined);
    expect(lost.map((r) => [r.scenarioId, r.scores, r.modelEndpointFailure])).toEqual([
      ['weather/s2', {}, { provider: format, kind: 'rejected', status: 400, message: `HTTP 400: ${tooLong}`, attempts: 1 }],
    ]);
    expect(saved.scores[0]).toMatchObject({ runs: SCENARIOS - 1, errors: 0, endpointFailures: 1 });
  });

  it('answers 400 to every scenario: stops once 3 runs in a row were lost, one line', async () => {
    server = await startFakeModelServer();
    server.respondWith(() => reply.error(400, "Unsupported parameter: 'seed'"));
    const run = await bench(['--agent', AGENT_OF.openai, '--out', 'report'], ENV_OF.openai(server.openaiBaseUrl));
    expect(expectOneLine(run)).toBe(
      `faultline: the openai endpoint ${server.openaiBaseUrl} failed 3 runs in a row (the last rejected: HTTP 400: Unsupported parameter: 'seed'); stopped after 3 of ${SCENARIOS} runs, no report written (the records of those runs are kept)`,
    );
    expect(server.requests).toHaveLength(3);
    expect(existsSync(join(run.cwd, 'report'))).toBe(false);
  });

  it('one run lost to the endpoint among good ones: the run goes on, and that run is listed but not scored', async () => {
    server = await startFakeModelServer();
    // Scenario 2's only turn fails 4 times; every other scenario is answered at once.
    server.enqueue(reply.text('Sunny in Paris.'), ...Array.from({ length: 4 }, () => reply.error(503, undefined, { 'retry-after': '0' })));
    server.respondWith(() => reply.text('Sunny in Paris.'));
    const run = await bench(['--agent', AGENT_OF.openai, '--out', 'report'], ENV_OF.openai(server.openaiBaseUrl));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Runs lost to the model endpoint after its retries are not scored (openai:gpt-4o 1); the report lists them.');
    const saved = JSON.parse(readFileSync(join(run.cwd, 'report', 'results.json'), 'utf8')) as ResultsFile;
    const lost = saved.suite.results.filter((r) => r.modelEndpointFailure !== undefined);
    expect(lost.map((r) => [r.scenarioId, r.scores, r.modelEndpointFailure])).toEqual([
      ['weather/s2', {}, { provider: 'openai', kind: 'server', status: 503, message: 'HTTP 503: The engine is currently overloaded, please try again later.', attempts: 4 }],
    ]);
    const [score] = saved.scores;
    expect(score).toMatchObject({ runs: SCENARIOS - 1, errors: 0, endpointFailures: 1 });
    // Loop avoidance is scored on the 4 runs the endpoint served, not on 5.
    expect(score!.dimensions.loop_avoidance.n).toBe(SCENARIOS - 1);
    const md = readFileSync(join(run.cwd, 'report', 'report.md'), 'utf8');
    expect(md).toContain('## Runs lost to the model endpoint');
    expect(md).toMatch(/^\| Runs lost to the model endpoint \(not scored\) \| 1 \|$/m);
    expect(md).toContain('weather/s2 (repeat 1): openai, HTTP 503: The engine is currently overloaded, please try again later. (4 attempts)');
    expect(readFileSync(join(run.cwd, 'report', 'report.html'), 'utf8')).toContain('Runs lost to the model endpoint');
  });
});

describe('faultline bench: a long conversation with a model', () => {
  it.each(['openai', 'anthropic'] as const)('%s: 20 turns in one scenario print no MaxListenersExceededWarning', async (format) => {
    // A model that calls the failing tool on every turn, up to the turn limit.
    server = await startFakeModelServer({ handler: () => reply.toolCall('get_weather', { city: 'Paris', date: '2026-03-30' }) });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const run = await bench(['--agent', AGENT_OF[format], '--filter', 'weather/s1', '--out', 'report'], ENV_OF[format](format === 'openai' ? server.openaiBaseUrl : server.anthropicBaseUrl));
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(server.requests.length).toBeGreaterThan(10);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });
});
