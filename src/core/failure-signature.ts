/**
 * Failure signatures: one stable id per distinct failure shape, so that "order 123 not found" and
 * "order 456 not found" from the same tool, stage, type and error code count as one problem.
 */
import { createHash } from 'node:crypto';
import type { ToolExecutionRecord } from './record-types.js';
import type { FailureStage } from './taxonomy.js';

/** Longest normalized message kept; longer ones are cut so that signatures stay bounded. */
export const NORMALIZED_MESSAGE_MAX_LENGTH = 200;

// Order matters: URLs and emails contain numbers and hex runs, and quoted strings may contain
// anything, so the wider patterns are replaced before the narrower ones.
const URL_RE = /\b(?:https?|wss?|ftp|file|postgres(?:ql)?|redis|mongodb):\/\/[^\s"'<>]+/gi;
const EMAIL_RE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g;
const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
// A quote only opens a string after a non-word character, so apostrophes ("can't", "user's") do not.
const QUOTED_RE = /(?<!\w)(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`)(?!\w)/g;
const HEX_PREFIXED_RE = /\b0x[0-9a-f]+\b/gi;
// A bare hex run counts as an id only when it is long and mixes letters and digits, so English
// words made of hex letters ("facade", "deadbeef") survive. It may follow an underscore, so that
// prefixed ids ("req_9f86d081884c") collapse too.
const HEX_ID_RE = /(?<![0-9a-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}(?![0-9a-z])/gi;
// Digit runs anywhere, including inside identifiers ("ord_8812", "HTTP_429"): the error code is
// part of the signature on its own, so the message only needs its shape.
const NUMBER_RE = /\d+(?:[.,]\d+)*/g;
const WHITESPACE_RE = /\s+/g;
const QUOTE_CHAR_RE = /["'`]/;
const DIGIT_RE = /\d/;

/**
 * Reduces an error message to its shape: URLs, emails, UUIDs, quoted strings, hex ids and numbers
 * become `<url>`, `<email>`, `<uuid>`, `<str>`, `<hex>` and `<n>`; whitespace collapses; the result
 * is cut to {@link NORMALIZED_MESSAGE_MAX_LENGTH} characters.
 * @example normalizeMessage('order 123 not found') === 'order <n> not found'
 */
export function normalizeMessage(msg: string | null | undefined): string {
  if (msg === null || msg === undefined || msg === '') return '';
  // Each pass is skipped when the character it needs is absent: this runs for every failure
  // inserted, and most messages contain no URL, email, UUID or quote.
  let s = msg;
  if (s.includes('://')) s = s.replace(URL_RE, '<url>');
  if (s.includes('@')) s = s.replace(EMAIL_RE, '<email>');
  if (s.includes('-')) s = s.replace(UUID_RE, '<uuid>');
  if (QUOTE_CHAR_RE.test(s)) s = s.replace(QUOTED_RE, '<str>');
  if (DIGIT_RE.test(s)) {
    if (s.includes('0x') || s.includes('0X')) s = s.replace(HEX_PREFIXED_RE, '<hex>');
    s = s.replace(HEX_ID_RE, '<hex>').replace(NUMBER_RE, '<n>');
  }
  const normalized = s.replace(WHITESPACE_RE, ' ').trim();
  if (normalized.length <= NORMALIZED_MESSAGE_MAX_LENGTH) return normalized;
  let cut = normalized.slice(0, NORMALIZED_MESSAGE_MAX_LENGTH);
  // A lone high surrogate is not valid UTF-8 and would be mangled by database drivers.
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  // Trimming again keeps the function idempotent when the cut lands after a space.
  return cut.trimEnd();
}

/** What a non-success record is filed under when its classification is missing (for example, imported logs). */
export const UNCLASSIFIED_STAGE: FailureStage = 'execution';

/**
 * The failure type a non-success record is filed under when it has none: `timeout` for timeouts,
 * `unclassified` otherwise. Keeps breakdowns summing to the failure totals.
 */
export function effectiveFailureType(record: Pick<ToolExecutionRecord, 'status' | 'failure_type'>): string {
  if (record.failure_type !== null) return record.failure_type;
  return record.status === 'timeout' ? 'timeout' : 'unclassified';
}

/** The identity of a failure shape; see {@link failureSignature}. */
export interface FailureSignatureKey {
  /** 16 hex characters of SHA-256 over the other fields. */
  signature: string;
  tool_name: string;
  failure_stage: FailureStage;
  failure_type: string;
  error_code: string | null;
  normalized_message: string;
}

/** The signature hash of a shape. Exposed so that adapters can recompute it without a record. */
export function signatureHash(
  toolName: string,
  stage: FailureStage,
  type: string,
  errorCode: string | null,
  normalizedMessage: string,
): string {
  // The unit separator cannot appear in tool names or codes, so distinct tuples cannot collide
  // by concatenation.
  const key = `${toolName}\u001f${stage}\u001f${type}\u001f${errorCode ?? ''}\u001f${normalizedMessage}`;
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * The failure signature of a record, or null for a success.
 * @example failureSignature(record)?.signature // '3f9a0c1d2e4b5a67'
 */
export function failureSignature(
  record: Pick<
    ToolExecutionRecord,
    'status' | 'tool_name' | 'failure_stage' | 'failure_type' | 'error_code' | 'error_message'
  >,
): FailureSignatureKey | null {
  if (record.status === 'success') return null;
  const stage = record.failure_stage ?? UNCLASSIFIED_STAGE;
  const type = effectiveFailureType(record);
  const normalized = normalizeMessage(record.error_message);
  return {
    signature: signatureHash(record.tool_name, stage, type, record.error_code, normalized),
    tool_name: record.tool_name,
    failure_stage: stage,
    failure_type: type,
    error_code: record.error_code,
    normalized_message: normalized,
  };
}

/** Signatures kept by {@link cachedFailureSignature}; the cache is cleared when it is full. */
export const SIGNATURE_CACHE_MAX_ENTRIES = 4096;
/** Messages longer than this are not cached (their key would cost more memory than the hash saves). */
const SIGNATURE_CACHE_MAX_MESSAGE = 1024;
const signatureCache = new Map<string, Readonly<FailureSignatureKey>>();

/**
 * {@link failureSignature}, remembered by the raw fields (tool, stage, type, status, error code,
 * message), so that a failure seen before costs one map lookup instead of the message's regexes
 * and a SHA-256. The result is frozen and shared: do not modify it.
 */
export function cachedFailureSignature(
  record: Pick<ToolExecutionRecord, 'status' | 'tool_name' | 'failure_stage' | 'failure_type' | 'error_code' | 'error_message'>,
): Readonly<FailureSignatureKey> | null {
  if (record.status === 'success') return null;
  const message = record.error_message ?? '';
  if (message.length > SIGNATURE_CACHE_MAX_MESSAGE) return failureSignature(record);
  // \u001f cannot appear in tool names or codes; \u0000 marks a null field apart from an empty one.
  const key = `${record.tool_name}\u001f${record.failure_stage ?? '\u0000'}\u001f${record.failure_type ?? '\u0000'}\u001f${record.status}\u001f${record.error_code ?? '\u0000'}\u001f${message}`;
  let signature = signatureCache.get(key);
  if (signature === undefined) {
    signature = Object.freeze(failureSignature(record)!);
    if (signatureCache.size >= SIGNATURE_CACHE_MAX_ENTRIES) signatureCache.clear();
    signatureCache.set(key, signature);
  }
  return signature;
}
