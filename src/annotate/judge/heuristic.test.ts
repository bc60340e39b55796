import { describe, expect, it } from 'vitest';
import { trajectory, type StepSpec } from '../trajectory.test-helpers.js';
import { DeferredJson } from '../../core/deferred-json.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { heuristicJudge } from './heuristic.js';

const judge = (task: string, specs: StepSpec[]) => heuristicJudge(trajectory(specs, { task }));
const at = '2026-03-29T14:23:11Z';

describe('heuristicJudge: relative dates', () => {
  it('flags "tomorrow" / 明天 resolved to today, in the step\'s own time', () => {
    const en = judge("What's the weather in Shanghai tomorrow?", [{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, at }]);
    expect(en).toMatchObject([{ name: 'semantic_error', step_index: 1, confidence: 0.75 }]);
    expect(en[0]!.reason).toContain('"tomorrow", which is 2026-03-30 (UTC)');
    const zh = judge('上海明天的天气', [{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, at }]);
    expect(zh[0]!.reason).toContain('"明天", which is 2026-03-30');
    expect(judge('上海明天的天气', [{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-30' }, at }])).toEqual([]);
    expect(judge('上海明天的天气', [{ tool: 'get_weather', params: { city: 'Shanghai', date: 'today' }, at }])[0]!.reason).toContain('date="today"');
  });

  it('resolves the day in the zone the intent states (北京时间 / UTC+8)', () => {
    const late = '2026-03-29T20:00:00Z';
    expect(judge('北京时间今天的会议', [{ tool: 'list_events', params: { date: '2026-03-30' }, at: late }])).toEqual([]);
    expect(judge('meetings today (UTC+8)', [{ tool: 'list_events', params: { date: '2026-03-29' }, at: late }])[0]!.reason).toContain('2026-03-30 (UTC+08:00)');
    expect(judge('yesterday / 昨天', [{ tool: 'list_events', params: { date: '2026-03-28' }, at }])).toEqual([]);
  });

  it('flags a "past 7 days" / 过去7天 range that starts late or ends early', () => {
    const ok = { date_from: '2026-03-22', date_to: '2026-03-29' };
    expect(judge('orders of the past 7 days', [{ tool: 'list_orders', params: ok, at }])).toEqual([]);
    const late = judge('查询过去7天的订单', [{ tool: 'list_orders', params: { date_from: '2026-03-25', date_to: '2026-03-29' }, at }]);
    expect(late[0]!.reason).toContain('from 2026-03-22 (UTC), but the call starts at 2026-03-25');
    const early = judge('过去七天的订单', [{ tool: 'list_orders', params: { start_date: '2026-03-22', end_date: '2026-03-28' }, at }]);
    expect(early[0]!.reason).toContain('runs to 2026-03-29');
  });

  it('does not date-check steps without a time', () => {
    expect(judge('weather tomorrow', [{ tool: 'get_weather', params: { date: '2020-01-01' } }])).toEqual([]);
  });
});

describe('heuristicJudge: UTC versus local time', () => {
  it('flags local times where UTC was asked for, mixed offsets, and UTC times under a local intent', () => {
    expect(judge('export logs in UTC', [{ tool: 'export_logs', params: { start: '2026-03-23T00:00:00+08:00' } }])[0]!.reason).toContain('intent asks for UTC');
    expect(judge('导出日志', [{ tool: 'export_logs', params: { start_utc: '2026-03-23T00:00:00+08:00' } }])[0]!.reason).toContain('start_utc is meant to be UTC');
    expect(judge('导出日志', [{ tool: 'export_logs', params: { start: '2026-03-23T00:00:00Z', end: '2026-03-30T00:00:00+08:00' } }])[0]!.reason).toContain('mixes time zones');
    expect(judge('按北京时间导出 3 月 23 日的日志', [{ tool: 'export_logs', params: { start: '2026-03-23T00:00:00Z' } }])[0]!.reason).toContain('8 hours off');
    expect(judge('export logs in UTC', [{ tool: 'export_logs', params: { start: '2026-03-23T00:00:00Z', end: '2026-03-30T00:00:00Z' } }])).toEqual([]);
  });
});

describe('heuristicJudge: entities', () => {
  it('flags a city other than the intent\'s, in the arguments or the result, in both languages', () => {
    expect(judge('上海明天的天气', [{ tool: 'get_weather', params: { city: 'Beijing' } }])[0]!.reason).toContain('city="Beijing"');
    expect(judge('weather in Paris', [{ tool: 'get_weather', params: { city: 'paris' }, body: { location: 'Paris, TX' } }])).toEqual([]);
    expect(judge('weather in Paris', [{ tool: 'get_weather', params: { city: 'Paris' }, body: { city: 'London' } }])[0]!.reason).toContain('the result is for city="London"');
    expect(judge('weather in Paris', [{ tool: 'get_weather', params: { city: 'Paris' }, body: { city: 'Paris' } }])).toEqual([]);
  });

  it('flags a mis-copied id, and a write on an id other than the one named', () => {
    expect(judge('You are mia_li_3668.', [{ tool: 'get_user_details', params: { user_id: 'mia_li_3686' } }])).toMatchObject([{ confidence: 0.8 }]);
    expect(judge('You are mia_li_3668.', [{ tool: 'get_user_details', params: { user_id: 'mia_li_3668' } }])).toEqual([]);
    expect(judge('取消预订 ZFA04Y', [{ tool: 'cancel_reservation', params: { reservation_id: 'XYZ12Q' } }])[0]!.reason).toContain('acted on reservation_id="XYZ12Q"');
    expect(judge('取消预订 ZFA04Y', [{ tool: 'get_reservation_details', params: { reservation_id: 'XYZ12Q' } }])).toEqual([]);
  });
});

describe('heuristicJudge: empty results', () => {
  it('flags an empty result under many filters or filters loosened next, not a plain empty search', () => {
    const narrow = judge('find notes', [{ tool: 'search_documents', params: { query: 'x', author: 'a', tag: 't', status: 'final' }, body: { results: [], total: 0 } }]);
    expect(narrow[0]!.reason).toContain('3 optional filters (author, tag, status)');
    const loosened = judge('查找过去一周关于项目X的会议记录', [
      { tool: 'search_documents', params: { query: '项目X会议记录', date_from: '2026-03-22', date_to: '2026-03-29' }, body: { results: [], total: 0 } },
      { tool: 'search_documents', params: { query: '项目X会议记录', date_from: '2026-03-01', date_to: '2026-03-29' }, body: { results: [1], total: 1 } },
    ]);
    expect(loosened.map((l) => l.step_index)).toEqual([1]);
    expect(loosened[0]!.reason).toContain('filters the agent itself had to loosen next');
    expect(judge('find notes', [{ tool: 'search_documents', params: { query: 'x' }, body: [] }])).toEqual([]);
  });
});

describe('heuristicJudge on deferred values', () => {
  // The parallel annotator's workers import arguments and JSON results unparsed (DeferredJson); some checks look at the text first.
  const deferred = (t: Trajectory): Trajectory => ({
    ...t,
    steps: t.steps.map((s) => ({
      ...s,
      input_params: new DeferredJson(JSON.stringify(s.input_params), JSON.parse),
      response: typeof s.response.body === 'object' && s.response.body !== null ? { ...s.response, body: new DeferredJson(JSON.stringify(s.response.body), JSON.parse) } : s.response,
    })),
  });
  it('finds what it finds in parsed values', () => {
    const cases: [string, StepSpec[]][] = [
      ['export logs in UTC', [{ tool: 'export_logs', params: { start: '2026-03-23T00:00:00+08:00' } }]],
      ['export logs in UTC', [{ tool: 'export_logs', params: { start: '2026-03-23t00:00:00+08:00' } }]],
      ['导出日志', [{ tool: 'export_logs', params: { start_utc: '2026-03-23 00:00:00+08:00' } }]],
      ['logs (UTC+8)', [{ tool: 'export_logs', params: { from: '2026-03-23T00:00:00Z', tz: 'UTC' } }]],
      ["What's the weather in Shanghai tomorrow?", [{ tool: 'get_weather', params: { city: 'Paris', date: '2026-03-29' }, at, body: { city: 'Paris' } }]],
      ['cancel reservation ZFA04Y', [{ tool: 'cancel_reservation', params: { reservation_id: 'ZFA04X' } }]],
      ['find orders', [{ tool: 'search_orders', params: { a: 1, b: 2, c: 3 }, body: { results: [], total: 0 } }, { tool: 'list', body: [] }]],
      ['find orders', [{ tool: 'search_orders', params: { a: 1, b: 2, c: 3 }, body: { Items: [] } }, { tool: 'search_orders', params: { a: 1 }, body: { rows: [1] } }]],
    ];
    let found = 0;
    for (const [task, specs] of cases) {
      const t = trajectory(specs, { task });
      const expected = heuristicJudge(t);
      found += expected.length;
      expect(heuristicJudge(deferred(t)), task).toEqual(expected);
    }
    expect(found).toBeGreaterThanOrEqual(6);
  });
  it('reads a count written as a zero, a negative zero or an underflow as the parsed body does', () => {
    const texts = ['{"total": 0.0, "q": 1}', '{"count":-0}', '{"total_count": 1e-400}', '{"Results" : [ ], "total": 0}', '{"rows": [], "total": 12}', '{"total": 412}', '{"total": "0"}'];
    const flagged = texts.map((text) => {
      const t = trajectory([{ tool: 'search_orders', params: { a: 1, b: 2, c: 3 }, body: JSON.parse(text) }], { task: 'find orders' });
      const step = t.steps[0]!;
      const lazy: Trajectory = { ...t, steps: [{ ...step, response: { ...step.response, body: new DeferredJson(text, JSON.parse) } }] };
      expect(heuristicJudge(lazy), text).toEqual(heuristicJudge(t));
      return heuristicJudge(t).length;
    });
    expect(flagged).toEqual([1, 1, 1, 1, 0, 0, 0]);
  });
});
