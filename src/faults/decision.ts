/**
 * What a fault does, independent of where it is applied. A plan turns a call into a
 * FaultDecision; the in-process injector turns it into thrown errors and rewritten outputs, the
 * HTTP and MCP proxies into statuses, dropped sockets and rewritten bodies.
 */
import { STATUS_CODES } from 'node:http';
import type { InjectedFault } from '../core/record-types.js';
import { sampleLatency } from './latency.js';
import type { OutputHistory } from './output-history.js';
import { agedOutput, emptyOutput, malformedText, partialOutput, schemaDriftOutput, semanticDriftOutput } from './output-rewrites.js';
import { DEFAULT_RETRY_AFTER_S, type FaultKind, type FaultParamsByKind, type FaultRule } from './plan-spec.js';

/** A call as a transport sees it. */
export interface FaultCall {
  toolName: string;
  args: unknown;
  /** Epoch ms on the plan's clock; default `clock.now()`. */
  now?: number;
  /** Recorded in the fault's ground truth: `inprocess` (the default), `http`, `mcp`. */
  transport?: string;
}

/** The errno-style codes connection faults produce. */
export type DropCode = 'ECONNREFUSED' | 'ECONNRESET' | 'ENOTFOUND';

/** What the caller gets instead of (or on top of) the real answer. */
export type FaultEffect =
  /** The real answer, only late (see `delayMs`). */
  | { type: 'pass' }
  /**
   * An HTTP error response. `authType` marks a 401 whose credential expired (the body and
   * `WWW-Authenticate` say so on the wire; in process it is an AuthError of that type).
   */
  | { type: 'respond'; status: number; headers: Record<string, string>; body: unknown; message: string; authType?: 'credential_expired' }
  /** The connection fails: refused, reset, or the host name does not resolve. */
  | { type: 'drop'; code: DropCode }
  /**
   * No answer. With `afterMs`, the client gives up then (a TimeoutError in process; a proxy
   * answers 504 like a gateway would); with null it never answers and the caller's own timeout fires.
   */
  | { type: 'timeout'; afterMs: number | null }
  /** A 200 whose body does not parse: `render` gets the real output (or raw body text) and returns the text to send. */
  | { type: 'malformed'; render: (output: unknown) => string }
  /** A 200 whose content is wrong: `rewrite` maps the real (parsed JSON) output to what is served. */
  | { type: 'rewrite'; rewrite: (output: unknown) => unknown }
  /** The call goes to the tool as a dry run (faults/dry-run.ts): its real answer, and no change. */
  | { type: 'dry_run' };

/** One fault for one call, for any transport. */
export interface FaultDecision {
  kind: FaultKind;
  ruleId: string;
  /** The rule's params plus what was resolved for this call (a sampled delay, a computed Retry-After, what stale served). */
  params: Record<string, unknown>;
  /** Ground truth for the record. */
  fault: InjectedFault;
  /** Wait this long before anything else happens. */
  delayMs: number;
  /** Whether the real tool (or upstream) is called, so its side effect happens, before the effect applies. */
  forward: boolean;
  effect: FaultEffect;
}

/**
 * Whether the decision acts on the tool's answer (a rewrite has nothing to rewrite when the tool
 * fails, nor does a dry run that failed as the real call would) or follows the tool's work (commit_then_drop, a `commit: true` status or drop, which
 * never come after a write that failed). Every transport passes the tool's own failure through
 * unchanged then, and records the decision as `fault_not_applied` instead of as `fault`.
 */
export function appliesOnlyOnSuccess(decision: Pick<FaultDecision, 'forward' | 'effect'>): boolean {
  const type = decision.effect.type;
  return type === 'rewrite' || type === 'malformed' || type === 'dry_run' || (decision.forward && type !== 'pass');
}

/** Per-call facts and plan state a fault kind may need. */
export interface ResolveContext {
  toolName: string;
  args: unknown;
  now: number;
  /** The rule's seeded stream for sampled values (latency), per tool. */
  random: () => number;
  /** Calls the rule matched so far, over all its tools, this one included (auth_expiry: one credential). */
  ruleCalls: number;
  /** Takes a token from the rule's bucket (rate_limit_burst): undefined when granted, else ms until the next token. */
  takeToken: () => number | undefined;
  history: OutputHistory;
  clockNow: () => number;
}

export interface ResolvedFault {
  delayMs: number;
  forward: boolean;
  effect: FaultEffect;
  applied?: Record<string, unknown>;
}

function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

type RespondEffect = Extract<FaultEffect, { type: 'respond' }>;

function errorResponse(status: number, headers: Record<string, string> = {}, body?: unknown, message?: string): RespondEffect {
  return {
    type: 'respond',
    status,
    headers: { ...JSON_HEADERS, ...lowerKeys(headers) },
    body: body === undefined ? { error: { status, message: reason(status) } } : body,
    message: message ?? `HTTP ${status} ${reason(status)}`,
  };
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

type Params<K extends FaultKind> = FaultParamsByKind[K];

/**
 * What `rule`'s fault does to this call, or undefined when the kind itself holds back: an
 * auth_expiry before its credential has expired, a rate_limit_burst while its bucket has tokens.
 */
export function resolveFault(rule: FaultRule, ctx: ResolveContext): ResolvedFault | undefined {
  switch (rule.fault) {
    case 'timeout': {
      const p: Params<'timeout'> = rule.params ?? {};
      const after = p.delay_ms ?? (p.delay_seconds === undefined ? undefined : p.delay_seconds * 1000);
      return { delayMs: 0, forward: false, effect: { type: 'timeout', afterMs: after ?? null } };
    }
    case 'hang':
      return { delayMs: 0, forward: false, effect: { type: 'timeout', afterMs: null } };
    case 'commit_then_drop':
      return { delayMs: 0, forward: true, effect: { type: 'timeout', afterMs: null } };
    case 'lost_write':
      // Not forwarded as a real call: the tool runs it dry, so nothing it does takes effect.
      return { delayMs: 0, forward: false, effect: { type: 'dry_run' } };
    case 'latency': {
      const delay = sampleLatency(rule.params, ctx.random);
      return { delayMs: delay, forward: true, effect: { type: 'pass' }, applied: { delay_ms: delay } };
    }
    case 'http_status': {
      const p = rule.params;
      const headers = lowerKeys(p.headers ?? {});
      // A 429 tells the client when to come back unless the rule says it does not (null).
      const defaulted = p.status === 429 && p.retry_after === undefined && headers['retry-after'] === undefined;
      const retryAfter = defaulted ? DEFAULT_RETRY_AFTER_S : p.retry_after;
      if (retryAfter !== undefined && retryAfter !== null) headers['retry-after'] = String(retryAfter);
      const resolved: ResolvedFault = { delayMs: p.delay_ms ?? 0, forward: p.commit ?? false, effect: errorResponse(p.status, headers, p.body, p.message) };
      if (defaulted) resolved.applied = { retry_after: DEFAULT_RETRY_AFTER_S };
      return resolved;
    }
    case 'connection_refused':
      return { delayMs: rule.params?.delay_ms ?? 0, forward: false, effect: { type: 'drop', code: 'ECONNREFUSED' } };
    case 'connection_reset':
      return { delayMs: rule.params?.delay_ms ?? 0, forward: rule.params?.commit ?? false, effect: { type: 'drop', code: 'ECONNRESET' } };
    case 'dns_failure':
      return { delayMs: rule.params?.delay_ms ?? 0, forward: false, effect: { type: 'drop', code: 'ENOTFOUND' } };
    case 'malformed_json': {
      const text = rule.params?.text;
      return { delayMs: 0, forward: true, effect: { type: 'malformed', render: (output) => text ?? malformedText(output) } };
    }
    case 'partial': {
      const p = rule.params;
      return { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: (output) => partialOutput(output, p) } };
    }
    case 'empty':
      return { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: emptyOutput } };
    case 'schema_drift': {
      const p = rule.params;
      return { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: (output) => schemaDriftOutput(output, p) } };
    }
    case 'semantic_drift': {
      const p = rule.params;
      return { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: (output) => semanticDriftOutput(output, p) } };
    }
    case 'stale':
      return resolveStale(rule.params, ctx);
    case 'auth_expiry': {
      if (ctx.ruleCalls <= rule.params.after_calls) return undefined;
      const description = 'The access token expired';
      const effect = errorResponse(
        401,
        { 'www-authenticate': `Bearer error="invalid_token", error_description="${description}"` },
        { error: 'invalid_token', error_description: description },
        `HTTP 401 Unauthorized: ${description.toLowerCase()}`,
      );
      return { delayMs: 0, forward: false, effect: { ...effect, authType: 'credential_expired' } };
    }
    case 'rate_limit_burst': {
      const waitMs = ctx.takeToken();
      if (waitMs === undefined) return undefined;
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      return { delayMs: 0, forward: false, effect: errorResponse(429, { 'retry-after': String(seconds) }), applied: { retry_after: seconds } };
    }
  }
}

function resolveStale(p: Params<'stale'>, ctx: ResolveContext): ResolvedFault {
  const query = p.age_calls === undefined ? { ageMs: p.age_ms } : { ageMs: p.age_ms, ageCalls: p.age_calls };
  const replay = ctx.history.find(ctx.toolName, ctx.args, query, ctx.now);
  const remember = (output: unknown) => ctx.history.record(ctx.toolName, ctx.args, output, ctx.clockNow());
  if (replay !== undefined) {
    return {
      delayMs: 0,
      forward: true,
      effect: {
        type: 'rewrite',
        rewrite: (output) => {
          remember(output);
          return replay.output;
        },
      },
      applied: { served: 'replay', replayed_age_ms: replay.ageMs },
    };
  }
  return {
    delayMs: 0,
    forward: true,
    effect: {
      type: 'rewrite',
      rewrite: (output) => {
        remember(output);
        return agedOutput(output, p.age_ms, p.fields);
      },
    },
    applied: { served: 'aged' },
  };
}
