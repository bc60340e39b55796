/**
 * The fault plan as written in a file (YAML or JSON) or in code: one model for every transport
 * (in-process, HTTP proxy, MCP proxy). Validation lives in plan-validate.ts; behaviour in plan.ts.
 */

/** The Retry-After, in seconds, of an injected 429 that names none (plan rules and X-Inject-Error alike). */
export const DEFAULT_RETRY_AFTER_S = 2;

/**
 * The longest wait a plan may ask for (one day). Timers cannot go beyond about 24.8 days (node
 * fires a longer one at once), and no client waits for a day; a plan that means "never" says hang.
 */
export const MAX_FAULT_DELAY_MS = 86_400_000;

/** Every fault a plan can inject, in the order the docs list them. */
export const FAULT_KINDS = [
  'timeout',
  'hang',
  'latency',
  'http_status',
  'connection_refused',
  'connection_reset',
  'dns_failure',
  'malformed_json',
  'partial',
  'empty',
  'schema_drift',
  'semantic_drift',
  'stale',
  'auth_expiry',
  'rate_limit_burst',
  'commit_then_drop',
  'lost_write',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** The statuses `http_status` can answer with. */
export const HTTP_FAULT_STATUSES = [400, 401, 403, 404, 409, 429, 500, 502, 503, 504] as const;
export type HttpFaultStatus = (typeof HTTP_FAULT_STATUSES)[number];

/**
 * When a matching call gets the fault. Counts are 1-based and per tool: the nth call of that
 * tool that matched the rule's `tool` and `when` (every attempt counts, retries included, since
 * each one reaches the tool).
 */
export type FaultTrigger =
  | 'always'
  | 'first_call_only'
  /** On exactly these calls. */
  | { nth: number[] }
  /**
   * On exactly one of these calls, picked by the plan's seed (per rule and tool): which of the
   * first calls a fault meets varies from seed to seed, as it does from run to run.
   */
  | { one_of: number[] }
  /** On every Nth call (N, 2N, ...). */
  | { every: number }
  /** On every call after the Nth. */
  | { after: number }
  /** With this probability, drawn from a PRNG seeded by the plan's seed, the rule and the tool. */
  | { probability: number }
  /**
   * While the plan's clock is in [from, until): ISO-8601 times (a date-time with its zone; a date
   * alone is midnight UTC), or milliseconds after the plan started. With `jitter_ms` (needs
   * `until`), the window ends up to that much later, drawn once per rule from the plan's seed: an
   * outage lasts longer in some runs than in others.
   */
  | { window: FaultWindow };

export interface FaultWindow {
  from?: string | number;
  until?: string | number;
  jitter_ms?: number;
}

export interface TimeoutParams {
  /**
   * The tool's own client gives up after this long (a TimeoutError, as `AbortSignal.timeout`
   * raises). Without it the call never answers and the runtime's timeout fires.
   */
  delay_ms?: number;
  /** The same in seconds (the unit seed 000's fault_config uses). */
  delay_seconds?: number;
}

export type LatencyParams =
  | { ms: number }
  | { distribution: 'uniform'; min_ms: number; max_ms: number }
  | { distribution: 'normal'; mean_ms: number; stddev_ms: number; min_ms?: number; max_ms?: number }
  | { distribution: 'exponential'; mean_ms: number; min_ms?: number; max_ms?: number };

export interface HttpStatusParams {
  status: HttpFaultStatus;
  /** The response body. Default: `{ error: { status, message } }`. */
  body?: unknown;
  /**
   * Retry-After: delay in seconds, or an HTTP-date. A 429 without it says
   * {@link DEFAULT_RETRY_AFTER_S} seconds, as rate-limited APIs do; `null` sends none (an API that
   * gives no hint). Other statuses send one only when it is set.
   */
  retry_after?: number | string | null;
  headers?: Record<string, string>;
  /** The error message the client reports. Default: `HTTP 503 Service Unavailable`. */
  message?: string;
  /** The response arrives after this long. */
  delay_ms?: number;
  /** The upstream processes the request before the error is returned (the ambiguous 500/502/504 case). */
  commit?: boolean;
}

export interface ConnectionParams {
  /** The failure happens after this long. */
  delay_ms?: number;
}

export interface ConnectionResetParams extends ConnectionParams {
  /** The upstream processes the request before the connection drops. Default false. */
  commit?: boolean;
}

export interface MalformedJsonParams {
  /** The text served instead of the output. Default: the output's JSON cut off half way. Must not parse as JSON. */
  text?: string;
}

export interface PartialParams {
  /** Fields (dotted paths; arrays on the way apply to each element) to remove. */
  drop_fields?: string[];
  /** Fraction (0-1] of the items to remove from the end of the output (if it is an array) or of each top-level array. */
  drop_fraction?: number;
  /** Where the note goes on object outputs. Default `warning`. */
  note_field?: string;
  /** Default: says what is missing. */
  note?: string;
  /**
   * No note at all: the answer looks complete, and only its own counts (a `total` beside the
   * list, a `records` count, totals the rows do not add up to) tell that items are missing, as
   * with a page a backend cut short without saying so.
   */
  silent?: boolean;
}

export type RetypeTarget = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';

export interface SchemaDriftParams {
  /** `{ from: to }` field renames (dotted paths; the new name stays in the same object). */
  rename?: Record<string, string>;
  /** `{ field: type }` conversions. */
  retype?: Record<string, RetypeTarget>;
}

export interface SemanticDriftParams {
  /** Moves every ISO date and date-time by this many days. */
  shift_date?: number;
  /** Replaces one field's value with another entity's: `value`, or the first of `values` that differs. */
  other_entity?: { field: string; value?: unknown; values?: unknown[] };
  /** Moves ISO date-times by this many hours, keeping their offset label (a time reported in the wrong zone). */
  timezone_shift?: number;
  /** Limits shift_date and timezone_shift to these fields (dotted paths); default every string that is a timestamp. */
  fields?: string[];
}

export interface StaleParams {
  /**
   * How old the served data is: the newest output seen for the same tool and arguments at least
   * this long ago is replayed; with none, the fresh output is served with its timestamps moved
   * back by this much.
   */
  age_ms: number;
  /** Replay the output seen this many calls ago (same tool and arguments) instead, when there is one. */
  age_calls?: number;
  /** Timestamp fields moved back when nothing old enough was seen; default every ISO date-time. */
  fields?: string[];
}

export interface AuthExpiryParams {
  /** Calls that still succeed; every later one gets a 401 saying the credential expired. */
  after_calls: number;
}

export interface RateLimitBurstParams {
  /** Calls allowed in a burst (the bucket starts full). */
  capacity: number;
  /** Tokens added per second. */
  refill_per_sec: number;
}

type NoParams = Record<string, never>;

export interface FaultParamsByKind {
  timeout: TimeoutParams;
  hang: NoParams;
  latency: LatencyParams;
  http_status: HttpStatusParams;
  connection_refused: ConnectionParams;
  connection_reset: ConnectionResetParams;
  dns_failure: ConnectionParams;
  malformed_json: MalformedJsonParams;
  partial: PartialParams;
  empty: NoParams;
  schema_drift: SchemaDriftParams;
  semantic_drift: SemanticDriftParams;
  stale: StaleParams;
  auth_expiry: AuthExpiryParams;
  rate_limit_burst: RateLimitBurstParams;
  commit_then_drop: NoParams;
  /**
   * The call answers as it would (a 200 with the response the write would give) and changes
   * nothing: it goes to the tool as a dry run (see faults/dry-run.ts), as a write lost in a
   * failover or acknowledged and then dropped by the service would look to the client.
   */
  lost_write: NoParams;
}

export interface FaultRuleBase {
  /** Names the rule in records and state; default `rule-<index>`. Counters follow it across `update()`. */
  id?: string;
  /** A tool name, or a glob: `create_*`, `*`. */
  tool: string;
  /** Only calls whose arguments have these top-level values (compared as JSON). */
  when?: Record<string, unknown>;
  /** Default `always`. */
  trigger?: FaultTrigger;
  /** Stop injecting after this many faults (over all tools the rule matches). */
  max_injections?: number;
}

/** Kinds that work without params; the rest need at least one setting. */
type OptionalParamsKind = 'timeout' | 'hang' | 'connection_refused' | 'connection_reset' | 'dns_failure' | 'malformed_json' | 'empty' | 'commit_then_drop' | 'lost_write';

type ParamsField<K extends FaultKind> = K extends OptionalParamsKind ? { params?: FaultParamsByKind[K] } : { params: FaultParamsByKind[K] };

/** One rule: which calls, when, and what goes wrong. */
export type FaultRule = { [K in FaultKind]: FaultRuleBase & { fault: K } & ParamsField<K> }[FaultKind];

/** A fault plan: rules are tried in order and the first whose trigger fires injects its fault. */
export interface FaultPlanSpec {
  version: 1;
  /** Seeds probability triggers and latency distributions. */
  seed?: number;
  rules: FaultRule[];
}
