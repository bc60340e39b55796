import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrajectories } from '../../trajectory/import-file.js';
import { repositoryRoot } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { trajectory } from '../trajectory.test-helpers.js';
import { inferOutcomeFromConversation } from './final-answer.js';

const corpus = join(repositoryRoot(), 'corpora', 'logs', 'outcomes');
const expected = (JSON.parse(readFileSync(join(corpus, 'expected.json'), 'utf8')) as { conversations: Record<string, { outcome: string; split: string }> }).conversations;

async function accuracy(file: string): Promise<{ right: number; total: number; wrong: string[] }> {
  let right = 0;
  let total = 0;
  const wrong: string[] = [];
  for await (const t of readTrajectories('openai', join(corpus, file))) {
    const want = expected[t.source_id!]!.outcome;
    const got = inferOutcomeFromConversation(t);
    total++;
    if (got?.outcome === want) right++;
    else wrong.push(`${t.source_id}: expected ${want}, inferred ${got?.outcome ?? 'nothing'} (${got?.evidence ?? ''})`);
  }
  return { right, total, wrong };
}

const answered = (answer: string, options: { lastFails?: boolean } = {}): Trajectory => ({
  ...trajectory([{ tool: 'get_order', params: { order_id: 'W1' }, ...(options.lastFails === true ? { fail: { category: 'system' as const, kind: 'server_error' } } : { body: { status: 'ok' } }) }]),
  closing_turns: [{ role: 'assistant', content: answer }],
});

describe('outcomes inferred from the final answer', () => {
  it('reads the conversations the patterns were developed on at 0.9 or better', async () => {
    const { right, total, wrong } = await accuracy('tuned.jsonl');
    expect(total).toBe(Object.values(expected).filter((e) => e.split === 'tuned').length);
    expect(right / total, wrong.join('\n')).toBeGreaterThanOrEqual(0.95);
  });

  it('reads held-out conversations, never tuned on, at 0.9 or better', async () => {
    const { right, total, wrong } = await accuracy('held-out.jsonl');
    expect(total).toBe(16);
    expect(right / total, wrong.join('\n')).toBeGreaterThanOrEqual(0.9);
  });

  it('says how sure it is and what it read', () => {
    const done = inferOutcomeFromConversation(answered('Your order W1 has been cancelled and the refund is on its way.'))!;
    expect(done.outcome).toBe('success');
    expect(done.evidence).toMatch(/^completion:"has been cancelled"/);
    const gaveUp = inferOutcomeFromConversation(answered("I'm sorry, I wasn't able to cancel the order. Please contact support.", { lastFails: true }))!;
    expect(gaveUp.outcome).toBe('failure');
    expect(gaveUp.confidence).toBeGreaterThan(done.confidence - 0.2);
    expect(gaveUp.evidence).toContain('inability:');
  });

  it('takes courtesy and closing formulas for what they are', () => {
    expect(inferOutcomeFromConversation(answered('Sorry for the wait! Your booking is confirmed. Let me know if I can help with anything else.'))?.outcome).toBe('success');
    expect(inferOutcomeFromConversation(answered('抱歉让您久等了，已为您改签成功。还有什么可以帮您的吗？'))?.outcome).toBe('success');
    expect(inferOutcomeFromConversation(answered('非常抱歉，系统暂时无法处理您的请求，请稍后再试。', { lastFails: true }))?.outcome).toBe('failure');
  });

  it('lets what comes after a contrast decide', () => {
    expect(inferOutcomeFromConversation(answered('The first attempt failed, but the retry went through and the order is now confirmed.'))?.outcome).toBe('success');
    expect(inferOutcomeFromConversation(answered('I updated the address, but the order could not be rescheduled.'))?.outcome).toBe('failure');
  });

  it('infers nothing without a closing answer', () => {
    expect(inferOutcomeFromConversation(trajectory([{ tool: 'get_order', fail: { category: 'system', kind: 'server_error' } }]))).toBeNull();
  });
});
