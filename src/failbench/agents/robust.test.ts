import { describe, expect, it } from 'vitest';
import { createRobustAgent } from './robust.js';
import { fail, http, ok, scriptedTask, weather } from './scripted-task.test-helpers.js';

const robust = createRobustAgent();

describe('the robust agent', () => {
  it('waits out Retry-After on the task clock before calling again', async () => {
    const { task, calls, sleeps } = scriptedTask("What's the weather in Shanghai tomorrow?", ['get_weather'], (_t, _a, n) =>
      n === 1 ? http(429, { headers: { 'retry-after': '30' } }) : ok(weather('Shanghai', '2026-03-30')),
    );
    const outcome = await robust.run(task);
    expect(sleeps).toEqual([30_000]);
    expect(calls.map((c) => c.at)).toEqual([0, 30_000]);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_weather', category: 'rate_limit' })]);
  });

  it('escalates a 401 at once, without touching the arguments', async () => {
    const { task, calls } = scriptedTask('上海明天的天气怎么样？', ['get_weather'], () => http(401, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }));
    const outcome = await robust.run(task);
    expect(calls).toHaveLength(1);
    expect(outcome.status).toBe('escalated');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ category: 'auth', type: 'unauthorized' })]);
  });

  it('fixes exactly the argument a validation error names, from the allowed values', async () => {
    const { task, calls } = scriptedTask('Weather in London tomorrow, unit "farenheit".', ['get_weather'], (_t, args) =>
      args['unit'] === 'fahrenheit'
        ? ok(weather('London', '2026-03-30', { unit: 'fahrenheit', timezone: 'Europe/London' }))
        : fail({ code: 'INVALID_ARGUMENTS', message: 'invalid arguments', status: 400, body: { issues: [{ path: 'unit', code: 'enum_mismatch', expected: ['celsius', 'fahrenheit'], received: 'farenheit' }] } }),
    );
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.args)).toEqual([
      { city: 'London', date: '2026-03-30', unit: 'farenheit' },
      { city: 'London', date: '2026-03-30', unit: 'fahrenheit' },
    ]);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses[0]).toMatchObject({ category: 'parameter' });
  });

  it.each([
    ["What's the weather in Shanghai tomorrow?", 'Shanghai', '2026-03-30'],
    ['上海明天的天气怎么样？', 'Shanghai', '2026-03-30'],
    ['北京昨天的天气如何？', 'Beijing', '2026-03-28'],
    // 14:00 UTC is already 01:00 the next day in Sydney.
    ['What is the weather in Sydney today?', 'Sydney', '2026-03-30'],
  ])('checks the date of a 200 against "%s" and re-queries a wrong one', async (instruction, city, date) => {
    const { task, calls } = scriptedTask(instruction, ['get_weather'], (_t, _a, n) => ok(weather(city, n === 1 ? '2026-03-27' : date)));
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.args['date'])).toEqual([date, date]);
    expect(outcome.status).toBe('completed');
    expect(outcome.answer).toContain(`${city} on ${date}`);
    expect(outcome.answer).not.toContain('2026-03-27');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_weather', category: 'semantic', type: 'date_mismatch' })]);
  });

  it('flags another entity in a 200 and does not pass it on', async () => {
    const { task } = scriptedTask('Give me the forecast for Beijing the day after tomorrow.', ['get_weather'], () => ok(weather('Tianjin', '2026-03-31')));
    const outcome = await robust.run(task);
    expect(outcome.status).toBe('gave_up');
    expect(outcome.answer).not.toContain('Tianjin');
    expect(outcome.diagnoses[0]).toMatchObject({ category: 'semantic', type: 'entity_mismatch' });
  });

  it('looks at the state before repeating a write whose outcome is unknown, and does not repeat one that went through', async () => {
    const { task, calls } = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (tool) =>
      tool === 'send_message'
        ? fail({ code: 'TIMEOUT', message: 'timed out after 10000 ms' })
        : ok({ channel: 'engineering', messages: [{ message_id: 'MSG-000054', channel: 'engineering', author: 'agent', text: 'Deploy finished.', sent_at: '2026-03-29T14:00:00.000Z' }], has_more: false }),
    );
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages']);
    expect(outcome.status).toBe('completed');
    expect(outcome.answer).toContain('MSG-000054');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'send_message', category: 'network', type: 'timeout' })]);
  });

  it('repeats such a write once the state shows it did not happen', async () => {
    const sent = { message_id: 'MSG-000054', channel: 'engineering', author: 'agent', text: 'Deploy finished.', thread_id: null, sent_at: NOW_ISO };
    let posted = false;
    const { task, calls } = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (tool, _a, n) => {
      if (tool === 'list_messages') return ok({ channel: 'engineering', messages: posted ? [sent] : [], has_more: false });
      if (n === 1) return http(502);
      posted = true;
      return ok(sent);
    });
    const outcome = await robust.run(task);
    // The second send answered 200; reading the channel back confirms it.
    expect(calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages', 'send_message', 'list_messages']);
    expect(outcome.status).toBe('completed');
  });

  it('sends the same idempotency key on every attempt of a write that takes one', async () => {
    const orders: Record<string, unknown>[] = [];
    const { task, calls } = scriptedTask('Order 2 x SKU-1001 for customer CUS-003.', ['create_order', 'list_orders'], (tool, args, n) => {
      if (tool === 'list_orders') return ok({ total: orders.length, offset: 0, limit: 50, orders });
      if (n === 1) return fail({ code: 'ECONNRESET', message: 'read ECONNRESET' });
      const order = { order_id: 'ORD-10041', customer_id: 'CUS-003', items: [{ sku: 'SKU-1001', quantity: 2, unit_price_cents: 2499 }], total_cents: 4998, status: 'pending', created_at: NOW_ISO, ...args };
      orders.push(order);
      return ok(order);
    });
    await robust.run(task);
    const writes = calls.filter((c) => c.tool === 'create_order');
    expect(writes).toHaveLength(2);
    expect(writes[0]!.args['idempotency_key']).toEqual(expect.any(String));
    expect(writes[1]!.args['idempotency_key']).toBe(writes[0]!.args['idempotency_key']);
  });

  it('stops after three identical failures, backing off in between', async () => {
    const { task, calls, sleeps } = scriptedTask('How was the weather in Guangzhou yesterday?', ['get_weather'], () => http(503));
    const outcome = await robust.run(task);
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([2_000, 4_000]);
    expect(outcome.status).toBe('gave_up');
    expect(outcome.diagnoses[0]).toMatchObject({ category: 'system', type: 'dependency_down' });
  });

  it('does not retry a request the service says is out of range, and passes the valid range on', async () => {
    const { task, calls } = scriptedTask('What will the weather be in Shanghai on 2026-06-15?', ['get_weather'], () =>
      fail({ code: 'DATE_OUT_OF_RANGE', message: 'no weather data for 2026-06-15', body: { parameter: 'date', received: '2026-06-15', min: '2025-12-27', max: '2026-04-12' } }),
    );
    const outcome = await robust.run(task);
    expect(calls).toHaveLength(1);
    expect(outcome.status).toBe('gave_up');
    expect(outcome.answer).toContain('2025-12-27 to 2026-04-12');
    expect(outcome.diagnoses[0]).toMatchObject({ category: 'parameter', type: 'boundary_violation' });
  });

  it('uses a partial result and says which fields are missing', async () => {
    const partial = weather('Sydney', '2026-03-30', { warning: 'partial result: humidity_pct, wind_kph unavailable' });
    delete partial['humidity_pct'];
    delete partial['wind_kph'];
    const { task } = scriptedTask('悉尼今天的天气怎么样？', ['get_weather'], () => ok(partial));
    const outcome = await robust.run(task);
    expect(outcome.status).toBe('completed');
    expect(outcome.answer).toContain('Sydney on 2026-03-30');
    expect(outcome.answer).toContain('humidity_pct, wind_kph');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ category: 'business', type: 'partial_result' })]);
  });

  it('does not run the steps that depend on one that failed for good', async () => {
    const { task, calls } = scriptedTask('Check the weather in Beijing tomorrow and post it to #general.', ['get_weather', 'send_message', 'list_messages'], () => http(503));
    const outcome = await robust.run(task);
    expect(new Set(calls.map((c) => c.tool))).toEqual(new Set(['get_weather']));
    expect(outcome.status).toBe('gave_up');
  });

  it("reads the runtime's classification in assisted mode", async () => {
    const { task, sleeps } = scriptedTask(
      "What's the weather in Tokyo today?",
      ['get_weather'],
      (_t, _a, n) =>
        n === 1
          ? {
              ok: false,
              error: { code: 'CIRCUIT_OPEN', message: 'the circuit for get_weather is open' },
              assisted: { stage: 'execution', category: 'system', type: 'circuit_open', action: 'skip', hint: 'paused for about 12 s', retryable: true, retryAfterMs: 12_000, absorbedFailures: 0 },
            }
          : ok(weather('Tokyo', '2026-03-29', { timezone: 'Asia/Tokyo' })),
      'assisted',
    );
    const outcome = await robust.run(task);
    expect(sleeps).toEqual([12_000]);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses[0]).toMatchObject({ category: 'system', type: 'circuit_open' });
  });

  it('reads a write back after its 200, and sends it once more when the change is not there', async () => {
    const sent = { message_id: 'MSG-000054', channel: 'engineering', author: 'agent', text: 'Deploy finished.', thread_id: null, sent_at: NOW_ISO };
    let stored = 0;
    const { task, calls } = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (tool, _a, n) => {
      if (tool === 'list_messages') return ok({ channel: 'engineering', messages: stored > 0 ? [sent] : [], has_more: false });
      // The first send answers 200 and changes nothing; the second one lands.
      if (n > 1) stored++;
      return ok(sent);
    });
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages', 'send_message', 'list_messages']);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'send_message', category: 'semantic', type: 'write_not_applied' })]);
  });

  it('blames the read, not the write, when the write sent again answers as a replay of the first', async () => {
    const payment = (refunds: string[]) => ({ payment_id: 'PAY-2003', status: 'captured', amount_cents: 104_991, refundable_cents: 104_991 - refunds.length * 500, refunds });
    let refunds = 0;
    const { task, calls } = scriptedTask('Refund $5.00 of payment PAY-2003, it was a duplicate charge.', ['get_payment', 'create_refund'], (tool, _a, n) => {
      if (tool === 'create_refund') return ok({ refund_id: 'RFD-0003', payment_id: 'PAY-2003', amount_cents: 500, replayed: refunds++ > 0 });
      // The read right after the refund comes from a replica that has not caught up.
      return ok(payment(n <= 2 ? [] : ['RFD-0003']));
    });
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['get_payment', 'create_refund', 'get_payment', 'create_refund', 'get_payment']);
    expect(calls[3]!.args['idempotency_key']).toBe(calls[1]!.args['idempotency_key']);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_payment', category: 'semantic', type: 'stale_mismatch' })]);
  });

  it('escalates a write that answers 200 twice without the change ever showing', async () => {
    const { task, calls } = scriptedTask('Save the note "Launch moved to Friday." to /notes/launch.md.', ['write_file', 'read_file'], (tool, args) =>
      tool === 'read_file' ? fail({ code: 'HTTP_404', message: 'no file at /notes/launch.md', status: 404, body: { error: { type: 'not_found' } } }) : ok({ path: args['path'], size: 24, version: 1, created: true, changed: true }),
    );
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['write_file', 'read_file', 'write_file', 'read_file']);
    expect(outcome.status).toBe('escalated');
    // A 404 on the read is the answer "not there", not a failure of read_file to diagnose.
    expect(outcome.diagnoses.map((d) => d.tool)).toEqual(['write_file']);
  });

  it('looks up each entity the instruction names, one call each', async () => {
    const cities = scriptedTask("Compare tomorrow's weather in Shanghai, Beijing and Guangzhou.", ['get_weather'], (_t, args) => ok(weather(String(args['city']), '2026-03-30')));
    const outcome = await robust.run(cities.task);
    expect(cities.calls.map((c) => c.args['city'])).toEqual(['Shanghai', 'Beijing', 'Guangzhou']);
    for (const city of ['Shanghai', 'Beijing', 'Guangzhou']) expect(outcome.answer).toContain(`${city} on 2026-03-30`);

    const orders = scriptedTask('查询订单ORD-10019、ORD-10020和ORD-10021的状态。', ['get_order'], (_t, args) => ok({ order_id: args['order_id'], customer_id: 'CUS-001', items: [], status: 'shipped' }));
    await robust.run(orders.task);
    expect(orders.calls.map((c) => c.args['order_id'])).toEqual(['ORD-10019', 'ORD-10020', 'ORD-10021']);

    const posts = scriptedTask('Post "Build 142 is green." to #engineering and "Release notes are up." to #project-x.', ['send_message'], (_t, args) =>
      ok({ message_id: 'MSG-000100', channel: String(args['channel']).slice(1), author: 'agent', text: args['text'] }),
    );
    await robust.run(posts.task);
    expect(posts.calls.map((c) => [c.args['channel'], c.args['text']])).toEqual([
      ['#engineering', 'Build 142 is green.'],
      ['#project-x', 'Release notes are up.'],
    ]);
  });

  it('re-queries a page that holds fewer items than its own count says, without a note', async () => {
    const order = (id: string) => ({ order_id: id, customer_id: 'CUS-005', status: 'delivered' });
    const { task, calls } = scriptedTask('List the orders of customer CUS-005.', ['list_orders'], (_t, _a, n) =>
      ok({ total: 4, offset: 0, limit: 20, orders: (n === 1 ? ['ORD-10001', 'ORD-10009'] : ['ORD-10001', 'ORD-10009', 'ORD-10014', 'ORD-10033']).map(order) }),
    );
    const outcome = await robust.run(task);
    expect(calls).toHaveLength(2);
    expect(outcome.answer).toContain('ORD-10033');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'list_orders', category: 'semantic', type: 'incomplete_mismatch' })]);
  });

  it('re-reads a report that does not show the refund it just made', async () => {
    const payment = (refunds: string[]) => ({ payment_id: 'PAY-2010', status: 'captured', amount_cents: 119_997, refundable_cents: 119_997 - refunds.length * 2_000, refunds });
    const { task, calls } = scriptedTask('Refund $20.00 of payment PAY-2010 and then tell me the remaining refundable balance.', ['get_payment', 'create_refund'], (tool, _a, n) => {
      if (tool === 'create_refund') return ok({ refund_id: 'RFD-0003', payment_id: 'PAY-2010', amount_cents: 2_000, status: 'succeeded' });
      // 1: the baseline; 2: the refund read back; 3: the report, from a replica that lags and
      // replays the baseline; 4: the report read again.
      return ok(payment(n === 1 || n === 3 ? [] : ['RFD-0003']));
    });
    const outcome = await robust.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['get_payment', 'create_refund', 'get_payment', 'get_payment', 'get_payment']);
    expect(outcome.answer).toContain('refundable $1179.97');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_payment', category: 'semantic', type: 'stale_mismatch' })]);
  });

  it('books over other meetings only when the user says that is fine', async () => {
    const book = (instruction: string) => {
      const s = scriptedTask(instruction, ['create_event'], (_t, args) => ok({ event_id: 'EVT-0025', title: args['title'], start: args['start'], start_utc: '2026-03-29T23:00:00.000Z', timezone: args['timezone'] }));
      return robust.run(s.task).then(() => s.calls[0]!.args['allow_overlap']);
    };
    expect(await book('Schedule "Design review" tomorrow at 07:00 Shanghai time for 30 minutes, even if it overlaps other meetings.')).toBe(true);
    expect(await book('明天早上7点（北京时间）安排“Design review”，时长30分钟，可以与其他会议重叠。')).toBe(true);
    expect(await book('Schedule "Design review" tomorrow at 07:00 Shanghai time for 30 minutes.')).toBeUndefined();
  });

  it('gives up honestly on an instruction it cannot map to the tools', async () => {
    const { task, calls } = scriptedTask('Sing me a song.', ['get_weather'], () => ok({}));
    const outcome = await robust.run(task);
    expect(calls).toEqual([]);
    expect(outcome.status).toBe('gave_up');
  });
});

const NOW_ISO = '2026-03-29T14:00:00.000Z';
