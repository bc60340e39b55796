// A deterministic OpenAI chat-messages JSONL workload for the annotation benchmark: conversations
// of 2 to 12 tool calls (sometimes several in one assistant message), about one call in eight
// failing with a realistic error body (429 with retry_after, 5xx, 400 validation, "Error: ..."
// text, timeouts), and after a failure a retry, a retry with changed arguments, a switch of tool,
// a loop of identical failing calls, or the end of the conversation. Tasks name cities, dates and
// reservation ids so the semantic judge has work to do. Same seed, same bytes.
import { closeSync, openSync, writeSync } from 'node:fs';
import { prng } from './prng.js';

const CITIES = ['Shanghai', 'Beijing', 'Paris', 'London', 'Tokyo', 'New York', 'Berlin', 'Seattle'];
const IDS = ['ZFA04Y', 'K8Q2LM', 'GV1N64', 'P0XY7R', 'M3TT9A', 'Q7BW2C'];

/** Tools with an argument maker and a success body maker. */
const TOOLS = [
  { name: 'search_flights', args: (r, c) => ({ origin: c.city, destination: CITIES[(c.n + 3) % CITIES.length], date: c.date, cabin: r() < 0.5 ? 'economy' : 'business' }), ok: (r, c) => ({ flights: [{ id: `FL${c.n % 900 + 100}`, price: 120 + Math.floor(r() * 400), seats: 4 }, { id: `FL${c.n % 700 + 200}`, price: 180 + Math.floor(r() * 300), seats: 0 }] }) },
  { name: 'get_reservation', args: (_r, c) => ({ reservation_id: c.id }), ok: (_r, c) => ({ reservation_id: c.id, status: 'confirmed', passengers: 2, flights: [{ id: `FL${c.n % 900 + 100}`, date: c.date }] }) },
  { name: 'book_flight', args: (_r, c) => ({ flight_id: `FL${c.n % 900 + 100}`, passengers: 2, payment_id: `card_${c.n % 10000}` }), ok: (_r, c) => ({ booking: `B${c.n}`, status: 'confirmed', total: 412 }) },
  { name: 'cancel_reservation', args: (_r, c) => ({ reservation_id: c.id, reason: 'change of plans' }), ok: (_r, c) => ({ reservation_id: c.id, status: 'cancelled', refund: 180 }) },
  { name: 'send_email', args: (_r, c) => ({ to: `user${c.n % 5000}@example.com`, subject: 'Your trip', body: `Reservation ${c.id} is updated.` }), ok: () => ({ sent: true, message_id: 'msg_1' }) },
  { name: 'get_weather', args: (_r, c) => ({ city: c.city, date: c.date }), ok: (r, c) => ({ city: c.city, temp_c: Math.floor(r() * 30), conditions: 'cloudy' }) },
  { name: 'query_sales', args: (_r, c) => ({ month: c.date.slice(0, 7), region: 'east', limit: 50 }), ok: (r) => ({ total: Math.floor(r() * 1e6), rows: [{ sku: 'A1', units: 3 }, { sku: 'B2', units: 9 }] }) },
  { name: 'create_order', args: (_r, c) => ({ sku: `SKU-${c.n % 300}`, quantity: 1 + (c.n % 3), customer_id: `cust_${c.n % 8000}` }), ok: (_r, c) => ({ order_id: `ord_${c.n}`, status: 'pending' }) },
  { name: 'update_profile', args: (_r, c) => ({ user_id: `user_${c.n % 5000}`, phone: '+1-555-0100' }), ok: () => ({ updated: true }) },
  { name: 'calculate', args: (r) => ({ expression: `${Math.floor(r() * 500)} * 2` }), ok: (r) => ({ result: Math.floor(r() * 1000) }) },
];

const ERRORS = [
  () => ({ error: { message: 'Too Many Requests', code: 'rate_limited' }, status: 429, retry_after: 2 }),
  () => ({ error: 'upstream database timeout', status: 504 }),
  () => ({ error: 'service unavailable', status: 503 }),
  () => ({ error: { message: "missing required field 'date'", code: 'validation_error' }, status: 400 }),
  () => ({ error: 'invalid token', status: 401 }),
  () => 'Error: reservation not found',
  () => ({ status: 'error', message: 'internal error while processing the request' }),
  () => ({ error: 'connection reset by peer', code: 'ECONNRESET' }),
];

function taskOf(r, c) {
  const forms = [
    `What is the weather in ${c.city} tomorrow?`,
    `Please cancel reservation ${c.id} and email me a confirmation.`,
    `Book the cheapest flight from ${c.city} next week for two passengers.`,
    `Show the sales for the past 7 days in the east region.`,
    `Order two more of SKU-${c.n % 300} for customer cust_${c.n % 8000}.`,
  ];
  return forms[Math.floor(r() * forms.length)];
}

/**
 * Writes conversations to `path` until they hold `steps` tool calls in all.
 * @returns {{ conversations: number, steps: number, bytes: number }}
 */
export function writeOpenAiWorkload(path, steps, seed = 42) {
  const r = prng(seed);
  const fd = openSync(path, 'w');
  let buffer = [];
  let buffered = 0;
  let bytes = 0;
  let made = 0;
  let n = 0;
  const flush = () => {
    const text = buffer.join('');
    writeSync(fd, text);
    bytes += Buffer.byteLength(text);
    buffer = [];
    buffered = 0;
  };
  try {
    while (made < steps) {
      n += 1;
      const day = 1 + (n % 28);
      const c = { n, city: CITIES[n % CITIES.length], id: IDS[n % IDS.length], date: `2026-03-${String(day).padStart(2, '0')}` };
      const messages = [
        { role: 'system', content: 'You are a helpful travel and operations agent. Use the tools; never invent ids.' },
        { role: 'user', content: taskOf(r, c) },
      ];
      const target = Math.min(steps - made, 2 + Math.floor(r() * 11));
      let callNo = 0;
      let tool = TOOLS[Math.floor(r() * TOOLS.length)];
      let args = tool.args(r, c);
      let loopLeft = 0;
      let ended = false;
      while (callNo < target && !ended) {
        // Now and then two independent calls in one assistant message.
        const parallel = loopLeft === 0 && callNo + 1 < target && r() < 0.15 ? 2 : 1;
        const calls = [];
        for (let p = 0; p < parallel; p++) {
          const t = p === 0 ? tool : TOOLS[Math.floor(r() * TOOLS.length)];
          const a = p === 0 ? args : t.args(r, c);
          calls.push({ id: `call_${n}_${callNo}`, tool: t, args: a });
          callNo += 1;
        }
        messages.push({ role: 'assistant', content: r() < 0.3 ? 'Let me check that.' : null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.tool.name, arguments: JSON.stringify(call.args) } })) });
        let failedLast = false;
        for (const call of calls) {
          const fails = loopLeft > 0 || r() < 0.12;
          const body = fails ? ERRORS[Math.floor(r() * ERRORS.length)]() : call.tool.ok(r, c);
          messages.push({ role: 'tool', tool_call_id: call.id, content: typeof body === 'string' ? body : JSON.stringify(body) });
          failedLast = fails;
        }
        if (loopLeft > 0) {
          loopLeft -= 1;
          continue;
        }
        if (failedLast) {
          const next = r();
          if (next < 0.3) continue; // the same call again
          if (next < 0.5) {
            args = { ...args, retry_note: `attempt ${callNo}` };
            continue;
          }
          if (next < 0.62) {
            loopLeft = 4; // the same failing call, five more times
            continue;
          }
          if (next < 0.7) {
            ended = true;
            break;
          }
        }
        tool = TOOLS[Math.floor(r() * TOOLS.length)];
        args = tool.args(r, c);
      }
      made += callNo;
      messages.push({ role: 'assistant', content: 'Done. Anything else?' });
      const line = { id: `conv-${n}`, messages };
      if (n % 3 === 0) line.reward = r() < 0.6 ? 1 : 0;
      const text = `${JSON.stringify(line)}\n`;
      buffer.push(text);
      buffered += text.length;
      if (buffered > 4 << 20) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { conversations: n, steps: made, bytes };
}
