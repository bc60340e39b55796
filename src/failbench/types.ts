/**
 * FailBench's contracts: what an agent under test sees and returns, what a scenario is, and what
 * a run reports. The runner, the scenario suite, the reference agents and the model adapters are
 * built against these types and nothing else of each other.
 */
import type { FailureCategory, FailureStage, FeedbackAction } from '../core/taxonomy.js';
import type { FaultRule } from '../faults/plan-spec.js';
import type { CatalogSnapshot } from '../tools/catalog-state.js';

// ---------------------------------------------------------------------------------------------
// What the agent sees
// ---------------------------------------------------------------------------------------------

/** A tool offered to the agent (what an LLM gets in its tools list). */
export interface AgentTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

/** A failed call as a real API client would see it. */
export interface RawToolError {
  /** `HTTP_429`, `ECONNRESET`, `TIMEOUT`, `MCP_-32602`, `INVALID_ARGUMENTS`, ... */
  code: string;
  message: string;
  /** HTTP status, when the failure had one. */
  status?: number;
  /** Response headers that matter to a client (e.g. `retry-after`), lower-case names. */
  headers?: Record<string, string>;
  /** The error body the service returned (parsed JSON when it was JSON). */
  body?: unknown;
}

/** What the runtime adds in assisted mode: its classification and feedback. */
export interface AssistedInfo {
  stage: FailureStage;
  category: FailureCategory;
  type: string;
  action: FeedbackAction;
  hint: string;
  retryable: boolean;
  retryAfterMs?: number;
  /** Failures the runtime absorbed (retried, refreshed, fell back) before answering. */
  absorbedFailures: number;
}

/** The result of `task.callTool`. In raw mode `assisted` is absent. */
export type AgentToolResult =
  | { ok: true; output: unknown; assisted?: { absorbedFailures: number } }
  | { ok: false; error: RawToolError; assisted?: AssistedInfo };

export type FeedbackMode = 'raw' | 'assisted';

/** One scenario as handed to an agent. It never includes the plan, the oracle or the real id. */
export interface AgentTask {
  /** Opaque, stable per scenario and run (not the scenario's file id). */
  id: string;
  instruction: string;
  /** The virtual "now", ISO-8601 UTC. */
  now: string;
  tools: AgentTool[];
  callTool(name: string, args: Record<string, unknown>): Promise<AgentToolResult>;
  /** Waits on the scenario's virtual clock (use it to honor Retry-After). */
  sleep(ms: number): Promise<void>;
  /** Aborted when the scenario's budget (turns or virtual time) runs out. */
  signal: AbortSignal;
  feedback: FeedbackMode;
  /**
   * Set only for a fission continuation (`faultline bench --fission K`, see fission.ts), and only
   * for agents whose `canSample` is true. Until the result of call `afterCall` has come back, the
   * agent must decide exactly as it would without `sampling` (so every branch replays the same
   * prefix); from its first decision after that result, it draws its choices from `seed`.
   */
  sampling?: TaskSampling;
}

/** What a fission continuation asks of a sampling agent (see {@link AgentTask.sampling}). */
export interface TaskSampling {
  /** Seed for this branch's choices; branches of one group get different seeds. */
  seed: number;
  /** 0-based index (in `callTool` order) of the call where the injected fault fired. */
  afterCall: number;
  /** 0-based branch number within the group. */
  branch: number;
}

/** An agent's account of a failure it noticed. */
export interface Diagnosis {
  tool: string;
  category: FailureCategory | 'semantic';
  type?: string;
  note?: string;
}

export interface AgentOutcome {
  status: 'completed' | 'gave_up' | 'escalated';
  answer: string;
  diagnoses: Diagnosis[];
}

/**
 * An agent under test. `module:<path>` loads any module whose default export implements this
 * (an object, or a factory function returning one).
 */
export interface Agent {
  readonly name: string;
  run(task: AgentTask): Promise<AgentOutcome>;
  /**
   * True when the agent honors `task.sampling` (can branch at a fault into different
   * continuations). `bench --fission` refuses agents without it.
   */
  readonly canSample?: boolean;
  /**
   * The model endpoint the agent depends on, when it has one (the openai: and anthropic: agents),
   * so that `bench` can check it accepts connections before any scenario runs.
   */
  readonly endpoint?: ModelEndpointInfo;
  /** Releases connections; optional. */
  close?(): Promise<void>;
}

/** Where a model-backed agent sends its requests. */
export interface ModelEndpointInfo {
  /** `openai`, `anthropic`. */
  provider: string;
  /** The base URL, fit for messages: a password in it is masked and the API key scrubbed out (host and port are intact). */
  url: string;
  /** The environment variable that sets `url` (`OPENAI_BASE_URL`), for the hint of a message. */
  urlEnv: string;
}

/**
 * A run lost to the harness: the model endpoint behind the agent failed (ModelEndpointError), so
 * the run says nothing about how the agent handles tool failures and is not scored.
 */
export interface ModelEndpointFailure {
  provider: string;
  /** A ModelFailureKind: `rejected`, `server`, `connection`, `timeout`, `rate_limit`. */
  kind: string;
  status?: number;
  /** What the endpoint said, scrubbed of the API key. */
  message: string;
  /** Requests made for the turn that failed, retries included. */
  attempts: number;
}

// ---------------------------------------------------------------------------------------------
// Scenarios (YAML files)
// ---------------------------------------------------------------------------------------------

/** Seed 000's five dimensions. */
export type Dimension = 'identification' | 'recovery' | 'loop_avoidance' | 'semantic_verification' | 'idempotency_safety';
export const DIMENSIONS: readonly Dimension[] = ['identification', 'recovery', 'loop_avoidance', 'semantic_verification', 'idempotency_safety'];

/** Seed 000 section 4.2: the four case kinds. */
export type ScenarioKind = 'single_step' | 'cascade' | 'semantic' | 'mixed';

/** Conditions on the catalog state after the run, all of which must hold. */
export interface StateCheck {
  /** Which collection of the catalog snapshot: orders, messages, events, refunds, files. */
  collection: 'orders' | 'messages' | 'events' | 'refunds' | 'files';
  /** Only items created during the run (not seeded ones) whose fields equal these. */
  where?: Record<string, unknown>;
  /** Exact count of such items. */
  count?: number;
  min?: number;
  max?: number;
}

export interface ScenarioOracle {
  /** Statuses the run may end with to pass. */
  status: Array<AgentOutcome['status']>;
  /** Every string must appear in the answer (case-insensitive). */
  answer_contains?: string[];
  /** None may appear (e.g. the drifted, wrong value). */
  answer_excludes?: string[];
  state?: StateCheck[];
  /** The diagnosis that counts as identifying the injected fault. */
  diagnosis?: { tool: string; category: FailureCategory | 'semantic' };
}

export interface Scenario {
  /** File-level id, e.g. `orders/commit-then-drop-01`. Never shown to agents. */
  id: string;
  title: string;
  language: 'en' | 'zh';
  kind: ScenarioKind;
  /** Seed 001 category of the main injected fault, and seed 000 subtype. */
  taxonomy: { category: FailureCategory | 'semantic'; subtype: string };
  /** The dimensions this scenario scores. */
  dimensions: Dimension[];
  /** Whether the task can be completed despite the faults (recovery is scored only then). */
  recoverable: boolean;
  instruction: string;
  /** Virtual now, ISO-8601. Default: the catalog's default now. */
  now?: string;
  /** Catalog tool names offered to the agent. */
  tools: string[];
  /** Catalog seed. Default 1. */
  seed?: number;
  faults: FaultRule[];
  oracle: ScenarioOracle;
  /** Budget: calls the agent may make (default 30) and virtual time (default 10 minutes). */
  budget?: { calls?: number; virtual_ms?: number };
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/** One call the agent made, with the ground truth the scorer reads (none of it shown to the agent). */
export interface CallTrace {
  tool: string;
  args: unknown;
  ok: boolean;
  code?: string;
  /** The injected fault kind, if any. */
  fault?: string;
  /** When the call was made, virtual ms after the run started. */
  virtualMs: number;
  /** When its answer came back, virtual ms after the run started. */
  endMs?: number;
  /** For a failed call: the runtime's classification of the error. */
  category?: FailureCategory;
  /**
   * The failure classes this call met: the error's, and those of the fault that hit it (see
   * fault-effects.ts). A diagnosis counts only when it names one of them for a tool it called.
   * Empty or absent when the call met no failure.
   */
  met?: Array<FailureCategory | 'semantic'>;
  /** It answered 200 with content the fault plan changed (partial, stale, another entity). */
  wrongResult?: true;
  /** It failed in a way after which the request may have taken effect (a timeout, a reset, a 500/502/504). */
  ambiguous?: true;
  /** The wait its failure asked for (Retry-After), ms. */
  retryAfterMs?: number;
}

/** One scenario run by one agent. */
export interface ScenarioResult {
  scenarioId: string;
  agent: string;
  repeat: number;
  outcome: AgentOutcome | { status: 'error'; answer: string; diagnoses: Diagnosis[] };
  /** Per dimension this scenario scores: passed or not. */
  scores: Partial<Record<Dimension, boolean>>;
  oraclePassed: boolean;
  calls: CallTrace[];
  /** Identical failing calls in a row, at most. */
  maxIdenticalFailures: number;
  duplicateSideEffects: number;
  /** Waits that honored Retry-After / waits that were due. */
  retryAfter: { honored: number; due: number };
  virtualMs: number;
  state: CatalogSnapshot;
  /** The trace every call of this run was recorded under (added by the runner; absent in hand-built results). */
  traceId?: string;
  feedback?: FeedbackMode;
  /** Failed attempts the runtime handled before the agent saw a result (assisted mode; 0 in raw). */
  absorbedFailures?: number;
  /** Why the run was cut short, when the agent ran out of budget. */
  budgetExhausted?: 'calls' | 'virtual_ms';
  /** Entities created by tool calls during the run (orders, messages, events, refunds): the denominator of the duplicate-execution rate. */
  writes?: number;
  /** The oracle conditions the run did not meet, one line each. */
  oracleFailures?: string[];
  /** Why each measure it failed failed, one line each (see run-verdict.ts). */
  reasons?: Partial<Record<Dimension | 'retry_after_compliance', string>>;
  /** Set when the run called a tool again after it asked to wait: whether every such call waited out the Retry-After. */
  retryAfterCompliant?: boolean;
  /** Calls whose answer could not have differed from one the agent already had (see run-verdict.ts). */
  needlessCalls?: number;
  /** The run's diagnoses against the failures it met. */
  diagnosisAudit?: { correct: number; invented: number; miscategorised: number };
  /** Set when the agent threw (its error's first line) or returned something that is not an AgentOutcome: a bug in the agent. */
  agentError?: string;
  /** Set when the run was lost to the model endpoint (outcome `error`, `scores` empty): not scored against the agent. */
  modelEndpointFailure?: ModelEndpointFailure;
}

export interface DimensionScore {
  rate: number;
  n: number;
  ci95: [number, number];
}

/** The `--json` shape per agent (issue 5). */
export interface AgentReport {
  run_id: string;
  agent: string;
  scenarios: number;
  dimensions: Record<Dimension, DimensionScore>;
  /** Runs that waited out every Retry-After, of those that called again after one. */
  retry_after_compliance: number;
  /** Needless calls (identical re-sends that could not be answered otherwise), of all calls. */
  needless_call_rate: number;
  /** Diagnoses of a failure that did not happen. */
  invented_diagnoses: number;
  score: number;
}
