import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateAlerts } from '../monitor/alert-rules.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { LoopGuard } from './loop-guard.js';
import { createRuntime } from './runtime.js';
import { BusinessError, HttpError } from './tool-errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-loop-'));
  dirs.push(dir);
  return join(dir, 'f.db');
}

function tools() {
  const runs = { lookup: 0, send: 0 };
  let lookupFails = true;
  const lookup = defineTool({
    name: 'lookup_order',
    description: 'an order by id',
    input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    idempotent: true,
    execute: ({ id }: { id: string }) => {
      runs.lookup++;
      if (lookupFails) throw new BusinessError('not_found', `no order ${id}`);
      return { id };
    },
  });
  const send = defineTool({
    name: 'send_message',
    description: 'sends a message (not idempotent)',
    input: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'] },
    execute: (args: { to: string; text: string }) => {
      runs.send++;
      return { sent: true, ...args };
    },
  });
  const flaky = defineTool({
    name: 'flaky_search',
    description: 'always 503',
    input: { type: 'object', properties: { q: { type: 'string' } } },
    idempotent: true,
    retry: { maxRetries: 0 },
    breaker: { failureThreshold: 100 },
    execute: () => {
      throw new HttpError(503, 'down');
    },
  });
  return { runs, list: [lookup, send, flaky], succeedFromNowOn: () => (lookupFails = false) };
}

describe('loop guard', () => {
  it('is off by default: every identical failing call runs', async () => {
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock: createVirtualClock() });
    for (let i = 0; i < 6; i++) await rt.execute('lookup_order', { id: 'A-1' }, { traceId: 'T' });
    expect(t.runs.lookup).toBe(6);
    await rt.close();
  });

  it('refuses the 4th identical failing call of a session before it runs, stored as rejected / logic / loop_detected', async () => {
    const path = dbPath();
    const clock = createVirtualClock();
    const t = tools();
    const rt = createRuntime({ tools: t.list, store: `sqlite:${path}`, clock, loopGuard: true });
    const s = rt.session({ agent: 'a' });
    for (let i = 0; i < 3; i++) expect((await s.execute('lookup_order', { id: 'A-1' })).ok).toBe(false);
    const refused = await s.execute('lookup_order', { id: 'A-1' });
    expect(t.runs.lookup).toBe(3);
    expect(refused.ok).toBe(false);
    if (refused.ok) throw new Error('unreachable');
    expect(refused.record).toMatchObject({ status: 'rejected', failure_stage: 'request_build', failure_category: 'logic', failure_type: 'loop_detected', error_code: 'LOOP_DETECTED' });
    expect(refused.feedback.action).toBe('try_alternative');
    expect(refused.feedback.retryable).toBe(false);
    expect(refused.feedback.hint).toContain('already failed 3 times in this session with exactly these arguments');
    expect(refused.feedback.hint).toContain('not_found');
    // The 5th is refused too (refusals do not reset the count), other arguments still run, and so
    // does the same call in another session.
    expect((await s.execute('lookup_order', { id: 'A-1' })).record.failure_type).toBe('loop_detected');
    expect((await s.execute('lookup_order', { id: 'A-2' })).record.failure_type).toBe('not_found');
    expect((await rt.execute('lookup_order', { id: 'A-1' }, { traceId: 'other' })).record.failure_type).toBe('not_found');
    expect(t.runs.lookup).toBe(5);
    await rt.close();

    const reopened = createSqliteStore({ path });
    const breakdown = await reopened.failureBreakdown({ since: 0, until: clock.now() + 3_600_000 });
    expect(breakdown.find((r) => r.failure_type === 'loop_detected')).toMatchObject({ failure_stage: 'request_build', failure_category: 'logic', count: 2 });
    const stats = await reopened.toolStats({ since: 0, until: clock.now() + 3_600_000 });
    expect(stats.find((r) => r.tool_name === 'lookup_order')).toMatchObject({ total: 7, rejected: 2 });
    const alerts = await evaluateAlerts(reopened, { window: { since: clock.now() - 3_600_000, until: clock.now() + 1 } });
    expect(alerts.filter((a) => a.rule === 'loop_detected')).toEqual([
      expect.objectContaining({ tool_name: 'lookup_order', value: 2, message: expect.stringContaining('refused 2 identical failing calls') }),
    ]);
    await reopened.close();
  });

  it('keys sessions by sessionId across traces, and a success forgives the failures', async () => {
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock: createVirtualClock(), loopGuard: { maxIdenticalFailures: 3 } });
    await rt.execute('lookup_order', { id: 'B' }, { sessionId: 'S', traceId: 't1' });
    await rt.execute('lookup_order', { id: 'B' }, { sessionId: 'S', traceId: 't2' });
    expect((await rt.execute('lookup_order', { id: 'B' }, { sessionId: 'S', traceId: 't3' })).record.failure_type).toBe('loop_detected');
    const t2 = tools();
    const rt2 = createRuntime({ tools: t2.list, clock: createVirtualClock(), loopGuard: { maxIdenticalFailures: 3 } });
    await rt2.execute('lookup_order', { id: 'B' }, { sessionId: 'S' });
    await rt2.execute('lookup_order', { id: 'B' }, { sessionId: 'S' });
    t2.succeedFromNowOn();
    // Two failures and N = 3: the guard would refuse only the next one after another failure.
    expect((await rt2.execute('lookup_order', { id: 'B' }, { sessionId: 'S' })).ok).toBe(false);
  });

  it('says what to do instead from the kind of failure: a fallback-less 503 loop is skipped', async () => {
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock: createVirtualClock(), loopGuard: true });
    for (let i = 0; i < 3; i++) await rt.execute('flaky_search', { q: 'x' }, { traceId: 'T' });
    const r = await rt.execute('flaky_search', { q: 'x' }, { traceId: 'T' });
    if (r.ok) throw new Error('expected a refusal');
    expect(r.feedback.action).toBe('skip');
    expect(r.feedback.hint).toContain('dependency_down');
  });

  it('refuses a repeated successful write inside the window unless it carries an idempotency key', async () => {
    const clock = createVirtualClock();
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock, loopGuard: { duplicateWindowMs: 60_000 } });
    const args = { to: 'ann', text: 'hello' };
    expect((await rt.execute('send_message', args, { traceId: 'T' })).ok).toBe(true);
    const again = await rt.execute('send_message', args, { traceId: 'T' });
    if (again.ok) throw new Error('expected a refusal');
    expect(again.record).toMatchObject({ status: 'rejected', failure_category: 'logic', failure_type: 'duplicate_write' });
    expect(again.feedback.action).toBe('verify_state');
    expect(again.feedback.hint).toContain('nothing happened twice');
    expect(t.runs.send).toBe(1);
    expect((await rt.execute('send_message', args, { traceId: 'T', idempotencyKey: 'k-2' })).ok).toBe(true);
    expect((await rt.execute('send_message', { ...args, text: 'other' }, { traceId: 'T' })).ok).toBe(true);
    await clock.advance(61_000);
    expect((await rt.execute('send_message', args, { traceId: 'T' })).ok).toBe(true);
    expect(t.runs.send).toBe(4);
  });

  it('flags a repeated write instead, when told to: it runs, and the result and record say so', async () => {
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock: createVirtualClock(), loopGuard: { duplicateWrites: 'flag' } });
    const first = await rt.execute('send_message', { to: 'ann', text: 'hi' }, { traceId: 'T' });
    const second = await rt.execute('send_message', { to: 'ann', text: 'hi' }, { traceId: 'T' });
    expect(t.runs.send).toBe(2);
    if (!second.ok || !first.ok) throw new Error('expected successes');
    expect(first.notice).toBeUndefined();
    expect(second.notice?.action).toBe('verify_state');
    expect(second.notice?.hint).toContain(first.record.execution_id);
    expect(second.record.feedback?.action).toBe('verify_state');
  });

  it('refuses bad options with a ConfigError naming the field', () => {
    expect(() => new LoopGuard({ maxIdenticalFailures: 1 })).toThrow(/loopGuard.maxIdenticalFailures/);
    expect(() => new LoopGuard({ duplicateWrites: 'maybe' as 'flag' })).toThrow(/loopGuard.duplicateWrites/);
  });

  it('forgets the least recently used sessions beyond its bound', async () => {
    const t = tools();
    const rt = createRuntime({ tools: t.list, clock: createVirtualClock(), loopGuard: { maxSessions: 2 } });
    for (let i = 0; i < 3; i++) await rt.execute('lookup_order', { id: 'C' }, { sessionId: 'old' });
    await rt.execute('lookup_order', { id: 'C' }, { sessionId: 'x' });
    await rt.execute('lookup_order', { id: 'C' }, { sessionId: 'y' });
    // "old" was pushed out by x and y: its 4th call runs.
    expect((await rt.execute('lookup_order', { id: 'C' }, { sessionId: 'old' })).record.failure_type).toBe('not_found');
  });
});
