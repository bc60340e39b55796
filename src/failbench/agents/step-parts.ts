/**
 * What the planners of several domains share: reading tool outputs, the lines an answer is made
 * of, idempotency keys, and the steps that confirm a file write or post a message.
 */
import type { CheckContext } from './check-result.js';
import type { Confirmation, Obj, PlanContext, Step, StepOutputs } from './plan-step.js';

export const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);
export const arrayAt = (o: Obj | undefined, key: string): Obj[] => (Array.isArray(o?.[key]) ? (o[key] as unknown[]).map((x) => asObject(x) ?? {}) : []);

/** The calendar's home zone, as its tool description says; used when the user names none. */
export const CALENDAR_HOME = 'Asia/Shanghai';

export const money = (cents: unknown) => (typeof cents === 'number' ? `$${(cents / 100).toFixed(2)}` : '?');

export function orderLine(o: Obj | undefined): string {
  if (o === undefined) return 'no order';
  const items = arrayAt(o, 'items').map((i) => `${String(i['quantity'])} x ${String(i['sku'])}`).join(', ');
  return `Order ${String(o['order_id'])} for ${String(o['customer_id'])}: ${items}, total ${money(o['total_cents'])}, status ${String(o['status'])}`;
}

export function paymentLine(o: Obj | undefined): string {
  if (o === undefined) return 'no payment';
  return `Payment ${String(o['payment_id'])}: ${String(o['status'])}, amount ${money(o['amount_cents'])}, refundable ${money(o['refundable_cents'])}`;
}

export function idempotencyKey(ctx: PlanContext, step: string): string {
  return `${ctx.taskId}-${step}`;
}

/** A file write is there when reading the path gives back the content written. */
export function fileConfirm(has: (t: string) => boolean): Pick<Step, 'confirm'> {
  if (!has('read_file')) return {};
  return {
    confirm: (args: Obj): Confirmation => ({
      tool: 'read_file',
      args: { path: args['path'] },
      find: (output) => {
        const f = asObject(output);
        return f !== undefined && f['content'] === args['content'] ? { path: f['path'], size: f['size'], version: f['version'], created_at: f['created_at'], updated_at: f['updated_at'] } : undefined;
      },
    }),
  };
}

export function messageStep(key: string, channel: string, text: (prior: StepOutputs) => string | undefined, base: CheckContext, startIso: string, has: (t: string) => boolean): Step {
  return {
    key,
    tool: 'send_message',
    write: true,
    check: base,
    args: (prior) => {
      const t = text(prior);
      return t === undefined ? undefined : { channel: `#${channel}`, text: t };
    },
    ...(has('list_messages')
      ? {
          confirm: (args: Obj): Confirmation => ({
            tool: 'list_messages',
            // A minute back, so that a post made at this very instant is inside the window.
            args: { channel: `#${channel}`, since: new Date(Date.parse(startIso) - 60_000).toISOString(), limit: 50 },
            find: (output) => arrayAt(asObject(output), 'messages').find((m) => m['text'] === args['text'] && m['author'] === 'agent'),
          }),
        }
      : {}),
    summary: (o) => `Posted to #${String(asObject(o)?.['channel'] ?? channel)} (${String(asObject(o)?.['message_id'] ?? '?')})`,
  };
}
