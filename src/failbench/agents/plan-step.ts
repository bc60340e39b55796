/**
 * The parts of a plan: a step (a tool call with how to build, check and confirm it), what
 * planning knows, and the planner of one domain's main step.
 */
import type { CheckContext, Mismatch } from './check-result.js';
import type { Intent } from './intent.js';

export type Obj = Record<string, unknown>;

/** What earlier steps were called with and returned, by step key. */
export type StepOutputs = ReadonlyMap<string, { args: Obj; output: unknown }>;

/** How to find out whether a write already took effect, with a read. */
export interface Confirmation {
  tool: string;
  args: Obj;
  /** The entity the write created (in the write's own output shape), if the read shows it. */
  find(output: unknown, prior: StepOutputs): Obj | undefined;
}

export interface Step {
  key: string;
  tool: string;
  /** The call's arguments given earlier outputs; undefined when a needed output is missing. */
  args(prior: StepOutputs): Obj | undefined;
  /** Whether the step changes state (create, send, cancel, refund, write). */
  write: boolean;
  /**
   * Runs only when this holds. When it does not, `done` says whether the task is still done
   * ("cancel it if it has not shipped": it shipped, nothing to do) or cannot be (nothing to refund).
   */
  when?(prior: StepOutputs): { run: true } | { run: false; why: string; done: boolean };
  check: CheckContext;
  /**
   * What the answer must reflect of earlier steps (a read after the task's own write must show
   * it); the mismatches, empty when it does. A read that does not is stale.
   */
  verify?(output: unknown, prior: StepOutputs): Mismatch[];
  /** For writes: how to check state after an ambiguous failure. */
  confirm?(args: Obj): Confirmation | undefined;
  /** One line for the answer. */
  summary(output: unknown, args: Obj): string;
}

export interface PlanContext {
  nowMs: number;
  tools: ReadonlySet<string>;
  /** Stable per task: the seed of idempotency keys. */
  taskId: string;
}

/** What every domain's planner is given besides the intent. */
export interface PlanHelpers {
  has: (tool: string) => boolean;
  verbs: ReadonlySet<string>;
  utcToday: string;
  base: CheckContext;
  startIso: string;
  /** Where a main step puts the lookups it needs before it runs (a payment's state before a refund). */
  steps: Step[];
}

/**
 * The planner of one domain's main step (see `domain-planners.ts`): whether an instruction is the
 * domain's, given the tools at hand, and the step that carries it out.
 */
export interface DomainPlanner {
  claims(intent: Intent, h: PlanHelpers): boolean;
  /**
   * The main step of an intent the planner claims; undefined when the domain is right but there is
   * no step to take. It may put the lookups the step needs before it into `h.steps`.
   */
  plan(intent: Intent, ctx: PlanContext, h: PlanHelpers): Step | undefined;
  /**
   * "...and tell me the balance left / its status": the read that reports the result of the main
   * step's change. It must show the change: a payment without the refund just made, or an order
   * still open after its cancellation, is an answer from before the change.
   */
  reportAfter?(intent: Intent, main: Step, h: Pick<PlanHelpers, 'base' | 'has'>): Step | undefined;
}
