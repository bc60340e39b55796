import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';
import type { AnnotateJsonLine } from './annotate.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-annotate-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const jsonl = (...values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') + '\n';
const FIVE = [1, 2, 3, 4, 5];

// Each file holds one trajectory whose `fetch` call fails five times with the same arguments
// (loop_failure on the 4th and 5th) and, where the format allows, a second, clean one.
const openAiLoop = {
  id: 'loop',
  messages: [
    { role: 'user', content: 'fetch record 7' },
    ...FIVE.flatMap((i) => [
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'fetch', arguments: '{"id":700}' } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: '{"error":"db down","status":503}' },
    ]),
  ],
};
const openAiClean = { id: 'clean', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'ping', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'a', content: 'pong' }] };
const anthropicLoop = {
  id: 'loop',
  messages: [
    { role: 'user', content: 'fetch record 7' },
    ...FIVE.flatMap((i) => [
      { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'fetch', input: { id: 700 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, is_error: true, content: '{"error":"db down","status":503}' }] },
    ]),
  ],
};
const stepLine = (i: number) => ({ trace_id: 'loop', step_index: i, timestamp: `2026-03-29T14:23:${10 + i}Z`, tool_name: 'fetch', input_params: { id: 700 }, raw_response: { status_code: 503, body: { error: 'db down' } } });
const T = 1_774_800_000_000;
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const span = (i: number) => ({
  traceId: 'loop',
  spanId: `s${i}`,
  parentSpanId: 'root',
  startTimeUnixNano: ns(T + i * 1000),
  endTimeUnixNano: ns(T + i * 1000 + 10),
  attributes: [
    { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
    { key: 'gen_ai.tool.name', value: { stringValue: 'fetch' } },
    { key: 'gen_ai.tool.call.arguments', value: { stringValue: '{"id":700}' } },
  ],
  status: { code: 2, message: 'db down' },
});
const otelRequest = { resourceSpans: [{ scopeSpans: [{ spans: FIVE.map(span) }] }] };

const files = {
  openai: ['chat.jsonl', jsonl(openAiLoop, 'not json', openAiClean)],
  anthropic: ['messages.jsonl', jsonl(anthropicLoop)],
  'step-log': ['steps.jsonl', jsonl(...FIVE.map(stepLine))],
  otel: ['spans.jsonl', jsonl(otelRequest)],
} as const;
for (const [name, text] of Object.values(files)) writeFileSync(join(dir, name), text);

const parse = (stdout: string): AnnotateJsonLine[] => stdout.trim().split('\n').map((l) => JSON.parse(l) as AnnotateJsonLine);
const loopLabels = [
  { name: 'loop_failure', step_index: 4, confidence: 0.9 },
  { name: 'loop_failure', step_index: 5, confidence: 0.9 },
];

describe('faultline annotate --input', () => {
  for (const [format, [name]] of Object.entries(files)) {
    it(`streams a ${format} file: one { trajectory_id, source_id, outcome, outcome_source, labels } line per trajectory`, async () => {
      const run = await runCapture(['annotate', '--input', name, '--format', format, '--json'], dir);
      expect(run.code).toBe(0);
      const lines = parse(run.stdout);
      for (const line of lines) {
        expect(Object.keys(line)).toEqual(['trajectory_id', 'source_id', 'outcome', 'outcome_source', 'labels']);
        expect(line.trajectory_id).toMatch(/^traj_[0-9a-f]{24}$/);
        for (const label of line.labels) expect(Object.keys(label)).toEqual(['name', 'step_index', 'confidence']);
      }
      const loop = lines.find((l) => l.source_id === 'loop')!;
      expect(loop.labels.filter((l) => l.name === 'loop_failure')).toEqual(loopLabels);
      const stderr = run.stderr.trimEnd().split('\n');
      expect(stderr.at(-1)).toMatch(new RegExp(`^faultline annotate: outcomes of ${lines.length} trajectories: \\d+ inferred from the final answers, \\d+ stated by the log, \\d+ unknown`));
      if (format === 'openai') {
        expect(lines.map((l) => l.source_id)).toEqual(['loop', 'clean']);
        expect(stderr).toHaveLength(2);
        expect(stderr[0]).toMatch(/^chat\.jsonl:2: not JSON: /);
      } else {
        expect(stderr).toHaveLength(1);
      }
    });
  }

  it('gives the same labels as importing the file and annotating the store, and writes nothing but --out', async () => {
    const db = join(dir, 'same.db');
    expect((await runCapture(['import', '--format', 'openai', 'chat.jsonl', '--db', db], dir)).code).toBe(0);
    const stored = parse((await runCapture(['annotate', '--db', db, '--json'], dir)).stdout);
    const streamed = await runCapture(['annotate', '--input', 'chat.jsonl', '--format', 'openai', '--json', '--out', 'annotated.jsonl'], dir);
    const byId = (lines: AnnotateJsonLine[]) => [...lines].sort((a, b) => a.trajectory_id.localeCompare(b.trajectory_id));
    expect(byId(parse(streamed.stdout))).toEqual(byId(stored));
    const written = readFileSync(join(dir, 'annotated.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { source_id: string; steps: { decision_correctness: unknown }[]; labels: unknown[] });
    expect(written.map((t) => t.source_id)).toEqual(['loop', 'clean']);
    expect(written[0]!.labels).toHaveLength(3); // loop_failure twice, rare_failure once
    expect(existsSync(join(dir, '.faultline'))).toBe(false);
  });

  it('counts the outcomes inferred, stated and unknown, on stderr and in each --json line', async () => {
    const call = (id: string, content: string) => [
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'book_table', arguments: '{"party":2}' } }] },
      { role: 'tool', tool_call_id: id, content },
    ];
    const stated = { id: 'stated', reward: 1, messages: [{ role: 'user', content: 'Book a table for two tonight.' }, ...call('s1', '{"booking_id":"B-17","status":"confirmed"}'), { role: 'assistant', content: 'Your table for two is booked (B-17).' }] };
    const plain = { id: 'plain', messages: [{ role: 'user', content: 'Book a table for two tonight.' }, ...call('p1', '{"error":{"code":503,"message":"Service Unavailable"}}'), { role: 'assistant', content: "I'm sorry, I couldn't book the table: the booking service is unavailable. Please try again later." }] };
    writeFileSync(join(dir, 'outcomes.jsonl'), jsonl(stated, plain));
    for (const json of [true, false]) {
      const run = await runCapture(['annotate', '--input', 'outcomes.jsonl', '--format', 'openai', ...(json ? ['--json'] : [])], dir);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('faultline annotate: outcomes of 2 trajectories: 1 inferred from the final answers, 1 stated by the log, 0 unknown; export --exclude-inferred-outcomes leaves the inferred ones out\n');
      if (json) {
        const lines = parse(run.stdout);
        expect(lines.map((l) => [l.source_id, l.outcome, l.outcome_source])).toEqual([['stated', 'success', 'stated'], ['plain', 'failure', 'inferred']]);
      }
    }
    const none = await runCapture(['annotate', '--input', 'outcomes.jsonl', '--format', 'openai', '--judge', 'none'], dir);
    expect(none.stderr).toBe('faultline annotate: outcomes of 2 trajectories: 0 inferred from the final answers, 1 stated by the log, 1 unknown\n');
  });

  it('prints a count per label without --json', async () => {
    const run = await runCapture(['annotate', '--input', 'chat.jsonl', '--format', 'openai'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('faultline annotate: 2 trajectories from chat.jsonl (openai), 1 with labels, 3 labels');
    expect(run.stdout).toContain('1 lines skipped');
    expect(run.stdout).toMatch(/ loop_failure\s+2\n/);
    expect(run.stdout).toMatch(/ rare_failure\s+1\n/);
  });

  it('runs the heuristic judge by default, and none with --judge none', async () => {
    const city = { id: 'city', messages: [{ role: 'user', content: 'What is the weather in Shanghai?' }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'a', content: '{"temp":18}' }] };
    writeFileSync(join(dir, 'city.jsonl'), jsonl(city));
    const judged = parse((await runCapture(['annotate', '--input', 'city.jsonl', '--format', 'openai', '--json'], dir)).stdout);
    expect(judged[0]!.labels).toEqual([{ name: 'semantic_error', step_index: 1, confidence: 0.7 }]);
    const none = await runCapture(['annotate', '--input', 'city.jsonl', '--format', 'openai', '--json', '--judge', 'none'], dir);
    expect(none.code).toBe(0);
    expect(parse(none.stdout)[0]!.labels).toEqual([]);
  });

  it('exits 2 with one line for a bad file, format or flag combination', async () => {
    const cases: [string[], RegExp][] = [
      [['--input', 'nope.jsonl', '--format', 'openai'], /^faultline: cannot read nope\.jsonl: no such file or directory$/],
      [['--input', 'chat.jsonl', '--format', 'csv'], /argument 'csv' is invalid/],
      [['--input', 'chat.jsonl'], /^faultline: --input and --format go together/],
      [['--format', 'openai'], /^faultline: --input and --format go together/],
      [['--input', 'chat.jsonl', '--format', 'openai', '--db', 'x.db'], /^faultline: --input annotates a file without a store/],
      [['--input', 'steps.jsonl', '--format', 'tau-bench'], /^faultline: steps\.jsonl:1: expected a JSON array, found "\{"$/],
    ];
    for (const [args, message] of cases) {
      const run = await runCapture(['annotate', ...args], dir);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)]);
    }
    // A file with no line in the format: one error line, not a warning per line before it (as import).
    const wrong = await runCapture(['annotate', '--input', 'chat.jsonl', '--format', 'otel'], dir);
    expect(wrong).toMatchObject({ code: 2, stdout: '', stderr: 'faultline: no trajectories in chat.jsonl: all 3 non-blank lines were skipped (is it in the otel format?)\n' });
  });

  it('a long file in another format is one line; past 1000 held warnings the rest are counted in one line', async () => {
    const steps = Array.from({ length: 1500 }, (_, i) => JSON.stringify({ step: i, tool: 'get_weather' })).join('\n') + '\n';
    writeFileSync(join(dir, 'long-steps.jsonl'), steps);
    const wrong = await runCapture(['annotate', '--input', 'long-steps.jsonl', '--format', 'openai'], dir);
    expect(wrong).toMatchObject({ code: 2, stdout: '', stderr: 'faultline: no trajectories in long-steps.jsonl: all 1500 non-blank lines were skipped (is it in the openai format?)\n' });
    writeFileSync(join(dir, 'long-mixed.jsonl'), steps + readFileSync(join(dir, 'chat.jsonl'), 'utf8'));
    const run = await runCapture(['annotate', '--input', 'long-mixed.jsonl', '--format', 'openai'], dir);
    expect(run.code).toBe(0);
    const warnings = run.stderr.trimEnd().split('\n');
    // chat.jsonl's own 'not json' line comes after its first trajectory: warned about as it comes.
    expect(warnings).toHaveLength(1003);
    expect(warnings[1002]).toMatch(/^faultline annotate: outcomes of 2 trajectories: /);
    expect(warnings[999]).toMatch(/^long-mixed\.jsonl:1000: /);
    expect(warnings[1000]).toBe('long-mixed.jsonl: 500 more lines skipped before the first trajectory (not shown)');
    expect(warnings[1001]).toMatch(/^long-mixed\.jsonl:1502: not JSON: /);
    expect(run.stdout).toMatch(/^faultline annotate: 2 trajectories from long-mixed\.jsonl \(openai\), .* 1501 lines skipped\n/);
  });

  it('--out a directory, under a missing directory or under a file: one line, exit 2, before anything is annotated', async () => {
    mkdirSync(join(dir, 'out-dir'));
    writeFileSync(join(dir, 'a-file'), 'kept\n');
    for (const [out, reason] of [
      ['out-dir', 'is a directory'],
      ['missing/annotated.jsonl', 'its directory does not exist'],
      ['a-file/annotated.jsonl', 'a-file is not a directory'],
    ] as const) {
      const run = await runCapture(['annotate', '--input', 'chat.jsonl', '--format', 'openai', '--json', '--out', out], dir);
      expect(run.code, out).toBe(2);
      expect(run.stdout, out).toBe('');
      expect(run.stderr, out).toBe(`faultline: cannot write ${out}: ${reason}\n`);
    }
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    expect(readFileSync(join(dir, 'a-file'), 'utf8')).toBe('kept\n');
  });

  const tau = tauBenchAirlineFile();
  it('labels the real tau-bench airline file as the store path does', async () => {
    const run = await runCapture(['annotate', '--input', tau, '--format', 'tau-bench', '--json'], dir);
    expect(run.code).toBe(0);
    const lines = parse(run.stdout);
    expect(lines).toHaveLength(200);
    expect(new Set(lines.map((l) => l.source_id)).size).toBe(200);
    // The cases annotate.test.ts checks on the store path, here as counts per task.
    const count = (sourceId: string, name: string) => lines.find((l) => l.source_id === sourceId)!.labels.filter((l) => l.name === name).length;
    expect([count('9:2', 'loop_failure'), count('15:0', 'cascade_failure'), count('32:0', 'idempotency_risk'), count('13:2', 'ignored_error')].every((n) => n > 0)).toBe(true);
  }, 60_000);
});
