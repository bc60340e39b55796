/**
 * Post-condition checks: whether a successful answer answers the request (seed 000's semantic
 * errors: a 200 for another day, another city, an old copy). A tool declares them without code,
 * as annotations in its output schema, or as code, with `verify(args, output, ctx)`:
 *
 * - `"x-echoes": "city"` on an output field: it must equal the request's `city` (strings compared
 *   trimmed and case-insensitively; a date equals a timestamp on that date).
 * - `"x-within": { "from": "start_date", "to": "end_date" }` on a timestamp field: it must lie in
 *   the requested window (a date-only `to` includes its whole day).
 * - `"x-max-age-ms": 900000` on a timestamp field: the result must be no older than that.
 * - `"x-non-empty-when": ["order_id"]` on an array (or an array output): empty is suspect when the
 *   request set any of those fields (a filter that narrow names something that exists).
 *
 * Fields inside arrays are reached through `items` (`orders[].created_at`). A field absent from
 * the request or the output is not checked. A failed check is a `result_parse` failure of
 * category `semantic` whose message names the field and both values.
 */
import type { Clock } from '../core/clock.js';
import { rejection, type Classification } from './classify.js';
import type { JsonSchema } from './define-tool.js';

/** One way an answer misses its request, as `verify` reports it. */
export interface PostConditionIssue {
  /** Default `result_mismatch`; also `out_of_window`, `stale_result`, `suspicious_empty`, or a type of the tool's own. */
  type?: string;
  /** The output field at fault (`location.city`, `orders[2].date`). */
  field?: string;
  /** What the request asked for. */
  expected?: unknown;
  /** What the answer says. */
  actual?: unknown;
  /** Said to the agent; defaults to a sentence built from the three fields above. */
  message?: string;
}

export interface VerifyContext {
  readonly toolName: string;
  /** When the answer arrived, on the runtime's clock. */
  readonly now: number;
  readonly clock: Clock;
}

/** Nothing (or `true`) when the answer is right; the issues when not. Synchronous: it runs on every success. */
export type Verify<Args = any, Output = unknown> = (
  args: Args,
  output: Output,
  ctx: VerifyContext,
) => PostConditionIssue | readonly PostConditionIssue[] | boolean | null | undefined | void;

type Step = { kind: 'key'; key: string } | { kind: 'items' };

interface FieldCheck {
  path: Step[];
  echoes?: string;
  within?: { from?: string; to?: string };
  maxAgeMs?: number;
  nonEmptyWhen?: string[];
}

/** The compiled checks of one tool; undefined when it declares none. */
export interface PostConditions {
  /** The failed check as a classification, or undefined when the answer passes. */
  check(args: unknown, output: unknown, ctx: VerifyContext): Classification | undefined;
}

const MAX_DEPTH = 32;
const SHOWN_ISSUES = 3;

function collect(schema: unknown, path: Step[], out: FieldCheck[], depth: number): void {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return;
  const s = schema as JsonSchema;
  const check: FieldCheck = { path };
  if (typeof s['x-echoes'] === 'string') check.echoes = s['x-echoes'];
  const within = s['x-within'] as { from?: unknown; to?: unknown } | undefined;
  if (typeof within === 'object' && within !== null) {
    check.within = {};
    if (typeof within.from === 'string') check.within.from = within.from;
    if (typeof within.to === 'string') check.within.to = within.to;
  }
  if (typeof s['x-max-age-ms'] === 'number' && s['x-max-age-ms'] > 0) check.maxAgeMs = s['x-max-age-ms'];
  const narrow = s['x-non-empty-when'];
  if (Array.isArray(narrow) && narrow.every((f) => typeof f === 'string') && narrow.length > 0) check.nonEmptyWhen = narrow as string[];
  if (check.echoes !== undefined || check.within !== undefined || check.maxAgeMs !== undefined || check.nonEmptyWhen !== undefined) out.push(check);
  const properties = s['properties'];
  if (typeof properties === 'object' && properties !== null) {
    for (const [key, child] of Object.entries(properties)) collect(child, [...path, { kind: 'key', key }], out, depth + 1);
  }
  if (typeof s['items'] === 'object' && s['items'] !== null && !Array.isArray(s['items'])) collect(s['items'], [...path, { kind: 'items' }], out, depth + 1);
}

/** The values at a path, each with the concrete name of its field (`orders[2].date`). */
function valuesAt(value: unknown, path: readonly Step[]): Array<{ field: string; value: unknown }> {
  let current: Array<{ field: string; value: unknown }> = [{ field: '', value }];
  for (const step of path) {
    const next: Array<{ field: string; value: unknown }> = [];
    for (const { field, value: v } of current) {
      if (step.kind === 'key') {
        if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, step.key)) {
          next.push({ field: field === '' ? step.key : `${field}.${step.key}`, value: (v as Record<string, unknown>)[step.key] });
        }
      } else if (Array.isArray(v)) {
        v.forEach((item, i) => next.push({ field: `${field}[${i}]`, value: item }));
      }
    }
    current = next;
  }
  return current;
}

/** The request's field (a dotted path), or undefined when it was not sent. */
function requestField(args: unknown, name: string): unknown {
  let v: unknown = args;
  for (const key of name.split('.')) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function sameValue(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'string' && typeof expected === 'string') {
    const a = actual.trim().toLowerCase();
    const e = expected.trim().toLowerCase();
    if (a === e) return true;
    // A date asked for, a timestamp on that date answered (or the other way round).
    if (DATE_ONLY.test(e) && a.startsWith(`${e}t`)) return true;
    return DATE_ONLY.test(a) && e.startsWith(`${a}t`);
  }
  if (typeof actual === 'number' && typeof expected === 'string') return String(actual) === expected.trim();
  if (typeof actual === 'string' && typeof expected === 'number') return actual.trim() === String(expected);
  return Object.is(actual, expected) || JSON.stringify(actual) === JSON.stringify(expected);
}

/** Epoch ms of a timestamp field: an ISO string or epoch milliseconds; undefined when it is neither. */
function timeOf(value: unknown, endOfDay = false): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) return undefined;
  return endOfDay && DATE_ONLY.test(value.trim()) ? t + 86_400_000 - 1 : t;
}

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

function ago(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

function issuesOf(checks: readonly FieldCheck[], args: unknown, output: unknown, now: number): PostConditionIssue[] {
  const issues: PostConditionIssue[] = [];
  for (const check of checks) {
    const found = valuesAt(output, check.path);
    if (check.nonEmptyWhen !== undefined) {
      const narrowedBy = check.nonEmptyWhen.find((f) => requestField(args, f) !== undefined);
      if (narrowedBy !== undefined) {
        for (const { field, value } of found) {
          if (!Array.isArray(value) || value.length !== 0) continue;
          const name = field === '' ? 'the result' : `response field "${field}"`;
          issues.push({
            type: 'suspicious_empty',
            field: field === '' ? '(result)' : field,
            expected: requestField(args, narrowedBy),
            actual: value,
            message: `${name} is empty although the request narrowed it by ${narrowedBy} = ${show(requestField(args, narrowedBy))}`,
          });
        }
      }
    }
    for (const { field, value } of found) {
      if (check.echoes !== undefined) {
        const expected = requestField(args, check.echoes);
        if (expected !== undefined && value !== undefined && value !== null && !sameValue(value, expected)) {
          issues.push({
            type: 'result_mismatch',
            field,
            expected,
            actual: value,
            message: `response field "${field}" is ${show(value)} but the request's "${check.echoes}" was ${show(expected)}`,
          });
        }
      }
      const t = check.within !== undefined || check.maxAgeMs !== undefined ? timeOf(value) : undefined;
      if (t === undefined) continue;
      if (check.within !== undefined) {
        const fromValue = check.within.from === undefined ? undefined : requestField(args, check.within.from);
        const toValue = check.within.to === undefined ? undefined : requestField(args, check.within.to);
        const from = timeOf(fromValue);
        const to = timeOf(toValue, true);
        if ((from !== undefined && t < from) || (to !== undefined && t > to)) {
          const window = `${check.within.from ?? '(open)'} = ${show(fromValue ?? null)} .. ${check.within.to ?? '(open)'} = ${show(toValue ?? null)}`;
          issues.push({
            type: 'out_of_window',
            field,
            expected: { from: fromValue ?? null, to: toValue ?? null },
            actual: value,
            message: `response field "${field}" is ${show(value)}, outside the requested window ${window}`,
          });
        }
      }
      if (check.maxAgeMs !== undefined && now - t > check.maxAgeMs) {
        issues.push({
          type: 'stale_result',
          field,
          expected: `at most ${ago(check.maxAgeMs)} old`,
          actual: value,
          message: `response field "${field}" is ${show(value)}, ${ago(now - t)} old; the tool declares results fresh for at most ${ago(check.maxAgeMs)}`,
        });
      }
    }
  }
  return issues;
}

function issueMessage(issue: PostConditionIssue): string {
  if (issue.message !== undefined) return issue.message;
  const field = issue.field === undefined ? 'the result' : `response field "${issue.field}"`;
  if ('actual' in issue || 'expected' in issue) return `${field} is ${show(issue.actual)} but the request asked for ${show(issue.expected)}`;
  return `${field} does not match the request`;
}

function toClassification(issues: readonly PostConditionIssue[], output: unknown): Classification {
  const first = issues[0]!;
  const type = first.type ?? 'result_mismatch';
  const shown = issues.slice(0, SHOWN_ISSUES).map(issueMessage);
  const more = issues.length > SHOWN_ISSUES ? ` (and ${issues.length - SHOWN_ISSUES} more)` : '';
  const c = rejection('result_parse', 'semantic', type, type.toUpperCase(), `${shown.join('; ')}${more}`);
  c.body = output;
  return c;
}

function verifyIssues(verify: Verify, args: unknown, output: unknown, ctx: VerifyContext): PostConditionIssue[] {
  const answer = verify(args, output, ctx);
  if (answer === undefined || answer === null || answer === true) return [];
  if (answer === false) return [{ message: `${ctx.toolName}'s verify rejected the result` }];
  return Array.isArray(answer) ? [...(answer as readonly PostConditionIssue[])] : [answer as PostConditionIssue];
}

/**
 * The checks a tool declares: its output schema's annotations, then its `verify`. Undefined when
 * there are none, so a tool without checks costs nothing per call.
 */
export function compilePostConditions(outputSchema: JsonSchema | undefined, verify: Verify | undefined): PostConditions | undefined {
  const checks: FieldCheck[] = [];
  if (outputSchema !== undefined) collect(outputSchema, [], checks, 0);
  if (checks.length === 0 && verify === undefined) return undefined;
  return {
    check(args, output, ctx) {
      const issues = checks.length === 0 ? [] : issuesOf(checks, args, output, ctx.now);
      if (issues.length === 0 && verify !== undefined) {
        try {
          issues.push(...verifyIssues(verify, args, output, ctx));
        } catch (error) {
          const c = rejection('result_parse', 'system', 'runtime_error', 'VERIFY_FAILED', `${ctx.toolName}'s verify threw: ${error instanceof Error ? error.message : String(error)}`);
          c.stack = error instanceof Error ? error.stack : undefined;
          c.body = output;
          return c;
        }
      }
      return issues.length === 0 ? undefined : toClassification(issues, output);
    },
  };
}
