/**
 * Team chat: `send_message` and `list_messages`. Sending is the textbook non-idempotent write
 * with no idempotency key (seed 000's "发送消息"): a retry after a lost response posts the
 * message twice, and the only way to know is to list the channel. Channels also fail the ways
 * chat APIs do: read-only channels refuse posts (403), archived ones are closed (412), and each
 * channel takes a limited number of posts per minute (429 with Retry-After).
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { AuthError, BusinessError, ToolError } from '../runtime/tool-errors.js';
import type { CatalogContext } from './catalog-state.js';
import { keyedRandom, pick, randomInt } from './seeded-random.js';

export interface Channel {
  name: string;
  topic: string;
  /** Only admins post here; the agent's token may read. */
  read_only: boolean;
  archived: boolean;
}

export interface Message {
  message_id: string;
  channel: string;
  author: string;
  text: string;
  thread_id: string | null;
  sent_at: string;
  source: 'seed' | 'tool';
}

/** Posts accepted per channel in any rolling minute of virtual time. */
export const MESSAGES_PER_MINUTE = 10;

export const SEED_CHANNELS: readonly Channel[] = [
  { name: 'general', topic: 'Company-wide chatter', read_only: false, archived: false },
  { name: 'sales', topic: 'Deals, pipeline and the monthly numbers', read_only: false, archived: false },
  { name: 'engineering', topic: 'Builds, deploys and incidents', read_only: false, archived: false },
  { name: 'project-x', topic: 'Project X / 项目X', read_only: false, archived: false },
  { name: 'announcements', topic: 'Official announcements (admins only)', read_only: true, archived: false },
  { name: 'launch-2025', topic: 'The 2025 launch (archived)', read_only: false, archived: true },
];

const PEOPLE = ['li.wei', 'zhang.min', 'ana.souza', 'tom.becker', 'priya.nair', 'kenji.sato'];
const LINES = [
  'Standup moved to 10:30 today.',
  'Dashboard numbers for last week are in.',
  'Can someone review the rollout plan?',
  'Deploy finished, monitoring error rates.',
  '周会改到周四下午三点。',
  'Customer call went well, notes in the doc.',
  'Reminder: submit expenses by Friday.',
  'The staging database is being migrated tonight.',
];

export function seedMessages(seed: number, anchorMs: number): Message[] {
  const messages: Message[] = [];
  for (const channel of SEED_CHANNELS) {
    const random = keyedRandom(seed, 'messages', channel.name);
    const count = channel.archived ? 5 : randomInt(random, 6, 14);
    // Archived channels went quiet long ago; live ones have traffic over the last two weeks.
    const spanMs = channel.archived ? 200 * 86_400_000 : 14 * 86_400_000;
    const offsetMs = channel.archived ? 120 * 86_400_000 : 0;
    for (let i = 0; i < count; i++) {
      const sentMs = Math.floor((anchorMs - offsetMs - random() * spanMs) / 1000) * 1000;
      messages.push({
        message_id: '',
        channel: channel.name,
        author: channel.read_only ? 'admin' : pick(random, PEOPLE),
        text: pick(random, LINES),
        thread_id: null,
        sent_at: new Date(sentMs).toISOString(),
        source: 'seed',
      });
    }
  }
  messages.sort((a, b) => a.sent_at.localeCompare(b.sent_at) || a.channel.localeCompare(b.channel));
  messages.forEach((m, i) => (m.message_id = `MSG-${String(i + 1).padStart(6, '0')}`));
  return messages;
}

function channelName(raw: string): string {
  return raw.trim().replace(/^#/, '').toLowerCase();
}

interface SendArgs {
  channel: string;
  text: string;
  thread_id?: string;
}

interface ListArgs {
  channel: string;
  since?: string;
  limit: number;
}

export function messagingTools(catalog: CatalogContext): ToolSpec<any, unknown>[] {
  const { state } = catalog;

  function findChannel(raw: string): Channel {
    const name = channelName(raw);
    const channel = state.channels.find((c) => c.name === name);
    if (channel === undefined) {
      throw new BusinessError('not_found', `channel #${name} does not exist`, {
        code: 'CHANNEL_NOT_FOUND',
        details: { channel: name, channels: state.channels.filter((c) => !c.archived).map((c) => c.name) },
      });
    }
    return channel;
  }

  const send: ToolSpec<SendArgs, Message> = {
    name: 'send_message',
    description:
      'Posts a message to a channel ("#general" or "general"), optionally as a reply in a thread. ' +
      'NOT idempotent and takes no idempotency key: every call posts a new message, including a retry after a timeout or a 5xx in which the first post went through; ' +
      'call list_messages to check before sending again. ' +
      `Errors: 404 not_found for an unknown channel or thread; 403 forbidden on read-only channels (#announcements); 412 precondition_failed on archived channels; ` +
      `429 rate_limited after ${MESSAGES_PER_MINUTE} posts to one channel within a minute (wait for Retry-After).`,
    input: {
      type: 'object',
      properties: {
        channel: { type: 'string', pattern: '^#?[A-Za-z0-9][A-Za-z0-9_-]{0,79}$' },
        text: { type: 'string', minLength: 1, maxLength: 4000 },
        thread_id: { type: 'string', pattern: '^MSG-\\d{6}$', description: 'Reply in the thread of this message.' },
      },
      required: ['channel', 'text'],
      additionalProperties: false,
    },
    idempotent: false,
    annotations: { title: 'Send message', readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true },
    execute(args, ctx) {
      const now = ctx.clock.now();
      const channel = findChannel(args.channel);
      if (channel.archived) {
        throw new BusinessError('precondition_failed', `#${channel.name} is archived; messages can no longer be posted`, {
          code: 'CHANNEL_ARCHIVED',
          details: { channel: channel.name },
        });
      }
      if (channel.read_only) {
        throw new AuthError('forbidden', `this token may not post to #${channel.name}: only admins can`, { code: 'CHANNEL_READ_ONLY', status: 403, details: { channel: channel.name } });
      }
      let threadId: string | null = null;
      if (args.thread_id !== undefined) {
        const parent = state.messages.find((m) => m.message_id === args.thread_id && m.channel === channel.name);
        if (parent === undefined) {
          throw new BusinessError('not_found', `message ${args.thread_id} is not in #${channel.name}`, { code: 'THREAD_NOT_FOUND', details: { thread_id: args.thread_id, channel: channel.name } });
        }
        threadId = parent.thread_id ?? parent.message_id;
      }
      const windowStart = now - 60_000;
      const recent = state.messages.filter((m) => m.source === 'tool' && m.channel === channel.name && Date.parse(m.sent_at) > windowStart);
      if (recent.length >= MESSAGES_PER_MINUTE) {
        const oldest = Math.min(...recent.map((m) => Date.parse(m.sent_at)));
        const retryAfterMs = Math.max(1000, Math.ceil((oldest + 60_000 - now) / 1000) * 1000);
        throw new ToolError('rate_limit', 'rate_limited', `#${channel.name} accepts ${MESSAGES_PER_MINUTE} messages per minute`, {
          code: 'CHANNEL_RATE_LIMITED',
          status: 429,
          retryAfterMs,
          details: { channel: channel.name, limit_per_minute: MESSAGES_PER_MINUTE },
        });
      }
      const message: Message = {
        message_id: catalog.nextId('MSG'),
        channel: channel.name,
        author: 'agent',
        text: args.text,
        thread_id: threadId,
        sent_at: new Date(now).toISOString(),
        source: 'tool',
      };
      state.messages.push(message);
      return { ...message };
    },
  };

  const list: ToolSpec<ListArgs, { channel: string; messages: Message[]; has_more: boolean }> = {
    name: 'list_messages',
    description:
      'Lists a channel\'s messages, newest first, optionally only those sent after "since" (RFC 3339). Use it to check whether a send went through before retrying. ' +
      'Errors: 404 not_found for an unknown channel. Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        channel: { type: 'string', pattern: '^#?[A-Za-z0-9][A-Za-z0-9_-]{0,79}$' },
        since: { type: 'string', format: 'date-time' },
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
      required: ['channel'],
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'List messages', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true },
    execute(args, ctx) {
      const channel = findChannel(args.channel);
      const now = ctx.clock.now();
      const since = args.since === undefined ? -Infinity : Date.parse(args.since);
      const visible = state.messages
        .filter((m) => m.channel === channel.name && Date.parse(m.sent_at) <= now && Date.parse(m.sent_at) > since)
        .sort((a, b) => b.sent_at.localeCompare(a.sent_at) || b.message_id.localeCompare(a.message_id));
      return { channel: channel.name, messages: visible.slice(0, args.limit).map((m) => ({ ...m })), has_more: visible.length > args.limit };
    },
  };

  return [send, list];
}
