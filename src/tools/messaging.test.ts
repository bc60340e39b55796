import { describe, expect, it } from 'vitest';
import { harness } from './catalog.test-helpers.js';
import { MESSAGES_PER_MINUTE } from './messaging.js';

describe('send_message and list_messages', () => {
  it('posts a message that list_messages shows first', async () => {
    const h = harness();
    const sent = await h.ok('send_message', { channel: '#sales', text: 'March numbers are in' });
    expect(sent).toMatchObject({ channel: 'sales', author: 'agent', text: 'March numbers are in', thread_id: null, sent_at: '2026-03-29T14:00:00.000Z' });
    expect(sent.message_id).toMatch(/^MSG-\d{6}$/);
    const listed = await h.ok('list_messages', { channel: 'sales', limit: 3 });
    expect(listed.messages[0]).toEqual(sent);
    expect(listed.has_more).toBe(true);
  });

  it('is not idempotent: a repeated send posts twice, and the state counts the duplicate', async () => {
    const h = harness();
    await h.ok('send_message', { channel: 'general', text: 'Deploy done' });
    await h.ok('send_message', { channel: '#general', text: 'Deploy done' });
    await h.ok('send_message', { channel: 'general', text: 'Something else' });
    const dup = h.state.duplicates().messages;
    expect(dup.extra).toBe(1);
    expect(dup.groups[0]!.ids).toHaveLength(2);
    expect(h.state.calls['send_message']).toBe(3);
  });

  it('replies in threads, keeping replies on the thread root', async () => {
    const h = harness();
    const root = await h.ok('send_message', { channel: 'engineering', text: 'Incident?' });
    const reply = await h.ok('send_message', { channel: 'engineering', text: 'Looking', thread_id: root.message_id });
    const nested = await h.ok('send_message', { channel: 'engineering', text: 'Fixed', thread_id: reply.message_id });
    expect(reply.thread_id).toBe(root.message_id);
    expect(nested.thread_id).toBe(root.message_id);
    expect(await h.fail('send_message', { channel: 'sales', text: 'x', thread_id: root.message_id })).toMatchObject({ type: 'not_found', code: 'THREAD_NOT_FOUND' });
  });

  it('fails like a chat API: 404 unknown channel, 403 read-only, 412 archived', async () => {
    const h = harness();
    const unknown = await h.fail('send_message', { channel: 'random', text: 'hi' });
    expect(unknown).toMatchObject({ type: 'not_found', code: 'CHANNEL_NOT_FOUND' });
    expect((unknown.body as { channels: string[] }).channels).toContain('general');
    expect(await h.fail('send_message', { channel: 'announcements', text: 'hi' })).toMatchObject({ category: 'auth', type: 'forbidden', status: 403 });
    expect(await h.fail('send_message', { channel: 'launch-2025', text: 'hi' })).toMatchObject({ category: 'business', type: 'precondition_failed', code: 'CHANNEL_ARCHIVED' });
    expect(h.state.messages.filter((m) => m.source === 'tool')).toHaveLength(0);
    expect(await h.fail('list_messages', { channel: 'random' })).toMatchObject({ type: 'not_found' });
    expect((await h.ok('list_messages', { channel: 'announcements' })).messages.length).toBeGreaterThan(0);
  });

  it('rate-limits each channel per minute of virtual time, with a Retry-After', async () => {
    const h = harness();
    for (let i = 0; i < MESSAGES_PER_MINUTE; i++) {
      await h.ok('send_message', { channel: 'project-x', text: `update ${i}` });
      await h.clock.advance(1000);
    }
    const limited = await h.fail('send_message', { channel: 'project-x', text: 'one more' });
    expect(limited).toMatchObject({ category: 'rate_limit', type: 'rate_limited', status: 429, code: 'CHANNEL_RATE_LIMITED' });
    // The oldest post was 10 s ago: the window frees up in 50 s.
    expect(limited.retryAfterMs).toBe(50_000);
    await h.ok('send_message', { channel: 'general', text: 'other channels are fine' });
    await h.clock.advance(50_000);
    await h.ok('send_message', { channel: 'project-x', text: 'one more' });
  });

  it('lists only messages after "since", and none from the virtual future', async () => {
    const h = harness();
    await h.ok('send_message', { channel: 'general', text: 'now' });
    const since = await h.ok('list_messages', { channel: 'general', since: '2026-03-29T13:59:59Z' });
    expect(since.messages.map((m: { text: string }) => m.text)).toEqual(['now']);
    const early = harness({ clockStart: Date.UTC(2026, 2, 20) });
    const visible = await early.ok('list_messages', { channel: 'general', limit: 200 });
    for (const m of visible.messages) expect(m.sent_at <= '2026-03-20T00:00:00.000Z').toBe(true);
  });
});
