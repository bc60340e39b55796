import { describe, expect, it } from 'vitest';
import type { LabelReview, TrajectoryLabel } from '../core/trajectory-types.js';
import { annotateJudged, heuristicSemanticJudge, parseJudgeSpec } from './judge/judged-annotation.js';
import { applyReview, carryOverReviews, isJudgeLabel, labelRef, precisionReport, reviewedLabels, sampleForReview, type LabelRef } from './review.js';
import { trajectory } from './trajectory.test-helpers.js';

const refs = (n: number): LabelRef[] => Array.from({ length: n }, (_, i) => ({ trajectory_id: `t${i}`, name: 'semantic_error', step_index: 1 + (i % 3), source: 'judge:heuristic' }));
const at = '2026-03-29T00:00:00.000Z';
const review = (decision: LabelReview['decision'], corrected_to?: string): LabelReview => ({ decision, reviewed_at: at, ...(corrected_to === undefined ? {} : { corrected_to }) });
const judged = (extra: Partial<TrajectoryLabel> = {}): TrajectoryLabel => ({ name: 'semantic_error', step_index: 1, confidence: 0.75, reason: 'r', source: 'judge:heuristic', ...extra });

describe('sampleForReview', () => {
  it('takes the rounded share, at least one, the same labels for a seed whatever the input order', () => {
    const all = refs(200);
    const sample = sampleForReview(all, 0.05, 1);
    expect(sample).toHaveLength(10);
    expect(sampleForReview([...all].reverse(), 0.05, 1).map((r) => r.trajectory_id).sort()).toEqual(sample.map((r) => r.trajectory_id).sort());
    expect(sampleForReview(all, 0.05, 2)).not.toEqual(sample);
    expect(sampleForReview(refs(3), 0.05, 1)).toHaveLength(1);
    expect(sampleForReview([], 0.05, 1)).toEqual([]);
    expect(sampleForReview(all, 1, 1)).toEqual(all);
    expect(() => sampleForReview(all, 0, 1)).toThrow(RangeError);
  });
});

describe('reviews on labels', () => {
  it('applies a review to the matching label only, carries reviews over re-annotation, and reads labels as reviewed', () => {
    const labels = [judged(), judged({ step_index: 2 }), { name: 'loop_failure', step_index: 2, confidence: 0.9, reason: 'rule' }];
    expect(labels.map(isJudgeLabel)).toEqual([true, true, false]);
    expect(isJudgeLabel(judged({ name: 'judge_error' }))).toBe(false);
    const { labels: reviewed, applied } = applyReview(labels, labelRef('t', labels[1]!), review('corrected', 'ignored_error'));
    expect(applied).toBe(true);
    expect(reviewed[1]!.review?.decision).toBe('corrected');
    expect(applyReview(labels, { trajectory_id: 't', name: 'semantic_error', step_index: 9, source: 'judge:heuristic' }, review('accepted')).applied).toBe(false);

    const withRejected = applyReview(reviewed, labelRef('t', labels[0]!), review('rejected')).labels;
    // The new run gives the step-1 label again (with a new reason) and no longer the step-2 one.
    const next = carryOverReviews(withRejected, [judged({ reason: 'new reason' }), labels[2]!]);
    expect(next.map((l) => [l.step_index, l.name, l.reason, l.review?.decision])).toEqual([
      [1, 'semantic_error', 'new reason', 'rejected'],
      [2, 'loop_failure', 'rule', undefined],
      [2, 'semantic_error', 'r', 'corrected'],
    ]);
    expect(reviewedLabels(next).map((l) => `${l.name}@${l.step_index}`)).toEqual(['loop_failure@2', 'ignored_error@2']);
  });

  it('computes precision as accepted / reviewed, skipping unreviewed labels', () => {
    const report = precisionReport([judged({ review: review('accepted') }), judged({ review: review('rejected') }), judged(), judged({ source: 'judge:llm:m', review: review('accepted') })]);
    expect(report.judge_labels).toBe(4);
    expect(report.overall).toMatchObject({ reviewed: 3, accepted: 2, precision: 2 / 3 });
    expect(report.by_judge.map((r) => [r.key, r.precision])).toEqual([['judge:heuristic', 0.5], ['judge:llm:m', 1]]);
    expect(precisionReport([]).overall).toMatchObject({ reviewed: 0, precision: null, ci95: [0, 1] });
  });
});

describe('annotateJudged', () => {
  const failed = () =>
    trajectory(
      [
        { tool: 'get_weather', params: { city: 'Beijing' } },
        { tool: 'book_trip', fail: { category: 'business', kind: 'sold_out' } },
      ],
      { task: '上海明天的天气', outcome: 'failure' },
    );

  it('labels with the judge source, and a rejected judge label no longer faults the decision', async () => {
    const first = await annotateJudged(failed(), heuristicSemanticJudge());
    expect(first.stored.map((l) => `${l.name}@${l.step_index}:${l.source ?? 'rule'}`)).toEqual(['semantic_error@1:judge:heuristic']);
    expect(first.marks).toMatchObject([{ step_index: 1, decision_correctness: 'incorrect' }]);

    const rejected = { ...failed(), labels: first.stored.map((l) => ({ ...l, review: review('rejected') })) };
    const again = await annotateJudged(rejected, heuristicSemanticJudge());
    expect(again.stored[0]!.review?.decision).toBe('rejected');
    expect(again.marks.find((m) => m.step_index === 1)).toBeUndefined();

    const corrected = { ...failed(), labels: first.stored.map((l) => ({ ...l, review: review('corrected', 'ignored_error') })) };
    const fixed = await annotateJudged(corrected, heuristicSemanticJudge());
    expect(fixed.marks[0]!.correct_action?.action).toBe('escalate_to_user');
  });

  it('parses --judge specs', () => {
    expect(parseJudgeSpec('heuristic')).toEqual({ kind: 'heuristic' });
    expect(parseJudgeSpec('llm:gpt-4o-mini')).toEqual({ kind: 'llm', model: 'gpt-4o-mini' });
    expect(parseJudgeSpec('llm:')).toBeUndefined();
    expect(parseJudgeSpec('openai:gpt')).toBeUndefined();
  });
});
