/**
 * Known-bad agents: the robust agent with exactly one habit of the playbook turned into the
 * anti-pattern it prevents. A scenario that none of them fails tests nothing; a family of
 * scenarios that its target does not fail tests something else than it claims.
 */
import { createRobustAgent } from './agents/robust.js';
import type { PlaybookRules } from './agents/playbook.js';
import type { Agent } from './types.js';

export const KNOWN_BAD_RULES = {
  /** Retries every failure the same way, at once, up to 8 times: no reading of the error. */
  blindRetry: { classify: false, backoff: false, maxIdenticalFailures: 8 },
  /** Takes every 200 at its word and never notices missing fields. */
  trustEverything: { verifyResults: false },
  /** Answers a 401/403 by editing arguments, and claims success when nothing worked. */
  neverEscalate: { escalateAuth: false, honestOutcome: false },
  /** Repeats writes after ambiguous failures without a key or a look at the state. */
  retryWrites: { protectWrites: false },
  /** Backs off on its own schedule, whatever Retry-After says. */
  ignoreRetryAfter: { honorRetryAfter: false },
  /** Carries on with the later steps when an earlier one failed. */
  pressOn: { stopOnFailure: false },
  /** Repeats rejected arguments instead of fixing what the error names. */
  noParamFix: { fixParameters: false },
  /** Stops at the first failure, however transient. */
  giveUpEarly: { maxIdenticalFailures: 1 },
} as const satisfies Record<string, Partial<PlaybookRules>>;

export type KnownBadName = keyof typeof KNOWN_BAD_RULES;

export const KNOWN_BAD_NAMES = Object.keys(KNOWN_BAD_RULES) as KnownBadName[];

export function knownBadAgent(name: KnownBadName): Agent {
  return createRobustAgent({ name, rules: KNOWN_BAD_RULES[name] });
}
