import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../faults/plan.js';
import { expectNoPieceOf } from '../record/secret-pieces.test-helpers.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';
import { HttpError } from './tool-errors.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-rt-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Built by concatenation so this file itself does not look like it holds secrets.
const SECRETS = {
  openai: 'sk-proj-' + 'Zx9'.repeat(16),
  github: 'ghp_' + 'A1b2C3d4E5'.repeat(4).slice(0, 36),
  jwt: 'eyJhbGciOiJIUzI1NiJ9' + '.' + 'eyJzdWIiOiIxMjM0NTY3ODkwIn0' + '.' + 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  password: 'correct-horse-battery-staple',
  email: 'ann.lee' + '@' + 'example.com',
  card: '4111 1111 1111 1111',
};

describe('runtime with a store', () => {
  const tools = [
    defineTool({
      name: 'crm_lookup',
      description: 'looks up a customer',
      input: { type: 'object', properties: { email: { type: 'string' }, password: { type: 'string' }, note: { type: 'string' } } },
      execute: (args: { email: string }) => {
        throw new HttpError(401, `token ${SECRETS.openai} rejected for ${args.email}`, {}, { echo: SECRETS.jwt, card: SECRETS.card });
      },
    }),
    defineTool({
      name: 'get_profile',
      description: 'profile',
      input: { type: 'object', properties: {} },
      idempotent: true,
      execute: () => ({ email: SECRETS.email, github_token: SECRETS.github, bio: `reach me at ${SECRETS.email}` }),
    }),
  ];

  it('writes every record to SQLite, and no secret reaches the database file', async () => {
    const dir = tempDir();
    const path = join(dir, 'f.db');
    const rt = createRuntime({ tools, store: `sqlite:${path}`, clock: createVirtualClock(), recording: { spool: { path: join(dir, 'spool.jsonl') } } });
    for (let i = 0; i < 20; i++) {
      await rt.execute('crm_lookup', { email: SECRETS.email, password: SECRETS.password, note: JSON.stringify({ api_key: SECRETS.openai }) }, { traceId: 'T', intent: `call me at ${SECRETS.email}` });
      await rt.execute('get_profile', {}, { traceId: 'T' });
    }
    await rt.close();
    await rt.close();

    const store = createSqliteStore({ path, readonly: true });
    expect(await store.count()).toBe(40);
    const failures = await store.query({ statuses: ['failure'], limit: 100 });
    expect(failures).toHaveLength(20);
    expect(failures[0]).toMatchObject({ tool_name: 'crm_lookup', failure_category: 'auth', failure_type: 'unauthorized', error_code: 'HTTP_401' });
    const [stats] = await store.toolStats({ since: 0, until: Date.UTC(2100, 0), toolName: 'crm_lookup' });
    expect(stats).toMatchObject({ total: 20, failure: 20, failure_rate: 1 });
    await store.close();

    // Every byte on disk: the database and its WAL.
    const bytes = readdirSync(dir)
      .filter((f) => f.startsWith('f.db'))
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    expect(bytes).toContain('crm_lookup');
    for (const [name, secret] of Object.entries(SECRETS)) {
      const core = name === 'card' ? '4111 1111 1111 1111' : secret;
      expect(bytes.includes(core), `${name} leaked into the database`).toBe(false);
    }
    expect(bytes).not.toContain('ann.lee');
  });

  it('a store that cannot be opened never breaks a tool call; records are spooled', async () => {
    const dir = tempDir();
    const errors: unknown[] = [];
    const rt = createRuntime({
      tools,
      store: 'postgres://postgres@127.0.0.1:1/nowhere',
      recording: { spool: { path: join(dir, 'spool.jsonl') }, onError: (e) => errors.push(e), retry: { initialDelayMs: 10_000 } },
    });
    const r = await rt.execute('get_profile', {});
    expect(r.ok).toBe(true);
    await rt.flush();
    await rt.close();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    const spooled = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(spooled.length).toBeGreaterThanOrEqual(1);
    const lines = spooled.flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'));
    expect(lines.map((l) => JSON.parse(l).execution_id)).toContain(r.record.execution_id);
  });

  it('a secret sent under a secret key that fails validation is not quoted back in the message, hint or issues', async () => {
    const dir = tempDir();
    const path = join(dir, 'f.db');
    const login = defineTool({
      name: 'login',
      description: 'logs in',
      input: {
        type: 'object',
        properties: {
          user: { type: 'string', minLength: 4 },
          password: { type: 'string', minLength: 40 },
          creds: { type: 'object', properties: { api_key: { type: 'string', pattern: '^key-' }, 'x-auth-token': { type: 'number' } } },
        },
      },
      execute: () => ({ ok: true }),
    });
    const rt = createRuntime({ tools: [login], store: `sqlite:${path}`, clock: createVirtualClock() });
    const r = await rt.execute('login', { user: 'ann', password: SECRETS.password, creds: { api_key: SECRETS.password, 'x-auth-token': SECRETS.password } });
    await rt.close();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // The field names stay, so the agent still knows what to fix; a non-secret field's value is still quoted.
    expect(r.error.message).toContain('password: must NOT have fewer than 40 characters, got [REDACTED]');
    expect(r.error.message).toContain('creds.api_key: must match ^key-, got [REDACTED]');
    expect(r.error.message).toContain('user: must NOT have fewer than 4 characters, got "ann"');
    expect(r.error.issues?.find((i) => i.path === 'password')?.received).toBe('[REDACTED]');
    expect(r.error.issues?.find((i) => i.path === 'user')?.received).toBe('ann');
    expect(r.feedback.hint).toContain('got [REDACTED]');
    expect(JSON.stringify(r)).not.toContain(SECRETS.password);
    const bytes = readdirSync(dir)
      .filter((f) => f.startsWith('f.db'))
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    expect(bytes).toContain('must NOT have fewer than 40 characters');
    expect(bytes.includes(SECRETS.password), 'the password leaked into the database').toBe(false);
  });

  it('a long secret quoted by a validation message leaves no fragment where the quote is cut', async () => {
    const dir = tempDir();
    const path = join(dir, 'f.db');
    const awsSecret = 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCY7Q2m4PLEKE';
    // Each secret starts about 40 characters in, so the ~57-character quote ends inside it.
    const pad = 'please use the following value for the call: ';
    // The masks keep a key's kind (`sk-proj-…[REDACTED]`), so the fragments are taken after it.
    const secrets = [SECRETS.openai.slice('sk-proj-'.length), SECRETS.jwt.slice(3), SECRETS.github.slice(4), awsSecret];
    const values = [`${pad}${SECRETS.openai}`, `${pad}${SECRETS.jwt}`, `${pad}${SECRETS.github}`, `the upload to the bucket failed; aws_key: ${awsSecret}`];
    const note = defineTool({
      name: 'note',
      description: 'takes a short note',
      input: {
        type: 'object',
        properties: { a: { type: 'string', maxLength: 10 }, b: { type: 'string', pattern: '^[0-9]+$' }, c: { type: 'string', maxLength: 10 }, d: { type: 'string', maxLength: 10 } },
      },
      execute: () => ({ ok: true }),
    });
    const rt = createRuntime({ tools: [note], store: `sqlite:${path}`, clock: createVirtualClock() });
    const r = await rt.execute('note', { a: values[0], b: values[1], c: values[2], d: values[3] });
    await rt.close();
    if (r.ok) throw new Error('expected a rejection');
    // The quote still says what was sent, as far as it is not secret.
    expect(r.record.error_message).toContain('a: must NOT have more than 10 characters, got "please use the following value for the call: sk-proj-');
    const bytes = readdirSync(dir)
      .filter((f) => f.startsWith('f.db'))
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    const texts = { error_message: r.record.error_message ?? '', hint: r.feedback.hint, error: r.error.message, record: JSON.stringify(r.record), result: JSON.stringify(r), database: bytes };
    for (const secret of secrets) {
      for (let i = 0; i + 8 <= secret.length; i++) {
        const fragment = secret.slice(i, i + 8);
        for (const [where, text] of Object.entries(texts)) {
          expect(text.includes(fragment), `${where} holds ${fragment} of ${secret.slice(0, 8)}…`).toBe(false);
        }
      }
    }
  });

  it("keeps no piece of a secret the plan's author wrote into a fault (body, message, headers) in the SQLite record", async () => {
    const dir = tempDir();
    const path = join(dir, 'f.db');
    const faults = createFaultPlan({
      version: 1,
      rules: [{ id: 'leaky', tool: 'get_profile', fault: 'http_status', params: { status: 401, message: `the key ${SECRETS.openai} was revoked`, body: { error: 'unauthorized', password: SECRETS.password }, headers: { 'x-api-key': SECRETS.github } } }],
    });
    const rt = createRuntime({ tools, faults, store: `sqlite:${path}`, clock: createVirtualClock(), recording: { spool: false } });
    const result = await rt.execute('get_profile', {}, { traceId: 'T' });
    await rt.close();
    expect(result.ok).toBe(false);
    const store = createSqliteStore({ path, readonly: true });
    try {
      const records = await store.query({ traceId: 'T' });
      expect(records).toMatchObject([{ status: 'failure', fault: { kind: 'http_status', rule_id: 'leaky', params: { status: 401 } } }]);
      for (const secret of [SECRETS.password, SECRETS.openai.slice('sk-proj-'.length), SECRETS.github.slice('ghp_'.length)]) {
        expectNoPieceOf(secret, JSON.stringify(records), 'the stored record');
      }
    } finally {
      await store.close();
    }
  });

  it('refuses store and recorder together', () => {
    expect(() => createRuntime({ tools, store: 'memory:', recorder: { enqueue: () => undefined } })).toThrow(/either store or recorder/);
  });

  it('refuses a store or recorder it could not use, instead of dropping the records in silence', () => {
    const bad = (extra: object) => () => createRuntime({ tools, ...extra } as Parameters<typeof createRuntime>[0]);
    expect(bad({ store: 42 })).toThrow(/store must be a spec .* or a Store with insert\(\), got number/);
    expect(bad({ store: null })).toThrow(/got null/);
    expect(bad({ store: { path: 'x.db' } })).toThrow(/got object/);
    expect(bad({ recorder: (r: unknown) => r })).toThrow(/recorder must be an object with enqueue\(record\), got function/);
    expect(bad({ recorder: {} })).toThrow(/got object/);
    let caught: unknown;
    try {
      bad({ store: 42 })();
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: 'ConfigError', field: 'store' });
    expect(bad({ store: createMemoryStore() })).not.toThrow();
  });
});

describe('a store that cannot be written', () => {
  it('is reported as the store (not the correction memory), and the calls still succeed', async () => {
    const dir = tempDir();
    const reports: [string, string][] = [];
    const down = Object.assign(createMemoryStore(), {
      insert: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });
      },
    });
    const rt = createRuntime({
      tools: [defineTool({ name: 'ping', description: 'p', input: { type: 'object' }, execute: async () => 'pong' })],
      store: down,
      recording: { spool: { path: join(dir, 'spool') }, flushIntervalMs: 5 },
      onListenerError: (error, where) => reports.push([where, (error as Error).message]),
    });
    for (let i = 0; i < 20; i++) expect((await rt.execute('ping', {})).ok).toBe(true);
    await rt.close();
    expect(reports.length).toBeGreaterThan(0);
    for (const [where] of reports) expect(where).toBe('store');
    expect(reports[0]![1]).toContain('ECONNREFUSED');
  });
});
