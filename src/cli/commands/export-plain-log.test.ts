/**
 * A plain OpenAI chat log, as most teams have one: tool failures in the shapes real APIs give
 * them, no reward, no outcome, no metadata. Import, annotate and export through the CLI, and
 * get training rows that keep what the model saw.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HEURISTIC_JUDGE_QUALITY } from '../../annotate/judge/heuristic-judge-quality.js';
import type { DatasetCard } from '../../dataset/dataset-card.js';
import type { DpoOpenAiExample } from '../../dataset/dpo-openai-exporter.js';
import type { SftExample } from '../../dataset/sft-exporter.js';
import { repositoryRoot } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-plain-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const log = join(repositoryRoot(), 'corpora', 'logs', 'outcomes', 'tuned.jsonl');
const rows = <T>(name: string): T[] => readFileSync(join(dir, name), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as T);
const card = (name: string): DatasetCard => JSON.parse(readFileSync(join(dir, `${name}.card.json`), 'utf8')) as DatasetCard;
const logged = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: string; messages: { role: string; content: string | null }[]; tools: { function: { name: string; description: string } }[] });

describe('a plain OpenAI log with failures and no metadata', () => {
  const db = join(dir, 'plain.db');

  it('imports, says on stderr why nothing can be exported before annotation, then yields SFT and DPO rows', async () => {
    expect((await runCapture(['import', '--format', 'openai', log, '--db', db], dir)).code).toBe(0);

    const before = await runCapture(['export', '--format', 'sft', '--db', db, '--out', 'early.jsonl'], dir);
    expect(before.code).toBe(3);
    expect(before.stderr).toMatch(/^faultline export: no sft examples written:\n {2}66 of 66 trajectories: outcome is unknown \(the log states none, and nothing has inferred one\): run `faultline annotate`/);

    const annotated = await runCapture(['annotate', '--db', db], dir);
    expect(annotated.code).toBe(0);
    expect(annotated.stdout).toMatch(/\noutcomes inferred from the final answers \(the logs stated none\): 66 by judge:heuristic; /);

    const sft = await runCapture(['export', '--format', 'sft', '--db', db, '--out', 'sft.jsonl', '--val-fraction', '0'], dir);
    expect(sft).toMatchObject({ code: 0, stderr: '' });
    const sftRows = rows<SftExample>('sft.jsonl');
    expect(sftRows.length).toBeGreaterThanOrEqual(25);
    const sftCard = card('sft.jsonl');
    expect(sftCard.outcomes.exported.inferred).toBe(sftRows.length);
    expect(sftCard.outcomes.inferred.by).toEqual({ 'judge:heuristic': sftRows.length });
    expect(sftCard.outcomes.inferred.min_confidence).toBeGreaterThanOrEqual(0.5);
    expect(readFileSync(join(dir, 'sft.jsonl.card.md'), 'utf8')).toContain('| inferred by a judge |');
    // The judge that inferred them says how far it can be trusted, from the labelled sets.
    expect(sftCard.judge_quality).toEqual({ 'judge:heuristic': HEURISTIC_JUDGE_QUALITY });
    expect(readFileSync(join(dir, 'sft.jsonl.card.md'), 'utf8')).toContain('## Heuristic judge: measured quality');

    // The log's own tools, system prompt, result texts and final answer carry through.
    const w2378156 = sftRows.find((r) => r.messages.some((m) => m.role === 'user' && m.content === 'Where is my order W2378156?'))!;
    const source = logged.find((l) => l.id === 't01')!;
    expect(w2378156.tools.map((t) => t.function.name)).toEqual(source.tools.map((t) => t.function.name));
    expect(w2378156.tools[0]!.function.description).toBe(source.tools[0]!.function.description);
    expect(w2378156.messages.map((m) => m.content)).toEqual(source.messages.map((m) => m.content));

    const dpo = await runCapture(['export', '--format', 'dpo-openai', '--db', db, '--out', 'dpo.jsonl', '--val-fraction', '0'], dir);
    expect(dpo).toMatchObject({ code: 0, stderr: '' });
    const pairs = rows<DpoOpenAiExample>('dpo.jsonl');
    expect(pairs.length).toBeGreaterThanOrEqual(2);
    for (const pair of pairs) {
      expect(pair.input.tools.length).toBeGreaterThan(0);
      const preferred = pair.preferred_output[0]!;
      expect(preferred.role).toBe('assistant');
      // A tool turn holds the text the tool returned, never a rewritten error object.
      for (const m of pair.input.messages) if (m.role === 'tool') expect(m.content).not.toMatch(/"error_code":"TOOL_ERROR"/);
    }
    // A write that failed is verified with the log's own listing tool before anything is repeated.
    const verify = pairs.find((p) => p.input.messages.some((m) => m.role === 'user' && m.content.includes('KB-104')))!;
    expect(verify.preferred_output[0]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'list_orders', arguments: '{"user_id":"u_2231"}' } }] });

    const stated = await runCapture(['export', '--format', 'sft', '--db', db, '--out', 'stated.jsonl', '--exclude-inferred-outcomes'], dir);
    expect(stated.code).toBe(3);
    expect(stated.stderr).toContain('outcome inferred by a judge, left out by --exclude-inferred-outcomes: drop the flag');
  }, 120_000);

  it('documents the exit codes in --help', async () => {
    const help = await runCapture(['export', '--help'], dir);
    expect(help.stdout).toContain('Exit codes: 0 examples written; 3 no example written');
    expect(help.stdout).toContain('--exclude-inferred-outcomes');
  });
});
