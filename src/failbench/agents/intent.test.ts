import { describe, expect, it } from 'vitest';
import { chineseNumber, formatInZone, parseIntent, resolveDay, resolveMonth, wallTimeToInstant } from './intent.js';

const NOW = Date.parse('2026-03-29T14:00:00Z');

describe('parseIntent', () => {
  it('reads cities, relative days and languages in English and Chinese', () => {
    expect(parseIntent("What's the weather in Shanghai tomorrow?")).toMatchObject({ language: 'en', city: { name: 'Shanghai' }, day: { kind: 'relative', offset: 1 } });
    expect(parseIntent('北京后天的天气预报是什么？')).toMatchObject({ language: 'zh', city: { name: 'Beijing' }, day: { kind: 'relative', offset: 2 } });
    expect(parseIntent('广州昨天的天气如何？')).toMatchObject({ city: { name: 'Guangzhou' }, day: { kind: 'relative', offset: -1 } });
    expect(parseIntent('纽约2026年4月2日的天气怎么样？')).toMatchObject({ city: { name: 'New York' }, day: { kind: 'date', date: '2026-04-02' } });
    expect(parseIntent("What's the weather in Shanghia tomorrow?")).toMatchObject({ cityLiteral: 'Shanghia' });
    expect(parseIntent('Shanghia明天的天气怎么样？')).toMatchObject({ cityLiteral: 'Shanghia' });
  });

  it('reads months, regions and granularities', () => {
    expect(parseIntent('2026年2月华南区域的销售总额是多少？')).toMatchObject({ month: { kind: 'absolute', month: '2026-02' }, region: 'south' });
    expect(parseIntent("Show me last month's sales for the east region by week.")).toMatchObject({ month: { kind: 'relative', offset: -1 }, region: 'east', granularity: 'weekly' });
    expect(parseIntent('What were the north region sales in December 2025?')).toMatchObject({ month: { kind: 'absolute', month: '2025-12' }, region: 'north' });
    expect(parseIntent('查询华西区域2026年2月按天的销售数据。')).toMatchObject({ region: 'west', granularity: 'daily' });
  });

  it('keeps values the user spelled out as given, for the tool to judge', () => {
    expect(parseIntent('Sales for the east region in February 2026, granularity "wekly".')).toMatchObject({ granularity: 'wekly' });
    expect(parseIntent('列出客户CUS-005状态为“shiped”的订单。')).toMatchObject({ orderStatus: 'shiped', customerId: 'CUS-005' });
    expect(parseIntent('伦敦明天的天气，单位“farenheit”。')).toMatchObject({ unit: 'farenheit' });
  });

  it('reads ids, items, amounts, channels, paths and quoted texts', () => {
    expect(parseIntent('Place an order for customer CUS-007: 1 x SKU-1006 and 3 x SKU-1011.')).toMatchObject({
      customerId: 'CUS-007',
      items: [
        { sku: 'SKU-1006', quantity: 1 },
        { sku: 'SKU-1011', quantity: 3 },
      ],
    });
    expect(parseIntent('为客户CUS-012购买4件SKU-1008。').items).toEqual([{ sku: 'SKU-1008', quantity: 4 }]);
    expect(parseIntent('为客户对支付PAY-2021退款12.50美元。')).toMatchObject({ paymentId: 'PAY-2021', amountCents: 1250 });
    expect(parseIntent('Refund the remaining balance of payment PAY-2006.')).toMatchObject({ paymentId: 'PAY-2006', refundRemaining: true });
    expect(parseIntent('在#engineering频道发送消息：“Deploy finished, all green.”')).toMatchObject({ channel: 'engineering', quoted: ['Deploy finished, all green.'] });
    expect(parseIntent('Save the note "Launch moved to Friday." to /notes/launch.md.').paths).toEqual(['/notes/launch.md']);
    expect(parseIntent('读取 /notes/todo.txt，并把内容发到#general频道。')).toMatchObject({ paths: ['/notes/todo.txt'], channel: 'general' });
  });

  it('reads times, durations and named time zones', () => {
    expect(parseIntent('Schedule "Design review" tomorrow at 07:00 Shanghai time for 30 minutes.')).toMatchObject({
      time: { hour: 7, minute: 0 },
      durationMinutes: 30,
      timeZone: 'Asia/Shanghai',
      quoted: ['Design review'],
    });
    expect(parseIntent('后天早上7点半（北京时间）预约“Team sync”，45分钟。')).toMatchObject({ time: { hour: 7, minute: 30 }, durationMinutes: 45, timeZone: 'Asia/Shanghai' });
    expect(parseIntent('下午3点开会，一个小时')).toMatchObject({ time: { hour: 15, minute: 0 }, durationMinutes: 60 });
    // A zone named after a city is not the city the task is about.
    expect(parseIntent('Book it at 09:00 London time').city).toBeUndefined();
  });

  it('reads every city, region, order id and channel named, in order', () => {
    expect(parseIntent('对比一下上海、北京和广州明天的天气。').cities.map((c) => c.name)).toEqual(['Shanghai', 'Beijing', 'Guangzhou']);
    expect(parseIntent('What is the weather today in Tokyo, Singapore, London and New York?').cities.map((c) => c.name)).toEqual(['Tokyo', 'Singapore', 'London', 'New York']);
    // A zone named after a city is not one of the cities.
    expect(parseIntent('Book it at 09:00 London time in Paris').cities.map((c) => c.name)).toEqual(['Paris']);
    expect(parseIntent('Compare the February 2026 sales of the north, south and east regions.').regions).toEqual(['north', 'south', 'east']);
    expect(parseIntent('对比2026年2月华北、华南和华东区域的销售额。').regions).toEqual(['north', 'south', 'east']);
    expect(parseIntent("What's the status of orders ORD-10019, ORD-10020 and ORD-10019?").orderIds).toEqual(['ORD-10019', 'ORD-10020']);
    expect(parseIntent('Post "a" to #Engineering and "b" to #project-x.').channels).toEqual(['engineering', 'project-x']);
  });

  it('reads whether a booking may overlap, and whether to report back after a change', () => {
    expect(parseIntent('Schedule "Review" tomorrow at 07:00, even if it overlaps other meetings.').allowOverlap).toBe(true);
    expect(parseIntent('后天早上7点半（北京时间）预约“Team sync”，45分钟，允许重叠。').allowOverlap).toBe(true);
    expect(parseIntent('Schedule "Review" tomorrow at 07:00.').allowOverlap).toBe(false);
    expect(parseIntent('Refund $20.00 of payment PAY-2010 and then tell me the remaining refundable balance.').reportAfter).toBe(true);
    expect(parseIntent('对支付PAY-2010退款20美元，然后告诉我剩余可退金额。').reportAfter).toBe(true);
    expect(parseIntent('Check order ORD-10025, cancel it if it has not shipped, and then confirm its final status.').reportAfter).toBe(true);
    expect(parseIntent('Cancel order ORD-10017.').reportAfter).toBe(false);
  });

  it('lists the verbs in the order they appear', () => {
    expect(parseIntent('Get the south region sales for February 2026, save them to /reports/x.md and post the summary to #sales.').verbs.slice(0, 3)).toEqual(['sales', 'write', 'post']);
  });
});

describe('calendar arithmetic', () => {
  it('resolves "today" in the zone it is asked about', () => {
    expect(resolveDay({ kind: 'relative', offset: 0 }, NOW, 'Australia/Sydney')).toBe('2026-03-30');
    expect(resolveDay({ kind: 'relative', offset: 0 }, NOW, 'America/New_York')).toBe('2026-03-29');
    expect(resolveDay({ kind: 'relative', offset: 1 }, NOW, 'Asia/Shanghai')).toBe('2026-03-30');
  });

  it('resolves relative months and wall times', () => {
    expect(resolveMonth({ kind: 'relative', offset: -1 }, NOW)).toBe('2026-02');
    expect(resolveMonth({ kind: 'relative', offset: -3 }, NOW)).toBe('2025-12');
    const at = wallTimeToInstant('2026-03-30', 7, 0, 'Asia/Shanghai');
    expect(new Date(at).toISOString()).toBe('2026-03-29T23:00:00.000Z');
    expect(formatInZone(at, 'Asia/Shanghai')).toBe('2026-03-30T07:00:00+08:00');
    expect(formatInZone(at, 'UTC')).toBe('2026-03-29T23:00:00Z');
  });

  it('reads Chinese numerals', () => {
    expect([chineseNumber('七'), chineseNumber('十二'), chineseNumber('二十五'), chineseNumber('三十'), chineseNumber('45')]).toEqual([7, 12, 25, 30, 45]);
  });
});
