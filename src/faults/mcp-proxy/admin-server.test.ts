/**
 * The admin endpoint: bearer auth on every route, and a plan replaced over HTTP takes effect on
 * the very next call through a running proxy.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateAdminToken, startAdminServer, type AdminServer } from './admin-server.js';
import { startTestProxy, type TestProxy } from './mcp-proxy.test-helpers.js';

const TOKEN = 'test-admin-token-0123456789';

describe('admin endpoint', () => {
  let upstream: McpServer;
  let t: TestProxy;
  let admin: AdminServer;
  const call = (path: string, init: RequestInit = {}, token: string | null = TOKEN) =>
    fetch(`${admin.url}${path}`, { ...init, headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...init.headers } });

  beforeAll(async () => {
    upstream = new McpServer({ name: 'calendar', version: '1.0.0' });
    upstream.registerTool('create_event', { description: 'creates an event', inputSchema: { title: z.string() } }, async ({ title }) => ({
      content: [{ type: 'text', text: JSON.stringify({ id: 'evt-1', title }) }],
    }));
    const [upstreamSide, serverSide] = InMemoryTransport.createLinkedPair();
    await upstream.connect(serverSide);
    t = await startTestProxy({ transport: upstreamSide }, { version: 1, rules: [] });
    admin = await startAdminServer({ plan: t.plan, token: TOKEN, state: () => ({ ...t.proxy.stats() }) });
  });
  afterAll(async () => {
    await admin?.close();
    await t?.close();
    await upstream?.close();
  });

  it('listens on 127.0.0.1 only', () => {
    expect(admin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers 401 without a token, with a wrong token, and with another scheme', async () => {
    for (const res of [
      await call('/plan', {}, null),
      await call('/plan', {}, 'not-the-token'),
      await call('/state', {}, `${TOKEN}x`),
      await call('/plan', { method: 'PUT', body: 'version: 1\nrules: []\n' }, 'wrong'),
      await fetch(`${admin.url}/plan`, { headers: { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` } }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect(await res.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.stringContaining('Authorization: Bearer') } });
    }
    // The refused PUT changed nothing.
    expect(t.plan.spec.rules).toEqual([]);
  });

  it('replaces the plan live: the next call through the proxy gets the new fault', async () => {
    expect(await t.client.callTool({ name: 'create_event', arguments: { title: 'standup' } })).toEqual({ content: [{ type: 'text', text: '{"id":"evt-1","title":"standup"}' }] });
    const put = await call('/plan', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: 'version: 1\nrules:\n  - id: outage\n    tool: create_*\n    fault: http_status\n    params: { status: 400, message: title is too short }\n',
    });
    expect(put.status).toBe(200);
    // The plan now in force, as the HTTP proxy's admin answers.
    expect(await put.json()).toEqual(t.plan.spec);
    expect(t.plan.spec.rules.map((rule) => rule.id)).toEqual(['outage']);
    const error = await t.client.callTool({ name: 'create_event', arguments: { title: 'x' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);

    const plan = await call('/plan');
    expect(plan.status).toBe(200);
    expect(await plan.json()).toMatchObject({ version: 1, rules: [{ id: 'outage', tool: 'create_*', fault: 'http_status' }] });
    const state = (await (await call('/state')).json()) as { calls: number; plan: { rules: Record<string, { injections: number }> } };
    expect(state.calls).toBe(2);
    expect(state.plan.rules['outage']).toMatchObject({ injections: 1 });
    expect(await t.nthRecord(2)).toMatchObject({ error_code: 'MCP_-32602', fault: { kind: 'http_status', rule_id: 'outage' } });
  });

  it("answers GET /state as the HTTP proxy's admin does, { plan, proxy }, with the proxy's counters also at the top level as before", async () => {
    const state = (await (await call('/state')).json()) as Record<string, unknown>;
    const stats = { ...t.proxy.stats(), recorder: expect.any(Object) };
    expect(state).toEqual({ ...stats, plan: t.plan.state(), proxy: stats });
    expect(state['plan']).toEqual({ startedAt: expect.any(Number), calls: expect.any(Object), rules: expect.any(Object) });
  });

  it('accepts JSON plans and refuses invalid ones with a 400 naming the problem, keeping the old plan', async () => {
    const json = await call('/plan', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1, rules: [{ id: 'slow', tool: '*', fault: 'latency', params: { ms: 5 } }] }) });
    expect(json.status).toBe(200);
    const bad = await call('/plan', { method: 'PUT', body: 'version: 1\nrules:\n  - tool: x\n    fault: http_status\n    params: { status: 418 }\n' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'INVALID_PLAN', message: expect.stringMatching(/status/) });
    const broken = await call('/plan', { method: 'PUT', body: 'version: [1' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe('INVALID_PLAN');
    expect(t.plan.spec.rules.map((r) => r.id)).toEqual(['slow']);
  });

  it('answers 405 for other methods on known paths and 404 elsewhere', async () => {
    const deleted = await call('/plan', { method: 'DELETE' });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get('allow')).toBe('GET, HEAD, PUT');
    expect(((await deleted.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    expect((await call('/state', { method: 'PUT', body: '{}' })).status).toBe(405);
    const missing = await call('/nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NO_ROUTE');
  });

  it("lists its routes in a 404 as the HTTP proxy's admin does", async () => {
    const rules = structuredClone(t.plan.spec.rules);
    const missing = await call('/plans?x=1', { method: 'PUT', body: 'version: 1\nrules: []\n' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { code: 'NO_ROUTE', message: 'no admin route PUT /plans; use GET /plan, PUT /plan or GET /state' },
    });
    expect(t.plan.spec.rules).toEqual(rules);
  });

  it("answers HEAD as GET without a body, as the HTTP proxy's admin does", async () => {
    const get = await call('/plan');
    const body = await get.text();
    const head = await call('/plan', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(await head.text()).toBe('');
    expect((await call('/state', { method: 'HEAD' })).status).toBe(200);
  });

  it('answers a failure of its own with 500 INTERNAL_ERROR', async () => {
    const failing = await startAdminServer({
      plan: t.plan,
      token: TOKEN,
      state: () => {
        throw new Error('the counters are unavailable');
      },
    });
    try {
      const res = await fetch(`${failing.url}/state`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'the counters are unavailable' } });
    } finally {
      await failing.close();
    }
  });

  it('refuses a plan over its size limit with 413 PLAN_TOO_LARGE and keeps the plan it had', async () => {
    const small = await startAdminServer({ plan: t.plan, token: TOKEN, maxBodyBytes: 64 });
    try {
      const before = t.plan.spec.rules.map((r) => r.id);
      const res = await fetch(`${small.url}/plan`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` }, body: `version: 1\nrules: []\n# ${'x'.repeat(200)}\n` });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: { code: 'PLAN_TOO_LARGE', message: 'the plan exceeds 64 bytes' } });
      expect(t.plan.spec.rules.map((r) => r.id)).toEqual(before);
    } finally {
      await small.close();
    }
  });

  it('generates unguessable tokens and refuses an empty one', async () => {
    const a = generateAdminToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(generateAdminToken()).not.toBe(a);
    await expect(startAdminServer({ plan: t.plan, token: '  ' })).rejects.toThrow('must not be empty');
  });
});
