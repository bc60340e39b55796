import type { Label } from '../label.js';
import { hasReadBetween, idempotencyKeyOf, isFailed, isNonIdempotentName, nextCallOf } from '../step-facts.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { failureNote } from '../failure-note.js';

export const IDEMPOTENCY_RISK_CONFIDENCE = 0.6;

export interface IdempotencyRiskOptions {
  /**
   * Declared idempotency by tool name; it wins over the name. The trajectory model carries no
   * per-step declaration, so this (or an idempotency key in the arguments) is the only way to
   * say that `create_order` is safe to repeat.
   */
  idempotent?: Readonly<Record<string, boolean>>;
}

/** Failure kinds after which the request certainly did not take effect (DESIGN.md "Ambiguous outcomes", plus refusals). */
const NO_EFFECT_KINDS = new Set(['connection_refused', 'dns_failure', 'proxy_failed', 'dependency_down', 'circuit_open', 'not_found', 'precondition_failed', 'no_results']);

function mayHaveTakenEffect(step: TrajectoryStep): boolean {
  if (step.status === 'rejected') return false;
  const category = step.failure_category;
  if (category === 'parameter' || category === 'auth' || category === 'rate_limit') return false;
  return step.failure_kind === null || !NO_EFFECT_KINDS.has(step.failure_kind);
}

/**
 * `idempotency_risk`: a non-idempotent tool was called again after a failure that may have
 * taken effect, without checking state first. In full:
 * - the tool is non-idempotent: declared so in `options.idempotent`, or, when nothing is
 *   declared, named like a write that adds effects (create, send, delete, book, cancel, pay,
 *   refund, transfer, ...; see `isNonIdempotentName`);
 * - the failure may have taken effect: not `rejected`, not a parameter, auth or rate-limit
 *   error, not a refused connection, DNS failure, 503, open circuit, not-found or failed
 *   precondition (all of which mean the request was not carried out);
 * - the next call of the same tool (any arguments) follows with no read-like call (get, list,
 *   search, check, ...) in between, which would have been the state check;
 * - the two calls do not carry the same idempotency key in their arguments.
 * The repeat is labelled; the faulted decision is the one after the failure.
 */
export function idempotencyRisk(trajectory: Trajectory, options: IdempotencyRiskOptions = {}): Label[] {
  const labels: Label[] = [];
  const steps = trajectory.steps;
  steps.forEach((step, i) => {
    if (!isFailed(step) || !mayHaveTakenEffect(step)) return;
    const declared = options.idempotent?.[step.tool_name];
    if (declared === true || (declared === undefined && !isNonIdempotentName(step.tool_name))) return;
    const next = nextCallOf(steps, i, step.tool_name);
    if (next === undefined) return;
    if (hasReadBetween(steps, i, next.at)) return;
    const key = idempotencyKeyOf(step);
    if (key !== undefined && key === idempotencyKeyOf(next.step)) return;
    labels.push({
      name: 'idempotency_risk',
      step_index: next.step.step_index,
      confidence: IDEMPOTENCY_RISK_CONFIDENCE,
      reason: `called the non-idempotent ${step.tool_name} again after step ${step.step_index} failed (${failureNote(step)}) without checking whether it took effect`,
      decision_step: step.step_index,
    });
  });
  return labels;
}
