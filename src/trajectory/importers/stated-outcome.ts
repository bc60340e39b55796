/**
 * The outcome a log states for its task, read from the fields logs and eval harnesses keep it
 * in: an outcome word (`final_outcome`, `outcome`), a boolean (`success`, `passed`, `resolved`),
 * or a reward in [0, 1]; at the top of the record or under `metadata`, `info` (tau-bench,
 * gym-style harnesses), `meta`, `evaluation` or `eval`. Nothing here guesses: a log that states
 * none of these has no stated outcome, and the trajectory is marked `unstated` for an inference
 * to fill in (DESIGN.md "Importers and annotation").
 */
import type { FinalOutcome, OutcomeBasis } from '../../core/trajectory-types.js';
import { isRecord } from './json-lines.js';

/** Where records keep their grade, in the order they are read: the record itself first. */
const PLACES = ['', 'metadata', 'info', 'meta', 'evaluation', 'eval'] as const;
interface OutcomeKeys {
  words: readonly string[];
  booleans: readonly string[];
  rewards: readonly string[];
}

/** A conversation record is about one task, so its bare `success` or `outcome` is the task's. */
const RECORD_KEYS: OutcomeKeys = {
  words: ['final_outcome', 'outcome', 'task_outcome'],
  booleans: ['success', 'succeeded', 'is_success', 'task_success', 'passed', 'resolved', 'solved'],
  rewards: ['reward'],
};

/** A step line is about one call: there a bare `success` or `outcome` may be the call's, so only task-named keys count. */
const STEP_KEYS: OutcomeKeys = { words: ['final_outcome', 'task_outcome'], booleans: ['task_success'], rewards: ['reward', 'task_reward'] };

const OUTCOME_WORDS: Record<string, FinalOutcome> = {
  success: 'success',
  succeeded: 'success',
  successful: 'success',
  pass: 'success',
  passed: 'success',
  resolved: 'success',
  solved: 'success',
  completed: 'success',
  complete: 'success',
  done: 'success',
  correct: 'success',
  failure: 'failure',
  failed: 'failure',
  fail: 'failure',
  error: 'failure',
  unresolved: 'failure',
  incorrect: 'failure',
  aborted: 'failure',
  gave_up: 'failure',
  partial: 'partial',
  partially_resolved: 'partial',
  partial_success: 'partial',
};

/** Outcome from a reward in [0, 1]: 1 (or more) success, 0 (or less) failure, part credit partial. */
export function outcomeOfReward(reward: unknown): FinalOutcome {
  if (typeof reward !== 'number' || !Number.isFinite(reward)) return 'unknown';
  if (reward >= 1) return 'success';
  if (reward <= 0) return 'failure';
  return 'partial';
}

function outcomeOfBoolean(value: unknown): FinalOutcome {
  if (value === true || value === 'true') return 'success';
  if (value === false || value === 'false') return 'failure';
  return 'unknown';
}

function outcomeOfWord(value: unknown): FinalOutcome {
  if (typeof value !== 'string') return 'unknown';
  return OUTCOME_WORDS[value.trim().toLowerCase().replace(/[\s-]+/g, '_')] ?? 'unknown';
}

/** Numbers keep their text (`reward=0.5`); strings are quoted only when they are not plain words. */
function shown(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,40}$/.test(value) ? value : JSON.stringify(value).slice(0, 60);
}

export type Stated = { outcome: FinalOutcome; basis: OutcomeBasis };

function readPlace(place: Record<string, unknown>, prefix: string, keys: OutcomeKeys): Stated | null {
  const found = (key: string, value: unknown, outcome: FinalOutcome): Stated | null =>
    outcome === 'unknown' ? null : { outcome, basis: { source: 'stated', confidence: 1, evidence: `${prefix}${key}=${shown(value)}` } };
  for (const key of keys.words) {
    const stated = found(key, place[key], outcomeOfWord(place[key]));
    if (stated !== null) return stated;
  }
  for (const key of keys.booleans) {
    const stated = found(key, place[key], outcomeOfBoolean(place[key]));
    if (stated !== null) return stated;
  }
  for (const key of keys.rewards) {
    const stated = found(key, place[key], outcomeOfReward(place[key]));
    if (stated !== null) return stated;
  }
  // tau-bench and gym-style harnesses nest the grade one level down: info.reward_info.reward.
  const rewardInfo = place['reward_info'];
  return isRecord(rewardInfo) ? found('reward_info.reward', rewardInfo['reward'], outcomeOfReward(rewardInfo['reward'])) : null;
}

/**
 * The outcome `record` states, with the field that states it; null when it states none. `of`:
 * what the record is, a whole conversation (the default) or one step of a step log.
 */
export function statedOutcome(record: Record<string, unknown>, of: 'record' | 'step' = 'record'): Stated | null {
  const keys = of === 'record' ? RECORD_KEYS : STEP_KEYS;
  for (const name of PLACES) {
    const place = name === '' ? record : record[name];
    if (!isRecord(place)) continue;
    const stated = readPlace(place, name === '' ? '' : `${name}.`, keys);
    if (stated !== null) return stated;
  }
  return null;
}

/** The outcome parts an importer hands to `assembleTrajectory`: the stated one, or unknown and unstated. */
export function outcomeParts(stated: Stated | null): { final_outcome: FinalOutcome; outcome_basis: OutcomeBasis } {
  if (stated === null) return { final_outcome: 'unknown', outcome_basis: { source: 'unstated', confidence: 0, evidence: null } };
  return { final_outcome: stated.outcome, outcome_basis: stated.basis };
}
