/** The send message domain's main step: posting quoted text to a channel. */
import type { DomainPlanner } from '../plan-step.js';
import { messageStep } from '../step-parts.js';

export const sendMessagePlanner: DomainPlanner = {
  claims: (intent, { has }) => has('send_message') && intent.channel !== undefined && intent.quoted[0] !== undefined,
  plan(intent, _ctx, h) {
    const { has, base, startIso } = h;
    const quoted = intent.quoted;
    const text = quoted[0];
    const channel = intent.channel;
    // Claimed only with a channel; the check carries that to the compiler.
    if (channel === undefined) return undefined;
    return messageStep('main', channel, () => text, base, startIso, has);
  },
};
