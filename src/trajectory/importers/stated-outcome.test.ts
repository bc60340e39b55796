import { describe, expect, it } from 'vitest';
import { anthropicTrajectory } from './anthropic.js';
import { openAiTrajectory } from './openai.js';
import { statedOutcome } from './stated-outcome.js';

const messages = [{ role: 'user', content: 'hi' }];

describe('statedOutcome', () => {
  it('reads the grade where logs keep it, and says which field stated it', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ reward: 1 }, 'success', 'reward=1'],
      [{ reward: 0.5 }, 'partial', 'reward=0.5'],
      [{ reward: 0 }, 'failure', 'reward=0'],
      [{ outcome: 'FAILED' }, 'failure', 'outcome=FAILED'],
      [{ final_outcome: 'partial' }, 'partial', 'final_outcome=partial'],
      [{ success: false }, 'failure', 'success=false'],
      [{ metadata: { resolved: true } }, 'success', 'metadata.resolved=true'],
      [{ info: { reward_info: { reward: 0 } } }, 'failure', 'info.reward_info.reward=0'],
      [{ meta: { task_success: 'true' } }, 'success', 'meta.task_success=true'],
      [{ evaluation: { outcome: 'Partially resolved' } }, 'partial', 'evaluation.outcome="Partially resolved"'],
      // The record's own field wins over a nested one.
      [{ success: true, metadata: { success: false } }, 'success', 'success=true'],
    ];
    for (const [record, outcome, evidence] of cases) {
      expect(statedOutcome(record), JSON.stringify(record)).toEqual({ outcome, basis: { source: 'stated', confidence: 1, evidence } });
    }
  });

  it('states nothing for records without a grade, or with values that are not one', () => {
    for (const record of [{}, { reward: 'high' }, { reward: Number.NaN }, { outcome: 'maybe' }, { success: 'yes please' }, { metadata: 'x' }, { status: 'completed' }]) {
      expect(statedOutcome(record), JSON.stringify(record)).toBeNull();
    }
  });

  it('reads only task-named keys on a step line, where a bare success is the call', () => {
    expect(statedOutcome({ success: false }, 'step')).toBeNull();
    expect(statedOutcome({ final_outcome: 'success' }, 'step')?.outcome).toBe('success');
    expect(statedOutcome({ metadata: { task_success: false } }, 'step')?.outcome).toBe('failure');
  });
});

describe('stated outcomes in the chat importers', () => {
  it('marks a trajectory stated, with the field, or unstated with confidence 0 for an inference to fill in', () => {
    const stated = openAiTrajectory({ id: 'a', messages, metadata: { success: true } });
    const unstated = anthropicTrajectory({ id: 'b', messages });
    expect(stated).toMatchObject({ final_outcome: 'success', outcome_basis: { source: 'stated', confidence: 1, evidence: 'metadata.success=true' } });
    expect(unstated).toMatchObject({ final_outcome: 'unknown', outcome_basis: { source: 'unstated', confidence: 0, evidence: null } });
  });
});
