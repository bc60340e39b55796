/**
 * The rule annotators against the labelled conversations of corpora/logs/outcomes: plain chat
 * logs imported as they are, annotated as `faultline annotate` does (the heuristic judge infers
 * the outcomes the rules that need one read), and compared label by label (name and step).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrajectories } from '../../trajectory/import-file.js';
import { repositoryRoot } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { annotateJudged, heuristicSemanticJudge } from '../judge/judged-annotation.js';

const corpus = join(repositoryRoot(), 'corpora', 'logs', 'outcomes');
const expected = (JSON.parse(readFileSync(join(corpus, 'expected.json'), 'utf8')) as { conversations: Record<string, { labels: { name: string; step_index: number }[] }> }).conversations;

describe('rule annotators on labelled conversations', () => {
  it('find the expected labels at precision and recall of 0.9 or better', async () => {
    let tp = 0;
    const fp: string[] = [];
    const fn: string[] = [];
    for (const file of ['tuned.jsonl', 'held-out.jsonl', 'rules.jsonl']) {
      for await (const t of readTrajectories('openai', join(corpus, file))) {
        const { labels } = await annotateJudged(t, heuristicSemanticJudge());
        const got = new Set(labels.filter((l) => l.source === undefined).map((l) => `${t.source_id} ${l.name}@${l.step_index}`));
        const want = new Set(expected[t.source_id!]!.labels.map((l) => `${t.source_id} ${l.name}@${l.step_index}`));
        for (const g of got) if (want.has(g)) tp++; else fp.push(g);
        for (const w of want) if (!got.has(w)) fn.push(w);
      }
    }
    const precision = tp / (tp + fp.length);
    if (process.env["FAULTLINE_SHOW_FIGURES"] === "1") console.log(`rules: tp ${tp}, fp ${fp.length}, fn ${fn.length}: ${fn.join(", ")}`);
    const recall = tp / (tp + fn.length);
    expect(tp + fn.length).toBeGreaterThanOrEqual(15);
    expect(precision, `false positives: ${fp.join(', ')}`).toBeGreaterThanOrEqual(0.9);
    expect(recall, `missed: ${fn.join(', ')}`).toBeGreaterThanOrEqual(0.9);
  });
});
