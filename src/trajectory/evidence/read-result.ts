/**
 * The evidence extractor for logged tool results: whether a result the model saw reports a
 * failed call, of which category, on what evidence and how surely.
 *
 * The runtime never reads message wording, because it sees structured errors. A log keeps only
 * what the model saw, and that text still states the structure in fixed forms: a status field, a
 * status line, an errno, an exception class, a JSON-RPC or gRPC code. Reading those is parsing,
 * and each goes through the runtime's classifier (`signal.ts`). Words alone ("timed out", 超时)
 * are a weaker reading: they give a category at confidence 0.45 at most, fail a result only when
 * they are a short statement by themselves (0.35), and are marked `words:`.
 */
import type { FailureCategory, FailureStage } from '../../core/taxonomy.js';
import type { FailureEvidence } from '../../core/trajectory-types.js';
import { readJson, MCP_KEYS, UNWRAP_KEYS, type JsonFindings } from './json-reading.js';
import { classifyCause, type CauseReading, type Signal } from './signal.js';
import { readText } from './text-reading.js';

/** A failure found in a tool result. */
export interface ResultFailure {
  category: FailureCategory;
  type: string;
  stage: FailureStage;
  /** e.g. `HTTP_429`, `ECONNRESET`, `MCP_-32602`, `TOOL_ERROR`. */
  code: string;
  message: string;
  status?: number;
  retryAfterMs?: number;
  /** What the reading rests on. */
  evidence?: FailureEvidence;
}

/** A result read: its failure, or null and (for a success) the word-level doubts, if any. */
export interface ResultReading {
  failure: ResultFailure | null;
  /** On a success: failure words found below what fails a result (confidence under 0.3). */
  doubts?: FailureEvidence;
}

export interface ReadOptions {
  /** The source's own error flag (Anthropic's `is_error`, MCP's `isError`). */
  isError?: boolean;
  /** What {@link mayShowFailure} said of this text, when the caller has already asked it. */
  screened?: boolean;
}

const OK: ResultReading = { failure: null };
const MAX_EVIDENCE = 6;
/** Confidence of a failure whose category nothing states (`tool_reported_error`). */
const UNCATEGORIZED = 0.7;
const WORDING_CAP = 0.45;
const WORDS_ONLY = 0.35;
const DOUBT = 0.2;

/**
 * Keys and values a failing JSON body holds somewhere in its text, as one expression: error-ish
 * keys or words, `false`, a failing status or a non-zero code after its key, a status of 0 (which
 * fails in some APIs' convention), a message key (a bare envelope speaks through its message), an
 * escape (which could spell any of these).
 */
const JSON_FAILURE_CUE =
  /rror|RROR|"[eE]rr|xception|ailed|ailure|[fF]ault|FAIL|[fF]ail"|atal"|alse|\\u|[tT]imeout|TIMEOUT|timed_out|[dD]enied|essage"|"msg"|"detail|"reason"|tatus\w*"\s*:\s*(?:"?[45]\d\d|"[A-Z]{4}|"?0\b)|"cod"\s*:\s*"?[45]|ode"\s*:\s*(?:"?(?:-\d|[13-9]|2(?!\d\d\D))|"[A-Za-z])|"ret\w*"\s*:\s*"?-?[1-9]|"rc"\s*:\s*-?[1-9]|xit\w*"\s*:\s*[1-9]/;
/** Index of the first character of `text` that is not JSON whitespace. */
function firstNonSpace(text: string): number {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    i += 1;
  }
  return i;
}

const isSpaceOrColon = (c: number): boolean => c === 32 || c === 58 || c === 10 || c === 13 || c === 9;

/**
 * The first key of the object that opens at `start`, lower case without separators, when its
 * value is text, a list or an object (what a wrapper holds); read by hand, since this runs for
 * every result of a log.
 */
function wrapperKey(text: string, start: number): string | undefined {
  let open = start + 1;
  while (open < text.length && isSpaceOrColon(text.charCodeAt(open)) && text.charCodeAt(open) !== 58) open += 1;
  if (text.charCodeAt(open) !== 34) return undefined;
  const close = text.indexOf('"', open + 1);
  if (close < 0 || close - open > 41) return undefined;
  let i = close + 1;
  while (i < text.length && isSpaceOrColon(text.charCodeAt(i))) i += 1;
  const value = text.charCodeAt(i);
  if (value !== 34 && value !== 91 && value !== 123) return undefined; // '"', '[', '{'
  return text.slice(open + 1, close).toLowerCase().replace(/[_\-\s.$]/g, '');
}

/**
 * Whether {@link readResult} could find a failure in the JSON `text`, told without parsing it:
 * false only when the text holds none of the cues every failure reading of a body rests on (see
 * `JSON_FAILURE_CUE`) and is no wrapper whose inner result could state one. Importers that defer
 * parsing (see `DeferredJson`) parse a result only when this says so, and then tell `readResult`
 * (`screened`); otherwise `readResult` asks it itself, so the deferred and the eager paths read
 * every result alike. Text that is not JSON is always read (true).
 */
export function mayShowFailure(text: string): boolean {
  const start = firstNonSpace(text);
  const first = text.charCodeAt(start);
  if (first !== 123) return first !== 91 || JSON_FAILURE_CUE.test(text);
  if (JSON_FAILURE_CUE.test(text)) return true;
  const key = wrapperKey(text, start);
  return key !== undefined && (UNWRAP_KEYS.has(key) || MCP_KEYS.has(key));
}

/** A body that is a list of error objects and nothing else (Salesforce's `[{"message", "errorCode"}]`). */
function isErrorList(value: unknown[]): boolean {
  if (value.length === 0 || value.length > 20) return false;
  return value.every((item) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
    const keys = Object.keys(item).map((k) => k.toLowerCase());
    return keys.includes('message') && keys.some((k) => k === 'errorcode' || k === 'error_code' || k === 'code') && keys.length <= 4;
  });
}

function looksLikeJson(text: string): boolean {
  const first = text.charCodeAt(firstNonSpace(text));
  return first === 123 || first === 91; // '{', '['
}

/**
 * Reads a tool result as the model saw it. `body` is the text parsed, when the caller already
 * has it (or the text itself, when it is not JSON).
 */
export function readResult(text: string, options: ReadOptions = {}, body?: unknown): ResultReading {
  const isError = options.isError === true;
  const json = looksLikeJson(text);
  if (json && !isError && !(options.screened ?? mayShowFailure(text))) return OK;
  if (text.length > MAX_KEPT_TEXT) return readScreened(text, isError, json, body);
  const kept = isError ? keptInError : keptReadings;
  let reading = kept.get(text);
  if (reading === undefined) {
    reading = readScreened(text, isError, json, body);
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(text, reading);
  }
  return reading;
}

// A log repeats its error bodies (the same 429 envelope, the same "Error: not found") far more
// than its successes, which the screen above mostly answers: a reading depends on nothing but
// the text and the error flag, so the readings of short texts are kept (bounded) and each
// distinct one is read once. Readings are shared between steps, which never change them.
const MAX_KEPT = 4096;
const MAX_KEPT_TEXT = 2048;
const keptReadings = new Map<string, ResultReading>();
const keptInError = new Map<string, ResultReading>();

/** {@link readResult} of a text the screen let through (or flagged as an error). */
function readScreened(text: string, isError: boolean, json: boolean, body: unknown): ResultReading {
  const sink: Signal[] = [];
  if (isError) sink.push({ evidence: 'flag:is_error', confidence: 0.9, fails: true });
  let found: JsonFindings = {};
  if (json) {
    let value = body;
    if (value === undefined || typeof value === 'string') {
      try {
        value = JSON.parse(text) as unknown;
      } catch {
        value = text;
      }
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) found = readJson(value, sink, {}, isError);
    else if (Array.isArray(value) && isErrorList(value)) found = readJson({ errors: value }, sink, {}, isError);
    // A list of records (search hits, issues) is data, whatever its items say.
    else if (!Array.isArray(value) || isError || !value.every((item) => item !== null && typeof item === 'object')) readText(text, sink, { inError: isError });
  } else readText(text, sink, { inError: isError });
  return decide(sink, found, text);
}

/**
 * Reads a structured result body, as step logs and spans keep it: `status` the HTTP status the
 * source logged beside the body, `retryAfter` its Retry-After header.
 */
export function readBody(body: unknown, options: ReadOptions & { status?: unknown; retryAfter?: unknown } = {}): ResultReading {
  const sink: Signal[] = [];
  if (options.isError === true) sink.push({ evidence: 'flag:is_error', confidence: 0.9, fails: true });
  const found: JsonFindings = {};
  const envelope: Record<string, unknown> = {};
  if (options.status !== undefined && options.status !== null) envelope['status_code'] = options.status;
  if (options.retryAfter !== undefined && options.retryAfter !== null) envelope['retry_after'] = options.retryAfter;
  if (Object.keys(envelope).length > 0) readJson(envelope, sink, found, options.isError === true);
  let text = '';
  if (typeof body === 'string') {
    text = body;
    if (looksLikeJson(body)) return mergeBody(readResult(body, options), sink, found, body);
    readText(body, sink, { inError: options.isError === true || sink.some((s) => s.fails) });
  } else if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    readJson(body, sink, found, options.isError === true || sink.some((s) => s.fails));
    text = JSON.stringify(body);
  }
  return decide(sink, found, text);
}

/** A JSON text body read by `readResult`, with the status and flag signals the source logged beside it. */
function mergeBody(reading: ResultReading, sink: Signal[], found: JsonFindings, text: string): ResultReading {
  if (sink.length === 0) return reading;
  const value = parseOrText(text);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) readJson(value, sink, found, true);
  return decide(sink, found, text);
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The strongest cause the runtime can classify: stated structure before words, then confidence, then order. */
function bestCause(sink: readonly Signal[]): { signal: Signal; reading: CauseReading } | undefined {
  let best: { signal: Signal; reading: CauseReading } | undefined;
  for (const signal of sink) {
    if (signal.cause === undefined) continue;
    if (best !== undefined && !(rank(signal) > rank(best.signal))) continue;
    const reading = classifyCause(signal.cause);
    if (reading !== null) best = { signal, reading };
  }
  return best;
}

/** Stated specific structure, then words, then broad classes; within a tier, confidence. */
const rank = (s: Signal): number => (s.broad === true ? 0 : s.wording === true ? 1 : 2) + s.confidence;

function evidenceOf(sink: readonly Signal[], ...first: (Signal | undefined)[]): string[] {
  const ordered = [...sink].sort((a, b) => rank(b) - rank(a));
  for (const s of first.reverse()) if (s !== undefined) ordered.unshift(s);
  const out: string[] = [];
  for (const s of ordered) {
    if (!out.includes(s.evidence)) out.push(s.evidence);
    if (out.length === MAX_EVIDENCE) break;
  }
  return out;
}

const round = (n: number): number => Math.round(n * 100) / 100;

function decide(sink: Signal[], found: JsonFindings, text: string): ResultReading {
  if (sink.length === 0) return OK;
  let failing: Signal | undefined;
  for (const s of sink) if (s.fails && (failing === undefined || s.confidence > failing.confidence)) failing = s;
  const cause = bestCause(sink);
  if (failing === undefined) {
    const statement = cause !== undefined && cause.signal.wording === true && cause.signal.statement === true;
    if (!statement) {
      const words = sink.filter((s) => s.wording === true);
      return words.length === 0 ? OK : { failure: null, doubts: { confidence: DOUBT, evidence: evidenceOf(words) } };
    }
  }
  const message = (found.message ?? text).trim() || 'the tool reported an error';
  let confidence: number;
  let failure: ResultFailure;
  if (cause === undefined) {
    confidence = Math.min(failing!.confidence, UNCATEGORIZED);
    failure = { category: 'business', type: 'tool_reported_error', stage: 'execution', code: 'TOOL_ERROR', message };
  } else {
    const { reading, signal } = cause;
    confidence = failing === undefined ? WORDS_ONLY : signal.wording === true ? Math.min(failing.confidence, WORDING_CAP) : Math.min(failing.confidence, signal.confidence);
    failure = { category: reading.category, type: reading.type, stage: reading.stage, code: reading.code, message };
    if (reading.status !== undefined) failure.status = reading.status;
    const retry = found.retryAfter;
    if (retry !== undefined && reading.status !== undefined) {
      const withWait = classifyCause({ status: reading.status, retryAfter: retry });
      if (withWait?.retryAfterMs !== undefined) failure.retryAfterMs = withWait.retryAfterMs;
    } else if (reading.retryAfterMs !== undefined) failure.retryAfterMs = reading.retryAfterMs;
  }
  failure.evidence = { confidence: round(confidence), evidence: evidenceOf(sink, cause?.signal, failing) };
  return { failure };
}
