/** The list messages domain's main step: the latest messages of a channel. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, arrayAt } from '../step-parts.js';

export const listMessagesPlanner: DomainPlanner = {
  claims: (intent, { has }) => has('list_messages') && intent.channel !== undefined,
  plan(intent, _ctx, h) {
    const { base } = h;
    const channel = intent.channel;
    return {
      key: 'main',
      tool: 'list_messages',
      write: false,
      check: base,
      args: () => ({ channel: `#${channel}`, limit: 5 }),
      summary: (o) => {
        const messages = arrayAt(asObject(o), 'messages');
        return `Latest in #${channel}: ${messages.map((m) => `${String(m['message_id'])} (#${String(m['channel'])}) ${String(m['author'])}: "${String(m['text'])}"`).join('; ')}`;
      },
    };
  },
};
