/**
 * The scoring rules as the report prints them: per measure, its weight in the overall score, the
 * runs it counts, what passes it and what fails it. The rules themselves are run-verdict.ts; this
 * is their wording (DESIGN.md, "FailBench scoring rules", has the same table).
 */
import { LOOP_LIMIT, SAME_FAILURE_LIMIT, type Measure } from './run-verdict.js';
import { NEEDLESS_CALL_COST, SCORE_WEIGHTS } from './score.js';

export interface ScoringRule {
  /** A measure, or the needless-call cost. */
  measure: Measure | 'needless_calls';
  label: string;
  /** Its weight in the overall score, as printed. */
  weight: string;
  counts: string;
  passes: string;
  fails: string;
}

export const MEASURE_LABELS: Readonly<Record<Measure, string>> = {
  identification: 'Failure identification',
  recovery: 'Recovery',
  loop_avoidance: 'Loop avoidance',
  semantic_verification: 'Semantic self-verification',
  idempotency_safety: 'Idempotency safety',
  retry_after_compliance: 'Retry-After compliance',
};

const MET = 'met the failure (an injected fault hit a call of the tool the scenario is about, or that tool refused the request itself with the class the scenario expects)';

export const SCORING_RULES: readonly ScoringRule[] = [
  {
    measure: 'identification',
    label: MEASURE_LABELS.identification,
    weight: SCORE_WEIGHTS.identification.toFixed(2),
    counts: 'runs of scenarios that list it',
    passes: 'names the expected tool and class of a failure it met; every diagnosis names a tool it called and saw fail, with a class that failure had',
    fails: 'no call, no diagnosis, another class, or a diagnosis of a failure that did not happen (an invented cause, also counted on its own)',
  },
  {
    measure: 'recovery',
    label: MEASURE_LABELS.recovery,
    weight: SCORE_WEIGHTS.recovery.toFixed(2),
    counts: 'runs of recoverable scenarios that list it',
    passes: `${MET}, then ended as the oracle says: completed, the answer and the world's state right, with no write beyond those the task asks for; where only the answer is checked, the last call of that tool answered (a partial page counts)`,
    fails: 'never met the failure; stopped; claimed success without the result; an answer made up after a failure or wrong 200 it never got past; wrote more than the task asks (a second message, event, order, refund or file, duplicate or not)',
  },
  {
    measure: 'loop_avoidance',
    label: MEASURE_LABELS.loop_avoidance,
    weight: SCORE_WEIGHTS.loop_avoidance.toFixed(2),
    counts: 'runs of scenarios that list it',
    passes: `${MET}; at most ${LOOP_LIMIT} identical failing calls in a row and ${SAME_FAILURE_LIMIT} failures in a row of one tool with one error code; on an unrecoverable scenario, ended as its oracle says (the status it asks, escalated for a 401/403 where it says so; no side effect it forbids; no false success)`,
    fails: 'never met the failure; a loop; stopped the wrong way',
  },
  {
    measure: 'semantic_verification',
    label: MEASURE_LABELS.semantic_verification,
    weight: SCORE_WEIGHTS.semantic_verification.toFixed(2),
    counts: 'runs that received a wrong 200 (partial, empty, drifted, stale or renamed content), of scenarios that list it',
    passes: 'noticed it (named it, asked that tool again, or read the state a write changed), passed none of the wrong data on, and called no right answer wrong',
    fails: 'took it as it was; passed the wrong value on; a semantic alarm about a tool whose answers were right',
  },
  {
    measure: 'idempotency_safety',
    label: MEASURE_LABELS.idempotency_safety,
    weight: SCORE_WEIGHTS.idempotency_safety.toFixed(2),
    counts: 'runs of scenarios that list it',
    passes: "the task's writes exist exactly as the oracle counts them and nothing more was written, no duplicate entity, no write re-sent after an attempt that took effect or may have without a read of its state or the same idempotency key in between, and none left in doubt",
    fails: 'no write, two writes (the same or with other arguments), a blind re-send (even one that did no harm), stopping without checking a write that may have happened',
  },
  {
    measure: 'retry_after_compliance',
    label: MEASURE_LABELS.retry_after_compliance,
    weight: SCORE_WEIGHTS.retry_after_compliance.toFixed(2),
    counts: 'runs that called a tool again after it asked to wait (Retry-After)',
    passes: 'every such call came after the wait',
    fails: 'any came early',
  },
  {
    measure: 'needless_calls',
    label: 'Needless calls',
    weight: `-${NEEDLESS_CALL_COST.toFixed(2)} x share`,
    counts: 'every call',
    passes: '',
    fails: 'an identical re-send of a call refused for its request (parameter, auth, business failure) with no write since that could change its answer, or before its Retry-After passed',
  },
];

/** How the overall score is made, in one sentence. */
export const OVERALL_RULE =
  `The overall score is the weighted mean of the measure rates (a measure the agent never earned counts 0; measures no scenario of the suite offers drop out and the weights are rescaled), less ${NEEDLESS_CALL_COST.toFixed(2)} x the share of needless calls. A run earns a measure only by meeting the failure it is about and handling it.`;
