import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelEndpointError } from '../../llm/model-endpoint-error.js';
import { reply, startFakeModelServer, type FakeModelServer, type OpenAIRequestBody, type RecordedRequest } from '../../llm/fake-model-server.test-helpers.js';
import { recordingClock, TEST_KEY } from '../../llm/fake-model-server.test-helpers.js';
import { trajectory } from '../trajectory.test-helpers.js';
import { fileJudgeCache, memoryJudgeCache } from './judge-cache.js';
import { createLlmJudge, type LlmJudgeOptions } from './llm.js';
import { parseVerdict, type Verdict } from './llm-verdict.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-llm-judge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = '2026-03-29T14:23:11Z';
const weather = () =>
  trajectory(
    [
      { tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, body: { city: 'Shanghai', temp: 18 }, at },
      { tool: 'get_weather', fail: { category: 'system', kind: 'server_error' } },
      { tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-30' }, body: { city: 'Shanghai', temp: 20 }, at },
    ],
    { task: '上海明天的天气' },
  );
const wrongDay: Verdict = { satisfies: false, reason: 'the intent asks for tomorrow (2026-03-30) but date=2026-03-29', mismatch_kind: 'date', confidence: 0.9 };
const fine: Verdict = { satisfies: true, reason: 'the date is tomorrow', mismatch_kind: null, confidence: 0.95 };
const verdictReply = (v: Verdict) => reply.text(JSON.stringify(v));
/** Answers by the date the question carries, so concurrent steps get the right verdicts. */
const byDate = (request: RecordedRequest) => verdictReply(userMessage(request).includes('2026-03-29"') ? wrongDay : fine);
const userMessage = (request: RecordedRequest): string => (request.body as OpenAIRequestBody).messages.find((m) => m.role === 'user')?.content ?? '';

describe('createLlmJudge against a local chat.completions server', () => {
  let server: FakeModelServer;
  let clock: ReturnType<typeof recordingClock>;
  const judgeWith = (options: Partial<LlmJudgeOptions> = {}) =>
    createLlmJudge({ model: 'judge-test', baseUrl: server.openaiBaseUrl, apiKey: TEST_KEY, clock, retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...options });
  beforeEach(async () => {
    server = await startFakeModelServer();
    clock = recordingClock();
  });
  afterEach(async () => {
    await server.close();
  });

  it('asks about each successful step with a JSON-schema response format and labels the misses', async () => {
    server.respondWith(byDate);
    const judge = judgeWith();
    const { labels, errors } = await judge.judgeTrajectory(weather());
    expect(errors).toEqual([]);
    expect(labels).toEqual([{ name: 'semantic_error', step_index: 1, confidence: 0.9, reason: wrongDay.reason, source: 'judge:llm:judge-test', mismatch_kind: 'date' }]);
    // Steps 1 and 3 succeeded; the failed step 2 is the rules' business, not the judge's.
    expect(server.requests).toHaveLength(2);
    const body = server.requests[0]!.body as OpenAIRequestBody & { response_format: { type: string; json_schema: { strict: boolean; schema: { required: string[] } } } };
    expect(server.requests[0]!.path).toBe('/v1/chat/completions');
    expect(server.requests[0]!.headers['authorization']).toBe(`Bearer ${TEST_KEY}`);
    expect(body.model).toBe('judge-test');
    expect(body.response_format.type).toBe('json_schema');
    expect(body.response_format.json_schema.strict).toBe(true);
    expect(body.response_format.json_schema.schema.required).toEqual(['satisfies', 'reason', 'mismatch_kind', 'confidence']);
    const question = JSON.parse(userMessage(server.requests[0]!)) as Record<string, unknown>;
    expect(question).toMatchObject({ intent: '上海明天的天气', tool: 'get_weather', called_at: at });
    expect(judge.stats).toEqual({ requests: 2, cache_hits: 0, verdicts: 2, errors: 0 });
  });

  it('answers repeated questions from the cache, in memory and from the cache file, without a request', async () => {
    server.respondWith(byDate);
    const cache = memoryJudgeCache();
    const first = await judgeWith({ cache }).judgeTrajectory(weather());
    expect(server.requests).toHaveLength(2);
    const again = judgeWith({ cache });
    expect(await again.judgeTrajectory(weather())).toEqual(first);
    expect(server.requests).toHaveLength(2);
    expect(again.stats.cache_hits).toBe(2);

    const path = join(dir, 'nested', 'judge-cache.jsonl');
    await judgeWith({ cache: fileJudgeCache(path, 'judge-test') }).judgeTrajectory(weather());
    expect(server.requests).toHaveLength(4);
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
    // A new process: the file is all it has.
    const reopened = judgeWith({ cache: fileJudgeCache(path, 'judge-test') });
    expect(await reopened.judgeTrajectory(weather())).toEqual(first);
    expect(server.requests).toHaveLength(4);
    // Another model is another question.
    await judgeWith({ model: 'other-model', cache: fileJudgeCache(path, 'other-model') }).judgeTrajectory(weather());
    expect(server.requests).toHaveLength(6);
    // A directory where the file should be: a ConfigError of one line, not a bare EISDIR.
    expect(() => fileJudgeCache(join(dir, 'nested'), 'judge-test')).toThrow(expect.objectContaining({ name: 'ConfigError', message: `cannot read the judge cache ${join(dir, 'nested')}: is a directory` }));
  });

  it('asks once more after a malformed verdict, then labels the step judge_error', async () => {
    const one = trajectory([{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, at }], { task: '上海明天的天气' });
    server.enqueue(reply.text('{"satisfies": false, "reason": "cut sh'), verdictReply(wrongDay));
    expect((await judgeWith().judgeTrajectory(one)).labels).toMatchObject([{ name: 'semantic_error', mismatch_kind: 'date' }]);
    expect(server.requests).toHaveLength(2);

    server.enqueue(reply.text(JSON.stringify({ satisfies: 'no', reason: 'x', confidence: 2 })), reply.text('I think it is fine.'));
    const judge = judgeWith();
    const result = await judge.judgeTrajectory(one);
    expect(result.labels).toEqual([]);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ name: 'judge_error', step_index: 1, confidence: 0, source: 'judge:llm:judge-test' });
    expect(result.errors[0]!.reason).toContain('no valid verdict after 2 replies: the reply is not JSON');
    expect(server.requests).toHaveLength(4);
    expect(judge.stats.errors).toBe(1);

    // A refusal is no verdict either.
    server.enqueue(reply.json({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] }), verdictReply(fine));
    expect(await judgeWith().judgeTrajectory(one)).toEqual({ labels: [], errors: [] });
    expect(server.requests).toHaveLength(6);
  });

  it('infers the outcome of a log that states none from its closing answer, and leaves a stated one alone', async () => {
    const plain = { ...trajectory([{ tool: 'get_weather', fail: { category: 'system', kind: 'server_error' } }], { task: '上海明天的天气' }), closing_turns: [{ role: 'assistant' as const, content: '抱歉，天气服务暂时不可用。' }] };
    server.respondWith(() => verdictReply({ satisfies: false, reason: 'the agent apologises that the service is unavailable', mismatch_kind: null, confidence: 0.9 }));
    const { outcome } = await judgeWith().judgeTrajectory(plain);
    expect(outcome).toEqual({ inferred: { outcome: 'failure', confidence: 0.9, evidence: 'llm:"the agent apologises that the service is unavailable"' }, by: 'judge:llm:judge-test' });
    const body = server.requests[0]!.body as OpenAIRequestBody & { response_format: { json_schema: { name: string } } };
    expect(body.response_format.json_schema.name).toBe('task_outcome_verdict');
    expect(JSON.parse(userMessage(server.requests[0]!))).toMatchObject({ intent: '上海明天的天气', tool: '(task outcome)', output: '抱歉，天气服务暂时不可用。' });
    const stated = { ...plain, final_outcome: 'success' as const, outcome_basis: { source: 'stated' as const, confidence: 1, evidence: 'reward=1' } };
    expect((await judgeWith().judgeTrajectory(stated)).outcome).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('waits out a 429 and retries; 500s that exhaust the retries give judge_error labels, not a crash', async () => {
    const one = trajectory([{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, at }], { task: '上海明天的天气' });
    server.enqueue(reply.error(429, undefined, { 'retry-after-ms': '7' }), verdictReply(wrongDay));
    expect((await judgeWith().judgeTrajectory(one)).labels).toHaveLength(1);
    expect(clock.waits).toEqual([7]);
    expect(server.requests).toHaveLength(2);

    server.respondWith(() => reply.error(500));
    const result = await judgeWith({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } }).judgeTrajectory(weather());
    expect(result.labels).toEqual([]);
    expect(result.errors.map((e) => e.step_index)).toEqual([1, 3]);
    expect(result.errors[0]!.reason).toMatch(/failed after 3 attempts: HTTP 500/);
    expect(server.requests).toHaveLength(2 + 2 * 3);
  });

  it('stops the run when the endpoint refuses the request (bad key), with the key scrubbed', async () => {
    const keyed = await startFakeModelServer({ apiKey: 'sk-the-right-key-000' });
    try {
      const judge = createLlmJudge({ model: 'm', baseUrl: keyed.openaiBaseUrl, apiKey: TEST_KEY, clock });
      const error = await judge.judgeTrajectory(weather()).catch((e: unknown) => e);
      expect(ModelEndpointError.isInstance(error)).toBe(true);
      expect(String((error as Error).message)).not.toContain(TEST_KEY);
    } finally {
      await keyed.close();
    }
  });

  it('redacts secrets in the intent, arguments and output before sending, and truncates long output', async () => {
    server.respondWith(() => verdictReply(fine));
    const secretKey = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789';
    const t = trajectory(
      [{ tool: 'fetch_report', params: { report: 'q3', password: 'hunter2-Very-Secret', api_key: secretKey }, body: { token: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlMTIz', text: 'x'.repeat(5000) } }],
      { task: `fetch the q3 report with key ${secretKey}` },
    );
    await judgeWith({ maxOutputChars: 300 }).judgeTrajectory(t);
    const sent = JSON.stringify(server.requests[0]!.body);
    for (const secret of ['hunter2-Very-Secret', secretKey, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlMTIz']) expect(sent).not.toContain(secret);
    expect(sent).toContain('REDACTED');
    const question = JSON.parse(userMessage(server.requests[0]!)) as { output: string };
    expect(question.output.length).toBeLessThan(400);
    expect(question.output).toMatch(/\[truncated, \d+ characters in all\]$/);
  });

  it('refuses to start without a key, a model or a valid URL; reads OPENAI_BASE_URL and the named key variable', async () => {
    expect(() => createLlmJudge({ model: 'm', env: {} })).toThrow(/OPENAI_API_KEY/);
    expect(() => createLlmJudge({ model: 'm', apiKeyEnv: 'JUDGE_KEY', env: { OPENAI_API_KEY: 'x' } })).toThrow(/JUDGE_KEY/);
    expect(() => createLlmJudge({ model: ' ', apiKey: TEST_KEY })).toThrow(/model/);
    expect(() => createLlmJudge({ model: 'm', apiKey: TEST_KEY, baseUrl: 'nope' })).toThrow(/base URL/);
    server.respondWith(() => verdictReply(fine));
    const judge = createLlmJudge({ model: 'm', apiKeyEnv: 'JUDGE_KEY', env: { OPENAI_BASE_URL: server.openaiBaseUrl, JUDGE_KEY: 'sk-judge-key-123456' } });
    await judge.judgeTrajectory(weather());
    expect(server.requests[0]!.headers['authorization']).toBe('Bearer sk-judge-key-123456');
  });
});

describe('parseVerdict', () => {
  it('accepts only verdicts of the schema, with a confidence in [0, 1]', () => {
    const ok = { satisfies: false, reason: 'r', mismatch_kind: 'entity', confidence: 0.6 };
    expect(parseVerdict(JSON.stringify(ok))).toEqual({ ok: true, verdict: ok });
    expect(parseVerdict(JSON.stringify({ ...ok, mismatch_kind: null }))).toMatchObject({ ok: true });
    for (const bad of [{ ...ok, confidence: 1.5 }, { ...ok, mismatch_kind: 'weather' }, { ...ok, extra: 1 }, { satisfies: true, reason: 'r', confidence: 1 }]) {
      expect(parseVerdict(JSON.stringify(bad)), JSON.stringify(bad)).toMatchObject({ ok: false, why: expect.stringContaining('verdict schema') as unknown });
    }
  });
});
