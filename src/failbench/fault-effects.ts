/**
 * What each fault kind of the plan model does to the call it hits, as the scorer needs to know it
 * (see DESIGN.md, "FailBench scoring rules"): the failure classes an agent may rightly name for
 * it, and whether it leaves a 200 whose content is wrong. One entry per kind, so a new kind does
 * not type-check until it says what it is.
 */
import type { FaultKind, HttpFaultStatus } from '../faults/plan-spec.js';
import { classifyHttpStatus } from '../runtime/classify.js';
import { FAILURE_CATEGORIES, type FailureCategory } from '../core/taxonomy.js';

/** A class a diagnosis may name: the taxonomy's categories (a wrong 200 is `semantic`). */
export type DiagnosisCategory = FailureCategory;
/**
 * The categories offered to an agent for its diagnoses: all but `logic`, which names what an
 * agent did (a loop, a repeated write), never what a fault does.
 */
export const DIAGNOSIS_CATEGORIES: readonly DiagnosisCategory[] = FAILURE_CATEGORIES.filter((c) => c !== 'logic');

/**
 * How a fault shows itself to the agent: `failure`, a failed call or a broken answer (a body that
 * does not parse); `wrong_result`, a 200 whose content the plan changed (missing items, another
 * entity, an old copy), which only an agent that checks the result notices, and which semantic
 * verification scores; `delay`, a slow answer that is a failure only once a timeout ends it.
 */
export type FaultShows = 'failure' | 'wrong_result' | 'delay';

export interface FaultEffect {
  shows: FaultShows;
  /** The classes a diagnosis of this fault may name; `params` are the rule's. */
  categories(params: Record<string, unknown> | undefined): readonly DiagnosisCategory[];
}

const fixed =
  (...categories: DiagnosisCategory[]) =>
  (): readonly DiagnosisCategory[] =>
    categories;

const failure = (...categories: DiagnosisCategory[]): FaultEffect => ({ shows: 'failure', categories: fixed(...categories) });
const wrongResult = (...categories: DiagnosisCategory[]): FaultEffect => ({ shows: 'wrong_result', categories: fixed(...categories) });

const FAULT_EFFECTS: Readonly<Record<FaultKind, FaultEffect>> = {
  timeout: failure('network'),
  hang: failure('network'),
  latency: { shows: 'delay', categories: fixed('network') },
  http_status: {
    shows: 'failure',
    categories: (params) => {
      const status = params?.['status'];
      return typeof status === 'number' ? [classifyHttpStatus(status as HttpFaultStatus).category] : ['system'];
    },
  },
  connection_refused: failure('network'),
  connection_reset: failure('network'),
  dns_failure: failure('network'),
  // A body that does not parse is a visible failure of the service, not a plausible wrong answer.
  malformed_json: failure('system'),
  partial: wrongResult('business', 'semantic'),
  empty: wrongResult('business', 'semantic'),
  schema_drift: wrongResult('system', 'semantic'),
  semantic_drift: wrongResult('semantic'),
  stale: wrongResult('semantic'),
  auth_expiry: failure('auth'),
  rate_limit_burst: failure('rate_limit'),
  commit_then_drop: failure('network'),
  // A 200 that says the write was done when nothing changed: only reading the state shows it.
  lost_write: wrongResult('semantic'),
};

/** The effect of a fault kind; undefined for a kind the plan model does not have. */
export function faultEffect(kind: string): FaultEffect | undefined {
  return Object.hasOwn(FAULT_EFFECTS, kind) ? FAULT_EFFECTS[kind as FaultKind] : undefined;
}

/** Whether a fault of this kind answers 200 with wrong content. */
export function isWrongResultFault(kind: string): boolean {
  return faultEffect(kind)?.shows === 'wrong_result';
}
