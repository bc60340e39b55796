/**
 * Redaction, the facade (DESIGN.md, "Redaction"): `createRedactor` puts together the value rules,
 * the key names, the text and object redactors and the scrub pass of the `redact-*.ts` modules.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';
import { collectInto } from './redact-found.js';
import { DEFAULT_MAX_DEPTH } from './redact-json.js';
import { KeyNames } from './redact-key-names.js';
import { KeyValueText } from './redact-key-values.js';
import { scrubValue, spellingsOf } from './redact-scrub.js';
import { TextRedactor } from './redact-text.js';
import { ValueRules } from './redact-value-rules.js';
import { UNREADABLE, ancestorDepth, unwindAncestors } from './redact-walker.js';
import type { RedactionRule } from './redact-rules.js';

export { BUILTIN_RULES, REDACTED, type RedactionRule } from './redact-rules.js';

/** Options for {@link createRedactor}. */
export interface RedactOptions {
  /** Default true. False makes every method return its input untouched. */
  enabled?: boolean;
  /**
   * Extra secret key names. Strings match the whole key case-insensitively after removing `-`,
   * `_` and spaces (`'x-tenant-key'` matches `X_Tenant_Key` and `xTenantKey`); RegExps are tested
   * against the raw key, case-insensitively. RegExp keys make every string holding a `:` or `=` go
   * through key scanning, which costs more on large outputs.
   */
  keys?: readonly (string | RegExp)[];
  /** Key names never treated as secret (compared like string `keys`). Value rules still apply. */
  allowKeys?: readonly string[];
  /** Extra value rules, applied after the built-ins, to strings of any length. */
  rules?: readonly RedactionRule[];
  /** Default 32. Objects nested deeper are replaced by `[TRUNCATED_DEPTH]`. */
  maxDepth?: number;
}

/** Removes secrets from values, text and whole records. Never throws and never mutates input. */
export interface Redactor {
  /**
   * Deep-redacts objects, arrays and strings (including JSON held in strings). Returns the same
   * reference when nothing needed changing. Values JSON cannot hold are converted: Dates to ISO
   * strings, binary to `[BINARY n bytes]`, Maps and Sets to objects and arrays, BigInts to strings,
   * functions to `[FUNCTION]`, cycles to `[CIRCULAR]`; so the result is typed `T` for convenience.
   * @example redactor.value({ user: 'ann', password: 'hunter2' }) // { user: 'ann', password: '[REDACTED]' }
   */
  value<T>(value: T, found?: FoundSecrets): T;
  /**
   * Redacts free text (messages, stacks, raw output): value rules plus `key=value` pairs. When the
   * whole string is JSON and something in it is secret, it is redacted value by value and
   * re-serialized, so it stays valid JSON; text that does not parse (truncated) is redacted in place.
   * @example redactor.text('Authorization: Bearer 9f8e7d6c5b4a39281706') // 'Authorization: Bearer [REDACTED]'
   */
  text(value: string, found?: FoundSecrets): string;
  /**
   * Redacts every text field of a record: input_params, raw_output, error_message, error_stack,
   * context_snapshot, feedback, fault.params, fallback.reason; then scrubs each secret found in one
   * of them from all of them (see {@link Redactor.scrubRecord}). Returns the same record when
   * nothing changed, otherwise a shallow copy with the changed fields.
   */
  record(record: ToolExecutionRecord): ToolExecutionRecord;
  /**
   * Replaces every occurrence of the found secrets (as written, JSON-escaped or percent-encoded)
   * in the strings inside `value` (object keys and non-strings stay). A secret is replaced only
   * where it stands alone, not inside a longer word. The same reference when nothing changed.
   * @example
   * const found: FoundSecrets = [];
   * const args = redactor.value({ password: 'hunter2!' }, found);
   * redactor.scrub('login failed for password hunter2!', found) // 'login failed for password [REDACTED]'
   */
  scrub<T>(value: T, found: FoundSecrets): T;
  /**
   * {@link Redactor.scrub} over a record whose fields are already redacted: every free-text field
   * (input_params, raw_output, error_message, error_stack, context_snapshot, feedback, fault.params,
   * fallback.reason). The same record when `found` is empty or nothing changed.
   */
  scrubRecord(record: ToolExecutionRecord, found: FoundSecrets): ToolExecutionRecord;
  /**
   * Whether a value under this key name is replaced whole (built-in and custom `keys`, minus
   * `allowKeys`), for callers that hold a value apart from its key, such as a validation issue's
   * path and the value it quotes.
   * @example redactor.isSecretKey('X-Api-Key') // true
   */
  isSecretKey(key: string): boolean;
}

/**
 * The secret values redaction found while it redacted one record's fields (a value under a secret
 * key, the hidden part of a token), for {@link Redactor.scrub} to remove from its other fields.
 * Pass the same array to each call for one record. Only values of six characters or more are kept.
 */
export type FoundSecrets = string[];

const PASSTHROUGH: Redactor = {
  value: <T>(value: T): T => value,
  text: (value: string): string => value,
  record: (record: ToolExecutionRecord): ToolExecutionRecord => record,
  scrub: <T>(value: T): T => value,
  scrubRecord: (record: ToolExecutionRecord): ToolExecutionRecord => record,
  isSecretKey: (): boolean => false,
};

/**
 * Builds a redactor. Construction does the expensive part (compiling rules, key tables), so make
 * one per runtime and reuse it.
 * @example
 * const redactor = createRedactor({ keys: ['tenant_key'], rules: [{ id: 'order', pattern: /ORD-\d{8}/ }] });
 * redactor.record(record);
 */
export function createRedactor(options: RedactOptions = {}): Redactor {
  if (options.enabled === false) return PASSTHROUGH;

  const rules = new ValueRules(options.rules ?? []);
  const keys = new KeyNames(options.keys ?? [], options.allowKeys ?? [], rules);
  const strings = new TextRedactor(keys, rules, new KeyValueText(keys.isSecret), options.maxDepth ?? DEFAULT_MAX_DEPTH);
  const walker = strings.walker;

  function value<T>(input: T, into?: FoundSecrets): T {
    const mark = ancestorDepth();
    const outer = collectInto(into);
    try {
      return walker.walk(input, 0) as T;
    } catch {
      return UNREADABLE as T;
    } finally {
      collectInto(outer);
      unwindAncestors(mark);
    }
  }

  function text(input: string, into?: FoundSecrets): string {
    if (typeof input !== 'string') return value(input, into);
    const mark = ancestorDepth();
    const outer = collectInto(into);
    try {
      return strings.redactString(input, 0);
    } catch {
      return UNREADABLE;
    } finally {
      collectInto(outer);
      unwindAncestors(mark);
    }
  }

  function textOrValue<T>(input: T, into: FoundSecrets): T {
    if (input === null || input === undefined) return input;
    return typeof input === 'string' ? (text(input, into) as T) : value(input, into);
  }

  function scrub<T>(input: T, into: FoundSecrets): T {
    if (into.length === 0) return input;
    try {
      return scrubValue(input, spellingsOf(into), 0) as T;
    } catch {
      return UNREADABLE as T;
    }
  }

  function record(r: ToolExecutionRecord): ToolExecutionRecord {
    if (typeof r !== 'object' || r === null) return value(r);
    const into: FoundSecrets = [];
    const redacted = mapRecordFields(r, (v) => textOrValue(v, into));
    return into.length === 0 ? redacted : scrubRecord(redacted, into);
  }

  function scrubRecord(r: ToolExecutionRecord, into: FoundSecrets): ToolExecutionRecord {
    if (into.length === 0 || typeof r !== 'object' || r === null) return r;
    const spellings = spellingsOf(into);
    try {
      return mapRecordFields(r, (v) => scrubValue(v, spellings, 0) as typeof v);
    } catch {
      return r;
    }
  }

  return { value, text, record, scrub, scrubRecord, isSecretKey: keys.isSecret };
}

/** `r` with `map` applied to each free-text field; the same record when nothing changed. */
function mapRecordFields(r: ToolExecutionRecord, map: <T>(v: T) => T): ToolExecutionRecord {
    const input = map(r.input_params);
    const rawOutput = map(r.raw_output);
    const errorMessage = map(r.error_message);
    const errorStack = map(r.error_stack);
    const context = map(r.context_snapshot);
    let feedback = r.feedback;
    if (feedback !== null && typeof feedback === 'object') {
      const hint = map(feedback.hint);
      const last = feedback.last_recovery === undefined ? undefined : map(feedback.last_recovery);
      if (hint !== feedback.hint || last !== feedback.last_recovery) {
        feedback = { ...feedback, hint };
        if (last !== undefined) feedback.last_recovery = last;
      }
    }
    let fault = r.fault;
    if (fault !== null && typeof fault === 'object' && fault.params !== undefined) {
      const params = map(fault.params);
      if (params !== fault.params) fault = { ...fault, params };
    }
    let fallback = r.fallback;
    if (fallback !== null && typeof fallback === 'object') {
      const reason = map(fallback.reason);
      if (reason !== fallback.reason) fallback = { ...fallback, reason };
    }
    if (
      input === r.input_params &&
      rawOutput === r.raw_output &&
      errorMessage === r.error_message &&
      errorStack === r.error_stack &&
      context === r.context_snapshot &&
      feedback === r.feedback &&
      fault === r.fault &&
      fallback === r.fallback
    ) {
      return r;
    }
    return {
      ...r,
      input_params: input,
      raw_output: rawOutput,
      error_message: errorMessage,
      error_stack: errorStack,
      context_snapshot: context,
      feedback,
      fault,
      fallback,
    };
}

/** A redactor with the built-in rules and no extras. */
export const defaultRedactor: Redactor = createRedactor();
