// resolveAgent for the specs the model adapters and module loader answer: openai:, anthropic:, module:.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { reply, startFakeModelServer, type FakeModelServer } from '../../llm/fake-model-server.test-helpers.js';
import { resolveAgent } from './index.js';
import { makeTask } from './model-agent-contract.test-helpers.js';

describe('resolveAgent: model and module specs', () => {
  let server: FakeModelServer;
  let dir: string;
  beforeAll(async () => {
    server = await startFakeModelServer({ handler: () => reply.text('hi') });
    dir = await mkdtemp(join(tmpdir(), 'faultline-resolve-'));
    await writeFile(join(dir, 'agent.mjs'), `export default (o) => ({ name: 'custom-' + o.tag, async run() { return { status: 'completed', answer: 'x', diagnoses: [] }; } });`);
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('builds openai:<model> from the env (single channel: one base URL and key, any model)', async () => {
    const env = { OPENAI_BASE_URL: server.openaiBaseUrl, OPENAI_API_KEY: 'sk-one-channel-1' };
    const a = await resolveAgent('openai:gpt-4o-mini', { env });
    const b = await resolveAgent('openai:claude-sonnet-4-5', { env, model: { maxTurns: 5 } });
    expect([a.name, b.name]).toEqual(['openai:gpt-4o-mini', 'openai:claude-sonnet-4-5']);
    await a.run(makeTask());
    await b.run(makeTask());
    expect(server.requests.slice(-2).map((r) => (r.body as { model: string }).model)).toEqual(['gpt-4o-mini', 'claude-sonnet-4-5']);
  });

  it('builds anthropic:<model>, and takes the model from ANTHROPIC_MODEL when the spec leaves it out', async () => {
    const env = { ANTHROPIC_BASE_URL: server.anthropicBaseUrl, ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_MODEL: 'claude-haiku' };
    const agent = await resolveAgent('anthropic:', { env });
    expect(agent.name).toBe('anthropic:claude-haiku');
    await expect(agent.run(makeTask())).resolves.toMatchObject({ status: 'completed', answer: 'hi' });
  });

  it('lets explicit options override the environment', async () => {
    const agent = await resolveAgent('openai:m', { env: { OPENAI_API_KEY: 'sk-env-000000' }, model: { baseUrl: server.openaiBaseUrl, apiKey: 'sk-flag-111111' } });
    await agent.run(makeTask());
    expect(server.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-flag-111111');
  });

  it('loads module:<path> with the module options', async () => {
    const agent = await resolveAgent('module:agent.mjs', { cwd: dir, moduleOptions: { tag: 't1' } });
    expect(agent.name).toBe('custom-t1');
  });

  it.each([
    ['openai:', /needs a model/],
    ['anthropic:claude', /ANTHROPIC_API_KEY/],
    ['module:nope.mjs', /file not found/],
    ['gpt-4o', /unknown agent "gpt-4o": use .*openai:<model>, anthropic:<model>, module:<path>/],
  ])('rejects %s with a ConfigError', async (spec, message) => {
    const error = await resolveAgent(spec, { env: {}, cwd: dir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});
