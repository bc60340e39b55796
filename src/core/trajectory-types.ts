/**
 * The trajectory: seed 000 section 3's training unit. One task, the tool calls made for it in
 * order, what the agent decided after each, and (once annotated) whether that was right.
 *
 * Every step carries both taxonomies (DESIGN.md "Taxonomy"): seed 000's training labels in
 * `failure_type` / `failure_subtype`, and seed 001's runtime classification in
 * `failure_category` / `failure_stage` / `failure_kind`.
 */
import type {
  CallStatus,
  FailureCategory,
  FailureStage,
  TrainingFailureSubtype,
  TrainingFailureType,
} from './taxonomy.js';

/** The version of the trajectory JSON below; bumped when a field changes meaning. */
export const TRAJECTORY_SCHEMA_VERSION = 1;

/** Where a trajectory came from. `augmented`: a variant `faultline augment` made of a stored one (see `metadata.augmentation`). */
export type TrajectorySource = 'faultline' | 'openai' | 'anthropic' | 'tau-bench' | 'step-log' | 'otel' | 'augmented';

export const TRAJECTORY_SOURCES: readonly TrajectorySource[] = ['faultline', 'openai', 'anthropic', 'tau-bench', 'step-log', 'otel', 'augmented'];

/**
 * How the task ended. `partial`: a graded source gave part credit. `unknown`: the source does
 * not say (a chat log without a grade), and nothing should be inferred from it.
 */
export type FinalOutcome = 'success' | 'failure' | 'partial' | 'unknown';

/**
 * How `final_outcome` is known. `stated`: the log says so (a reward, an `outcome` or `success`
 * field, a root span's status). `inferred`: a judge read it from the conversation (the final
 * answer gives up, or reports the task done). `unstated`: the log says nothing and nothing has
 * inferred it yet; `final_outcome` is then `unknown`, and an inference may fill it in.
 */
export type OutcomeSource = 'stated' | 'inferred' | 'unstated';

export const OUTCOME_SOURCES: readonly OutcomeSource[] = ['stated', 'inferred', 'unstated'];

/** Where a trajectory's `final_outcome` came from (DESIGN.md "Importers and annotation"). */
export interface OutcomeBasis {
  source: OutcomeSource;
  /** In [0, 1]: 1 for a stated outcome, the judge's own for an inferred one, 0 while unstated. */
  confidence: number;
  /**
   * What decided it, for a person to check: the field and value for a stated outcome
   * (`reward=0.5`, `metadata.success=false`, `span.status=ERROR`), the judge's reason for an
   * inferred one; null while unstated.
   */
  evidence: string | null;
  /** For `inferred`: who inferred it (`judge:heuristic`, `judge:llm:<model>`). */
  by?: string;
}

/**
 * What a failure reading of a tool result rests on (the evidence extractor, src/trajectory/evidence/).
 * On a failed step: why it is a failure and of that category. On a successful step: word-level
 * signals only (a result that says "timed out" but states no code), below what fails a step,
 * kept for judges that weigh them.
 */
export interface FailureEvidence {
  /**
   * In [0, 1]: how sure the reading is of the failure and its category. Stated structure (a
   * status field, a status line, an errno, an exception class, a source's error flag) reads at
   * 0.7 and above; a category taken from words alone at most 0.5; a success's word signals below 0.3.
   */
  confidence: number;
  /**
   * What was read, strongest first, as `kind:detail`: `flag:is_error`, `field:error.code=429`,
   * `text:HTTP 401`, `exception:ReadTimeout`, `errno:ECONNRESET`, `grpc:UNAVAILABLE`,
   * `jsonrpc:-32602`, `words:timed out`. `words:` marks a reading from wording, not structure.
   */
  evidence: string[];
}

/** What the tool answered, as far as the source shows it. */
export interface StepResponse {
  /** HTTP status when the source has one (or a synthetic 200 for a success the source marked as such). */
  status_code?: number;
  /** e.g. `HTTP_429`, `ECONNRESET`, `TAU_INSUFFICIENT_SEATS`. */
  error_code?: string;
  /** The error text, for failures. */
  message?: string;
  /** The result (parsed JSON when it was JSON text). */
  body?: unknown;
  /**
   * The result text exactly as the model read it, when the source logged text and `body` is
   * that text parsed: what training exports put in the tool turn (formatting kept).
   */
  text?: string;
}

/** A text turn of a logged conversation: what the user or the agent said between tool calls. */
export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** A tool as the log declared it to the model (OpenAI `tools`, Anthropic `tools`). */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** The JSON Schema of its arguments, as declared. */
  parameters?: unknown;
}

/**
 * What the agent did after a step.
 *
 * - `proceed`: moved on (the step succeeded, or it was the last and succeeded);
 * - `retry`: called the same tool again with identical arguments, with no wait that honoured the backoff;
 * - `retry_with_params`: the same tool again with changed arguments (`params_delta`);
 * - `wait_and_retry`: the same call again after waiting at least the Retry-After or backoff (`wait_seconds`);
 * - `switch_tool`: called a different tool after a failure;
 * - `abort`: stopped after a failure (no further call);
 * - `escalate`: handed over to a human (a log said so);
 * - `other`: a logged decision this model has no name for (`source_action` keeps it).
 */
export type DecisionAction =
  | 'proceed'
  | 'retry'
  | 'retry_with_params'
  | 'wait_and_retry'
  | 'switch_tool'
  | 'abort'
  | 'escalate'
  | 'other';

export const DECISION_ACTIONS: readonly DecisionAction[] = [
  'proceed',
  'retry',
  'retry_with_params',
  'wait_and_retry',
  'switch_tool',
  'abort',
  'escalate',
  'other',
];

export interface AgentDecision {
  action: DecisionAction;
  /** Only the arguments that changed, for `retry_with_params`; a removed argument is null. */
  params_delta?: Record<string, unknown>;
  /** For `wait_and_retry`: how long the agent waited before the next call. */
  wait_seconds?: number;
  /** The agent's stated reason, when the source logged one, or how the decision was derived. */
  reasoning?: string;
  /** For `switch_tool`: the tool called next. */
  next_tool?: string;
  /** The source's own name for the action, when it logged one. */
  source_action?: string;
}

/** What an annotator says the agent should have done instead (seed 000's `correct_action`). */
export interface CorrectAction {
  action: string;
  params_delta?: Record<string, unknown>;
  wait_seconds?: number;
  reasoning?: string;
}

/** Whether the decision was right. Null until an annotator (or a log's own annotation) says. */
export type DecisionCorrectness = 'correct' | 'incorrect' | 'uncertain';

export interface TrajectoryStep {
  /** 1-based position in the trajectory (seed 000 counts from 1). */
  step_index: number;
  tool_name: string;
  /** The arguments as sent; the raw string when a model produced arguments that are not JSON. */
  input_params: unknown;
  response: StepResponse;
  /** How the call ended; null when the source has no result for it (a conversation cut short). */
  status: CallStatus | null;
  /** Seed 000's top-level label; null for successes and for failures only an annotator can label (business). */
  failure_type: TrainingFailureType | null;
  failure_subtype: TrainingFailureSubtype | null;
  /** Seed 001's category (why it failed). */
  failure_category: FailureCategory | null;
  /** Seed 001's stage (where it failed). */
  failure_stage: FailureStage | null;
  /**
   * Seed 001's low-cardinality failure type (`not_found`, `rate_limited`, ...). Named apart because
   * `failure_type` here is seed 000's.
   */
  failure_kind: string | null;
  agent_decision: AgentDecision;
  decision_correctness: DecisionCorrectness | null;
  correctness_reason: string | null;
  correct_action: CorrectAction | null;
  /** What the source calls this call (an execution id, a tool_call id, a span id), for tracing back. */
  source_ref?: string;
  /** UTC ISO-8601 start of the call, when the source has times. */
  started_at?: string;
  /**
   * The text turns of the conversation since the previous step's result (for the first step,
   * since the start: the first user message included), when the source is a conversation.
   */
  turns_before?: ConversationTurn[];
  /** Text the agent wrote in the same message as this call ("Let me check that."). */
  call_text?: string;
  /** The natural-language intent the call served, when the source logs one per step (seed 000's step log). */
  intent?: string;
  /** The agent's own reading of the result (seed 000's `agent_observation`), as opposed to the raw response. */
  agent_observation?: string;
  /** Why an imported step reads as failed (or, on a success, word-level doubts); absent when nothing was found. */
  failure_evidence?: FailureEvidence;
}

export interface FailureSummary {
  total_failures: number;
  /** Distinct seed 000 labels, `type/subtype`, in order of first appearance. */
  failure_types: string[];
  /** Failures per seed 001 category (business failures have no seed 000 label but are counted here). */
  failure_categories: Partial<Record<FailureCategory, number>>;
  /** The decision after the first failure; null without failures. */
  recovery_pattern: DecisionAction | null;
  /** Null without failures; else whether the last call succeeded and the task did not fail. */
  recovery_success: boolean | null;
}

export type Difficulty = 'easy' | 'medium' | 'hard';

export interface TrajectoryMetadata {
  source: TrajectorySource;
  /** Who labelled decisions; null while nobody has. */
  annotator: string | null;
  human_verified: boolean;
  domain: string | null;
  difficulty: Difficulty | null;
  schema_version: number;
  /** Set on the continuations `faultline bench --fission K` stores: the GRPO group this one belongs to. */
  fission?: FissionInfo;
  /** For `source: augmented`: which trajectory the variant was made from, and how. */
  augmentation?: AugmentationTag;
}

/** How an augmented trajectory was made (src/dataset/augment). */
export interface AugmentationTag {
  source_trajectory_id: string;
  /** The source of the trajectory it was made from. */
  source_source: TrajectorySource;
  kind: 'rename' | 'domain' | 'perturb';
  seed: number;
  /** 1-based: the n-th variant of this kind. */
  variant: number;
  /** `domain`: the domain the trajectory was mapped onto. */
  target_domain?: string;
  /** Set when an LLM rewrote the instruction and messages: the model. */
  llm_model?: string;
}

/**
 * One continuation of a FISSION group (seed 004 section 4): K runs that share a prefix up to and
 * including an injected fault, then went their own ways. `faultline export --format grpo` reads
 * the groups back from these.
 */
export interface FissionInfo {
  group_id: string;
  /** 0-based branch number, and how many branches the group has (K). */
  branch: number;
  k: number;
  /** The scenario oracle's reward for this continuation, in [0, 1] (see src/failbench/fission-reward.ts). */
  reward: number;
  /** Steps of this trajectory that are the shared prefix; the fault is the last of them. */
  prefix_steps: number;
  /** The injected fault's kind at the branch point (`http_status`, `timeout`, ...). */
  fault_type: string;
  /** Whether the tool that failed at the branch point is idempotent. */
  tool_idempotent: boolean;
  /** The dimension the scenario is about (src/failbench/fission.ts `focusDimension`); all it scores in `dimensions`. */
  dimension: string;
  dimensions: string[];
  scenario_id: string;
  /** The run seed (fault plans, jitter) and this branch's sampling seed. */
  seed: number;
  sample_seed: number;
  agent: string;
  /** How the continuation ended and its final answer. */
  status: string;
  answer: string;
  oracle_passed: boolean;
  /** Per dimension the scenario scores: passed or not. */
  scores: Record<string, boolean>;
}

/** One task's tool calls and decisions (seed 000 section 3). */
export interface Trajectory {
  /** Derived from source + source_id (or the content), so importing the same data twice yields the same id. */
  trajectory_id: string;
  /** The source's own id: an OpenAI line's `id`, tau-bench's `task_id:trial`, a trace id. Null when it has none. */
  source_id: string | null;
  task_description: string | null;
  final_outcome: FinalOutcome;
  /** Where `final_outcome` came from; absent on trajectories stored before it was kept (read those as stated unless `unknown`). */
  outcome_basis?: OutcomeBasis;
  /** UTC ISO-8601: the first call's time when the source has times, else when it was imported. */
  created_at: string;
  steps: TrajectoryStep[];
  failure_summary: FailureSummary;
  metadata: TrajectoryMetadata;
  /** Labels from `faultline annotate` (rule annotators and the semantic judge), once annotated. */
  labels?: TrajectoryLabel[];
  /** The system prompt the log gave the agent, when it had one. */
  system_prompt?: string;
  /** The tools the log declared to the model, in its order; absent when it declared none. */
  tools?: ToolDefinition[];
  /**
   * The text turns after the last tool result, when the source is a conversation: the agent's
   * closing answer (its last assistant turn) and what the user said to it.
   */
  closing_turns?: ConversationTurn[];
}

/** One annotator's finding on one step. */
export interface TrajectoryLabel {
  name: string;
  step_index: number;
  confidence: number;
  reason: string;
  /** Who said so: `judge:heuristic`, `judge:llm:<model>`, `rare-failure`; absent for the rules. */
  source?: string;
  /** The LLM judge's kind of mismatch, when it gave one. */
  mismatch_kind?: string;
  /** A person's decision on the label (`faultline review`); kept across re-annotation. */
  review?: LabelReview;
}

/** What a reviewer decided about a label: right, wrong name (`corrected_to`), or no failure at all. */
export interface LabelReview {
  decision: 'accepted' | 'corrected' | 'rejected';
  /** For `corrected`: the label the step should have had. */
  corrected_to?: string;
  /** UTC ISO-8601. */
  reviewed_at: string;
}
