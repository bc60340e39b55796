import { describe, expect, it } from 'vitest';
import { trajectory } from '../annotate/trajectory.test-helpers.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { recovered } from './dataset.test-helpers.js';
import { exportDataset } from './export-dataset.js';
import { FewShotCollector, renderFewShotMarkdown, type FewShotRow } from './few-shot-exporter.js';
import type { Split } from './split.js';
import { openAiTrajectory } from '../trajectory/importers/openai.js';

/** A bad date rejected, then fixed by sending a real one. */
function badDate(id: string, date: string, judged: 'correct' | null = null): Trajectory {
  const t = trajectory(
    [
      { tool: 'get_weather', params: { city: 'Paris', date }, fail: { category: 'parameter', kind: 'invalid_date', status: 'rejected' } },
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-03-30' }, body: { temp_c: 12 } },
    ],
    { outcome: 'success', task: 'Weather in Paris tomorrow' },
  );
  t.steps[0]!.response = { status_code: 400, error_code: 'invalid_date', message: `date ${date} is not a date` };
  t.steps[0]!.decision_correctness = judged;
  return { ...t, trajectory_id: id, source_id: id };
}

/** A timeout, a wait, the same call again. */
function timeoutThenWait(id: string): Trajectory {
  const t = trajectory(
    [
      { tool: 'get_weather', params: { city: 'Rome' }, fail: { category: 'network', kind: 'timeout', status: 'timeout' } },
      { tool: 'get_weather', params: { city: 'Rome' }, body: { temp_c: 18 } },
    ],
    { outcome: 'success', task: 'Weather in Rome' },
  );
  t.steps[0]!.agent_decision = { action: 'wait_and_retry', wait_seconds: 2 };
  t.steps[0]!.failure_type = 'infrastructure';
  t.steps[0]!.failure_subtype = 'timeout';
  return { ...t, trajectory_id: id, source_id: id };
}

/** An unknown city, given up on: a failure with no fix. */
function unknownCity(id: string): Trajectory {
  const t = trajectory([{ tool: 'get_weather', params: { city: 'Atlantis' }, fail: { category: 'business', kind: 'not_found' } }], { outcome: 'failure', task: 'Weather in Atlantis' });
  return { ...t, trajectory_id: id, source_id: id };
}

/** The same bad date, blindly repeated until it happened to work: judged incorrect, never an example. */
function luckyRepeat(id: string): Trajectory {
  const t = badDate(id, '2026-02-30');
  t.steps[0]!.decision_correctness = 'incorrect';
  return t;
}

const all = (): Trajectory[] => [
  badDate('t_a', '2026-13-01'),
  badDate('t_b', '2026-02-31', 'correct'),
  luckyRepeat('t_0'),
  timeoutThenWait('t_c'),
  unknownCity('t_d'),
  unknownCity('t_e'),
  unknownCity('t_f'),
  unknownCity('t_g'),
  { ...recovered(), trajectory_id: 't_h' },
];

function rowsOf(trajectories: Trajectory[], top?: number): FewShotRow[] {
  const c = new FewShotCollector();
  for (const t of trajectories) c.add(t);
  return c.rows(top);
}

describe('few-shot exporter', () => {
  it('ranks failures per tool by frequency and keeps only those with a fix that worked', () => {
    const rows = rowsOf(all());
    expect(rows.map((r) => [r.tool, r.rank, r.kind, r.count, r.trajectory_count])).toEqual([
      ['get_order', 1, 'not_found', 2, 1],
      // not_found on get_weather (4 failures) is more frequent but nothing fixed it: left out.
      ['get_weather', 1, 'invalid_date', 3, 3],
      ['get_weather', 2, 'timeout', 1, 1],
    ]);
    expect(rowsOf(all(), 1).map((r) => `${r.tool}:${r.kind}`)).toEqual(['get_order:not_found', 'get_weather:invalid_date']);
  });

  it('picks the fix an annotator confirmed, never one judged incorrect, and renders the snippet', () => {
    const date = rowsOf(all()).find((r) => r.kind === 'invalid_date')!;
    expect(date.example_trajectory_id).toBe('t_b');
    expect(date.source_trajectory_ids).toEqual(['t_b', 't_0', 't_a']);
    expect(date.failure_type).toBeNull();
    expect(date.category).toBe('parameter');
    expect(date.example).toEqual({
      failed_call: { tool: 'get_weather', arguments: { city: 'Paris', date: '2026-02-31' } },
      error: { status: 'rejected', status_code: 400, error_code: 'invalid_date', message: 'date 2026-02-31 is not a date' },
      fix: { action: 'retry_with_params', tool: 'get_weather', arguments: { city: 'Paris', date: '2026-03-30' }, params_delta: { date: '2026-03-30' }, failed_attempts_between: 0 },
      result: { status: 'success', body: { temp_c: 12 } },
    });
    expect(date.snippet).toBe(
      [
        'Known failure of get_weather (invalid_date, category parameter; seen 3 times):',
        '- Call: get_weather({"city":"Paris","date":"2026-02-31"})',
        '- Error: HTTP 400: invalid_date: date 2026-02-31 is not a date',
        '- Fix that worked: called get_weather again with the arguments changed to {"date":"2026-03-30"}',
        '- Outcome: success, returned {"temp_c":12}',
      ].join('\n'),
    );
    const wait = rowsOf(all()).find((r) => r.kind === 'timeout')!;
    expect(wait.failure_type).toBe('infrastructure/timeout');
    expect(wait.example.fix).toMatchObject({ action: 'wait_and_retry', wait_seconds: 2 });
    expect(wait.snippet).toContain('- Fix that worked: waited 2s, then repeated the same call get_weather({"city":"Rome"})');
    const order = rowsOf(all()).find((r) => r.tool === 'get_order')!;
    expect(order.example.fix).toMatchObject({ action: 'switch_tool', tool: 'search_orders', failed_attempts_between: 0 });
    expect(order.example_step_index).toBe(2);
  });

  it('ranks each split on its own trajectories and writes Markdown', async () => {
    const out: Record<Split, FewShotRow[]> = { train: [], validation: [] };
    const trajectories = Array.from({ length: 40 }, (_, i) => badDate(`t_${i}`, '2026-13-01'));
    const card = await exportDataset({
      format: 'few-shot',
      trajectories,
      seed: 5,
      valFraction: 0.3,
      files: { train: 'f.jsonl', validation: 'f.jsonl.val.jsonl' },
      write: (split, line) => void out[split].push(JSON.parse(line) as FewShotRow),
    });
    const [train, val] = [out.train[0]!, out.validation[0]!];
    expect(train.count + val.count).toBe(40);
    expect(card.splits.train).toEqual({ trajectories: train.count, examples: 1 });
    expect(card.splits.validation).toEqual({ trajectories: val.count, examples: 1 });
    expect(train.source_trajectory_ids.filter((id) => val.source_trajectory_ids.includes(id))).toEqual([]);
    expect(card.by_failure_category).toEqual({ parameter: 40 });

    const md = renderFewShotMarkdown(rowsOf(all()));
    expect(md).toContain('## get_weather\n\n### 1. invalid_date (3 failed calls in 3 trajectories)\n\n```text\nKnown failure of get_weather');
    expect(md.indexOf('## get_order')).toBeLessThan(md.indexOf('## get_weather'));
  });

  it('does not take a fix an annotator labelled', () => {
    const labelled = timeoutThenWait('t_l');
    labelled.labels = [{ name: 'backoff_violation', step_index: 2, confidence: 0.8, reason: 'waited 2s, Retry-After said 5' }];
    expect(rowsOf([labelled])).toEqual([]);
    expect(rowsOf([labelled, timeoutThenWait('t_m')]).map((r) => [r.example_trajectory_id, r.count])).toEqual([['t_m', 2]]);
    const missed = badDate('t_s', '2026-13-01', 'correct');
    missed.labels = [{ name: 'semantic_error', step_index: 2, confidence: 0.6, reason: 'asked for tomorrow, got the day after' }];
    expect(rowsOf([missed])).toEqual([]);
  });

  it('redacts secrets from the examples and snippets', () => {
    const t = badDate('t_k', '2026-13-01', 'correct');
    t.steps[0]!.input_params = { city: 'Paris', date: '2026-13-01', api_key: 'sk-live-abcdefghijklmnopqrstuvwx' };
    const [row] = rowsOf([t]);
    expect(JSON.stringify(row)).not.toContain('sk-live-abcdefghijklmnopqrstuvwx');
    expect(row!.snippet).toContain('"api_key":"[REDACTED]"');
  });

  it('skips trajectories without a failed call', () => {
    const ok = trajectory([{ tool: 'get_weather', params: { city: 'Oslo' } }]);
    expect(new FewShotCollector().add(ok)).toBe('no failed call');
  });

  it('says what an imported failure was read from', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });
    const t = openAiTrajectory({
      id: 'imp',
      outcome: 'success',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [call('c1')] },
        { role: 'tool', tool_call_id: 'c1', content: '{"error": {"code": 429, "message": "Rate limit reached"}}' },
        { role: 'assistant', content: null, tool_calls: [{ ...call('c2'), function: { name: 'get_weather_backup', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'c2', content: '{"temp_c": 4}' },
      ],
    });
    if (typeof t === 'string') throw new Error(t);
    const [row] = rowsOf([t]);
    expect(row!.example.error.evidence).toEqual({ confidence: 0.85, evidence: ['field:error.code=429', 'field:error'] });
    expect(row!.snippet).toContain('(read from field:error.code=429, field:error; confidence 0.85)');
  });
});
