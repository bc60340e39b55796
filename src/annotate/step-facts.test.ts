import { describe, expect, it } from 'vitest';
import { hasReadBetween, isReadLikeName, isSucceeded, nextCallOf, paramsKey, recoveryOf, sameCall } from './step-facts.js';
import { trajectory, type StepSpec } from './trajectory.test-helpers.js';

/** A seeded trajectory of `n` steps over a few tools, about a third failing. */
function randomTrajectory(n: number, seed: number) {
  let a = seed;
  const next = () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const tools = ['get_order', 'create_order', 'send_email', 'search', 'book_flight'];
  const specs: StepSpec[] = Array.from({ length: n }, () => {
    const spec: StepSpec = { tool: tools[Math.floor(next() * tools.length)]!, params: { id: Math.floor(next() * 3) } };
    if (next() < 0.35) spec.fail = { category: 'system', kind: 'server_error' };
    if (next() < 0.3) spec.decision = { action: 'switch_tool' };
    return spec;
  });
  return trajectory(specs);
}

describe('step facts computed once per trajectory', () => {
  it('agree with a direct scan: next call of the same tool, recovery, reads in between', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const t = randomTrajectory(60, seed);
      const steps = t.steps;
      steps.forEach((step, i) => {
        const next = steps.findIndex((s, j) => j > i && s.tool_name === step.tool_name);
        expect(nextCallOf(steps, i, step.tool_name)?.at ?? -1).toBe(next);
        const later = steps.findIndex((s, j) => j > i && s.tool_name === step.tool_name && isSucceeded(s));
        const fallback = step.agent_decision.action === 'switch_tool' && steps[i + 1] !== undefined && isSucceeded(steps[i + 1]!) ? i + 1 : undefined;
        expect(recoveryOf(t, i)).toBe(later >= 0 ? later : fallback);
        for (const to of [i + 1, i + 2, i + 7, steps.length]) {
          expect(hasReadBetween(steps, i, to)).toBe(steps.slice(i + 1, to).some((s) => isReadLikeName(s.tool_name)));
        }
      });
      // Another tool than the step's own goes through the plain scan.
      expect(nextCallOf(steps, 0, 'no_such_tool')).toBeUndefined();
    }
  });

  it('keys arguments by content, not key order', () => {
    const t = trajectory([
      { tool: 'f', params: { a: 1, b: [1, { c: 2 }] } },
      { tool: 'f', params: { b: [1, { c: 2 }], a: 1 } },
      { tool: 'f', params: { a: 1, b: [1, { c: 3 }] } },
    ]);
    expect(paramsKey(t.steps[0]!)).toBe(paramsKey(t.steps[1]!));
    expect(sameCall(t.steps[0]!, t.steps[1]!)).toBe(true);
    expect(sameCall(t.steps[0]!, t.steps[2]!)).toBe(false);
  });

  it('cascadeFailure picks the same failures as the definition read literally (a scan back from every step)', async () => {
    const { cascadeFailure } = await import('./rules/cascade-failure.js');
    const { argumentValues, isFailed, isSideEffectFreeName } = await import('./step-facts.js');
    const literal = (t: ReturnType<typeof trajectory>) =>
      t.steps.flatMap((step, j) => {
        if (isSideEffectFreeName(step.tool_name)) return [];
        const placeholder = JSON.stringify(step.input_params).includes('"unknown"');
        const values = argumentValues(step.input_params);
        for (let i = j - 1; i >= 0; i--) {
          const failed = t.steps[i]!;
          if (!isFailed(failed) || failed.tool_name === step.tool_name) continue;
          if (t.steps.slice(i + 1, j).some((s) => s.tool_name === failed.tool_name && isSucceeded(s))) continue;
          if (placeholder || [...argumentValues(failed.input_params)].some((v) => values.has(v))) return [[step.step_index, failed.step_index]];
        }
        return [];
      });
    let labelled = 0;
    for (let seed = 1; seed <= 30; seed++) {
      let a = seed;
      const next = () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32);
      const ids = ['ZFA04Y', 'K8Q2LM', 'unknown', 7000, 5];
      const tools = ['get_reservation', 'cancel_reservation', 'send_email', 'book_flight', 'update_user'];
      const t = trajectory(
        Array.from({ length: 40 }, () => ({
          tool: tools[Math.floor(next() * tools.length)]!,
          params: { id: ids[Math.floor(next() * ids.length)], other: ids[Math.floor(next() * ids.length)] },
          ...(next() < 0.4 ? { fail: { category: 'business' as const, kind: 'not_found' } } : {}),
        })),
      );
      const expected = literal(t);
      labelled += expected.length;
      expect(cascadeFailure(t).map((l) => [l.step_index, l.decision_step])).toEqual(expected);
    }
    expect(labelled).toBeGreaterThan(100);
  });

  it('annotates a 20 000-step trajectory with every rule (no per-step rescans of the whole trajectory)', async () => {
    const { annotateTrajectory } = await import('./annotate-trajectory.js');
    const t = randomTrajectory(20_000, 7);
    const result = annotateTrajectory({ ...t, final_outcome: 'failure' });
    expect(result.labels.length).toBeGreaterThan(100);
    expect(result.marks).toHaveLength(1);
  }, 30_000);
});
