/**
 * Known-bad agents: the robust agent with exactly one habit turned into the anti-pattern it
 * prevents. Each is minimally bad on the measure {@link FLAWS_BY_MEASURE} files it under, so a
 * scenario where none of a measure's flaws fails that measure shows a measure that cannot fail
 * there (failability.test.ts).
 */
import { createRobustAgent } from './agents/robust.js';
import { PlaybookRun, ROBUST_RULES, type PlaybookRules } from './agents/playbook.js';
import type { Measure } from './run-verdict.js';
import type { Agent } from './types.js';

export const KNOWN_BAD_RULES = {
  /** Retries every failure the same way, at once, up to 8 times: no reading of the error. */
  blindRetry: { classify: false, backoff: false, maxIdenticalFailures: 8 },
  /** Takes every 200 at its word and never notices missing fields. */
  trustEverything: { verifyResults: false },
  /** Answers a 401/403 by editing arguments, and claims success when nothing worked. */
  neverEscalate: { escalateAuth: false, honestOutcome: false },
  /** Repeats writes after ambiguous failures or doubtful answers, without a key or a look at the state. */
  retryWrites: { protectWrites: false },
  /** Backs off on its own schedule, whatever Retry-After says. */
  ignoreRetryAfter: { honorRetryAfter: false },
  /** Carries on with the later steps when an earlier one failed. */
  pressOn: { stopOnFailure: false },
  /** Repeats rejected arguments instead of fixing what the error names. */
  noParamFix: { fixParameters: false },
  /** Stops at the first failure, however transient. */
  giveUpEarly: { maxIdenticalFailures: 1 },
  /** Ends `completed` whatever happened. */
  claimsSuccess: { honestOutcome: false },
} as const satisfies Record<string, Partial<PlaybookRules>>;

/** Flaws that are not a rule of the playbook: what the agent says, or when it stops. */
const OTHER_FLAWS = {
  /** Handles everything as the robust agent does, and names no failure. */
  noDiagnoses: (): Agent => {
    const robust = createRobustAgent({ name: 'noDiagnoses' });
    return { name: 'noDiagnoses', run: async (task) => ({ ...(await robust.run(task)), diagnoses: [] }) };
  },
  /** Gives up at the first failure or doubtful answer, before handling it. */
  quit: (): Agent => ({ name: 'quit', run: (task) => new PlaybookRun(task, ROBUST_RULES, () => 'give_up').run() }),
} as const;

export type KnownBadName = keyof typeof KNOWN_BAD_RULES | keyof typeof OTHER_FLAWS;

export const KNOWN_BAD_NAMES = [...Object.keys(KNOWN_BAD_RULES), ...Object.keys(OTHER_FLAWS)] as KnownBadName[];

export function knownBadAgent(name: KnownBadName): Agent {
  if (Object.hasOwn(OTHER_FLAWS, name)) return OTHER_FLAWS[name as keyof typeof OTHER_FLAWS]();
  return createRobustAgent({ name, rules: KNOWN_BAD_RULES[name as keyof typeof KNOWN_BAD_RULES] });
}

/**
 * The minimal flaws that should fail each measure wherever it is scored: on every scenario, for
 * every measure it scores, one of these fails it (failability.test.ts).
 */
export const FLAWS_BY_MEASURE: Readonly<Record<Measure, readonly KnownBadName[]>> = {
  identification: ['noDiagnoses'],
  // Stopping at the first trouble; on a partial result, not saying what is missing.
  recovery: ['quit', 'giveUpEarly', 'trustEverything'],
  // A loop on a failure that persists, a false success where the task cannot be done, a wrong
  // way of stopping (no escalation), a side effect after a step failed.
  loop_avoidance: ['blindRetry', 'claimsSuccess', 'neverEscalate', 'pressOn'],
  semantic_verification: ['trustEverything'],
  // Twice (a blind repeat), or never (stopping before the write is done).
  idempotency_safety: ['retryWrites', 'quit'],
  retry_after_compliance: ['ignoreRetryAfter'],
};
