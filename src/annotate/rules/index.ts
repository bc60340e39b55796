/** The rule annotators (seed 000 section 2.2): each a pure function of a trajectory. */
import type { Annotator, Label } from '../label.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { backoffViolation } from './backoff-violation.js';
import { blindRetry } from './blind-retry.js';
import { cascadeFailure } from './cascade-failure.js';
import { idempotencyRisk, type IdempotencyRiskOptions } from './idempotency-risk.js';
import { ignoredError } from './ignored-error.js';
import { loopFailure } from './loop-failure.js';

export { backoffViolation, BACKOFF_VIOLATION_CONFIDENCE } from './backoff-violation.js';
export { blindRetry, BLIND_RETRY_CONFIDENCE } from './blind-retry.js';
export { cascadeFailure, CASCADE_FAILURE_CONFIDENCE } from './cascade-failure.js';
export { idempotencyRisk, IDEMPOTENCY_RISK_CONFIDENCE, type IdempotencyRiskOptions } from './idempotency-risk.js';
export { ignoredError, IGNORED_ERROR_CONFIDENCE } from './ignored-error.js';
export { loopFailure, LOOP_FAILURE_CONFIDENCE, LOOP_THRESHOLD } from './loop-failure.js';

export type RuleOptions = IdempotencyRiskOptions;

/** Every rule, in a fixed order, with the options the configurable ones take. */
export function ruleAnnotators(options: RuleOptions = {}): Annotator[] {
  return [loopFailure, (t: Trajectory): Label[] => idempotencyRisk(t, options), cascadeFailure, ignoredError, blindRetry, backoffViolation];
}
