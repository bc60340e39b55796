/**
 * Measures the heuristic judge against the labelled calls in the repository, and its outcome
 * inference against the conversations with known outcomes. The figures are written into
 * `heuristic-judge-quality.ts` (what dataset cards and `review --report` show) and a test holds
 * that file to a fresh measurement.
 *
 * The labelled calls (all successful; a miss is a call that did not serve the intent):
 * - `corpora/judge/cases.jsonl`: realistic cases, each a short trajectory and the step judged;
 * Outcome accuracy is measured on the conversations of corpora/logs/outcomes and corpora/logs/results.
 * - tau-bench's airline results (`corpora/tau-bench`): every successful write, a miss when the
 *   task's expected actions hold no call of that tool with exactly those arguments; and the reads
 *   listed in `corpora/judge/tau-bench-reads.jsonl`, reviewed by hand.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { readTrajectories } from '../../trajectory/import-file.js';
import { repositoryRoot } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { isReadLikeName } from '../step-facts.js';
import { inferOutcomeFromConversation } from './final-answer.js';
import { judgeStep } from './heuristic.js';
import type { ConfusionCounts, HeuristicJudgeQuality } from './heuristic-judge-quality.js';

interface Case {
  id: string;
  intent: string;
  at: string;
  steps: { tool: string; params: unknown; result: unknown }[];
  judged: number;
  label: 'miss' | 'ok';
}

const jsonLines = <T>(path: string): T[] => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);

function caseTrajectory(c: Case): Trajectory {
  const steps: TrajectoryStep[] = c.steps.map((s, i) => ({
    step_index: i + 1,
    tool_name: s.tool,
    input_params: s.params,
    response: { status_code: 200, body: s.result },
    status: 'success',
    failure_type: null,
    failure_subtype: null,
    failure_category: null,
    failure_stage: null,
    failure_kind: null,
    agent_decision: { action: 'proceed' },
    decision_correctness: null,
    correctness_reason: null,
    correct_action: null,
    started_at: c.at,
  }));
  return {
    trajectory_id: `case_${c.id}`,
    source_id: c.id,
    task_description: c.intent,
    final_outcome: 'unknown',
    created_at: c.at,
    steps,
    failure_summary: { total_failures: 0, failure_types: [], failure_categories: {}, recovery_pattern: null, recovery_success: null },
    metadata: { source: 'openai', annotator: null, human_verified: false, domain: null, difficulty: null, schema_version: 1 },
  };
}

class Counts {
  tp = 0;
  fp = 0;
  fn = 0;
  tn = 0;
  add(miss: boolean, flagged: boolean): void {
    if (miss && flagged) this.tp++;
    else if (miss) this.fn++;
    else if (flagged) this.fp++;
    else this.tn++;
  }
  figures(): ConfusionCounts {
    const round = (n: number): number => Math.round(n * 1000) / 1000;
    return {
      calls: this.tp + this.fp + this.fn + this.tn,
      misses: this.tp + this.fn,
      tp: this.tp,
      fp: this.fp,
      fn: this.fn,
      tn: this.tn,
      precision: this.tp + this.fp === 0 ? null : round(this.tp / (this.tp + this.fp)),
      recall: this.tp + this.fn === 0 ? null : round(this.tp / (this.tp + this.fn)),
    };
  }
}

const canonical = (value: unknown): string => JSON.stringify(value, (_k, v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

async function tauBenchCounts(root: string, counts: Counts, all: Counts): Promise<void> {
  const file = join(root, 'corpora', 'tau-bench', 'gpt-4o-airline.json');
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { task_id: number; trial: number; info: { task: { actions: { name: string; kwargs: unknown }[] } } }[];
  const expected = new Map(raw.map((r) => [`${r.task_id}:${r.trial}`, new Set(r.info.task.actions.map((a) => `${a.name} ${canonical(a.kwargs)}`))]));
  const reads = new Map(jsonLines<{ source_id: string; step_index: number; label: 'miss' | 'ok' }>(join(root, 'corpora', 'judge', 'tau-bench-reads.jsonl')).map((r) => [`${r.source_id}#${r.step_index}`, r.label]));
  for await (const t of readTrajectories('tau-bench', file)) {
    const actions = expected.get(t.source_id ?? '') ?? new Set<string>();
    t.steps.forEach((step, i) => {
      if (step.status !== 'success') return;
      let miss: boolean | undefined;
      const reviewed = reads.get(`${t.source_id}#${step.step_index}`);
      if (reviewed !== undefined) miss = reviewed === 'miss';
      else if (!isReadLikeName(step.tool_name) && !['think', 'calculate', 'transfer_to_human_agents'].includes(step.tool_name)) miss = !actions.has(`${step.tool_name} ${canonical(step.input_params)}`);
      if (miss === undefined) return;
      const flagged = judgeStep(t, i).length > 0;
      counts.add(miss, flagged);
      all.add(miss, flagged);
    });
  }
}

async function outcomeAccuracy(root: string, folder: string, file: string): Promise<{ right: number; total: number; accuracy: number }> {
  const dir = join(root, 'corpora', 'logs', folder);
  const expected = (JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as { conversations: Record<string, { outcome: string }> }).conversations;
  let right = 0;
  let total = 0;
  for await (const t of readTrajectories('openai', join(dir, file))) {
    total++;
    if (inferOutcomeFromConversation(t)?.outcome === expected[t.source_id ?? '']?.outcome) right++;
  }
  return { right, total, accuracy: Math.round((right / total) * 1000) / 1000 };
}

/** A fresh measurement, in the shape of `HEURISTIC_JUDGE_QUALITY`. */
export async function measureHeuristicJudge(): Promise<HeuristicJudgeQuality> {
  const root = repositoryRoot();
  const all = new Counts();
  const cases = new Counts();
  for (const c of jsonLines<Case>(join(root, 'corpora', 'judge', 'cases.jsonl'))) {
    const t = caseTrajectory(c);
    const flagged = judgeStep(t, c.judged - 1).length > 0;
    cases.add(c.label === 'miss', flagged);
    all.add(c.label === 'miss', flagged);
  }
  const tau = new Counts();
  await tauBenchCounts(root, tau, all);
  return {
    semantic_error: { ...all.figures(), by_set: { 'corpora/judge': cases.figures(), 'tau-bench airline': tau.figures() } },
    outcome_inference: {
      'corpora/logs/outcomes tuned': await outcomeAccuracy(root, 'outcomes', 'tuned.jsonl'),
      'corpora/logs/outcomes held-out': await outcomeAccuracy(root, 'outcomes', 'held-out.jsonl'),
      'corpora/logs/results tuned': await outcomeAccuracy(root, 'results', 'tuned.jsonl'),
      'corpora/logs/results held-out': await outcomeAccuracy(root, 'results', 'held-out.jsonl'),
    },
  };
}
