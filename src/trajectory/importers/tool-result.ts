/**
 * Recognizes a failed call in a logged tool result. Logs keep only what the model saw: a JSON
 * body with error or status fields, or text. Structured fields go through the runtime's own
 * classifier, so an imported 429 is labelled exactly as a live one would be; text that merely
 * starts with "Error" is a tool-reported error of unknown cause, since message wording never
 * decides a category (DESIGN.md "Taxonomy").
 */
import { classifyError } from '../../runtime/classify.js';
import type { FailureCategory, FailureStage } from '../../core/taxonomy.js';
import type { TrajectoryStep } from '../../core/trajectory-types.js';

/** A failure found in a tool result. */
export interface ResultFailure {
  category: FailureCategory;
  type: string;
  stage: FailureStage;
  /** e.g. `HTTP_429`, `ECONNRESET`, `TOOL_ERROR`. */
  code: string;
  message: string;
  status?: number;
  retryAfterMs?: number;
}

/** A step's response as far as its failure tells it: HTTP status, error code and message. */
export function failureResponse(failure: ResultFailure | null): TrajectoryStep['response'] {
  const response: TrajectoryStep['response'] = {};
  if (failure === null) return response;
  if (failure.status !== undefined) response.status_code = failure.status;
  response.error_code = failure.code;
  response.message = failure.message;
  return response;
}

type Loose = Record<string, unknown>;

const asObject = (value: unknown): Loose | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Loose) : undefined;

const ERROR_STATUS_WORDS = new Set(['error', 'failed', 'failure']);

function numericStatus(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

/** The HTTP status a result body states, under the names logs use for it. */
function statusOf(obj: Loose): number | undefined {
  const nested = asObject(obj['error']);
  for (const candidate of [obj['status_code'], obj['statusCode'], obj['status'], nested?.['status_code'], nested?.['statusCode'], nested?.['status']]) {
    const status = numericStatus(candidate);
    if (status !== undefined) return status;
  }
  return undefined;
}

function messageOf(obj: Loose, fallback: string): string {
  const error = obj['error'];
  if (typeof error === 'string' && error !== '') return error;
  const nested = asObject(error);
  if (typeof nested?.['message'] === 'string') return nested['message'];
  if (typeof obj['message'] === 'string') return obj['message'];
  return fallback;
}

const toolReported = (message: string): ResultFailure => ({
  category: 'business',
  type: 'tool_reported_error',
  stage: 'execution',
  code: 'TOOL_ERROR',
  message,
});

/** The failure a structured result body reports, or null when it looks like an ordinary result. */
export function failureOfBody(body: unknown, text: string): ResultFailure | null {
  const obj = asObject(body);
  if (obj === undefined) return null;
  const status = statusOf(obj);
  const error = obj['error'];
  const statusWord = typeof obj['status'] === 'string' && ERROR_STATUS_WORDS.has(obj['status'].toLowerCase());
  const hasError = (error !== undefined && error !== null && error !== false && error !== '') || statusWord || obj['isError'] === true;
  if (status === undefined || status < 400) {
    if (!hasError) return null;
  }
  const message = messageOf(obj, text);
  // classifyError reads status / statusCode / errno codes / JSON-RPC codes from an error-like object.
  const errorLike: Loose = { ...(asObject(error) ?? {}), message };
  if (status !== undefined && status >= 400) errorLike['status'] = status;
  const retryAfter = obj['retry_after'] ?? asObject(error)?.['retry_after'];
  if (typeof retryAfter === 'number' || typeof retryAfter === 'string') errorLike['headers'] = { 'retry-after': String(retryAfter) };
  const c = classifyError(errorLike, 0);
  // A result the tool returned is the tool saying no, not a crash: with no structured signal the
  // classifier's catch-all (system/runtime_error) would overstate it.
  if (c.category === 'system' && c.type === 'runtime_error') return toolReported(message);
  const failure: ResultFailure = { category: c.category, type: c.type, stage: c.stage, code: c.code, message };
  if (c.status !== undefined) failure.status = c.status;
  if (c.retryAfterMs !== undefined) failure.retryAfterMs = c.retryAfterMs;
  return failure;
}

// A key `failureOfBody` reads, with the value after it (a string literal, or the text up to the next delimiter).
const FAILURE_FIELD = /"(error|isError|status|status_code|statusCode)"\s*:\s*("(?:[^"\\]|\\.)*"|[^\s,}\]]*)/g;
const THREE_DIGITS = /^\d{3}$/;

/**
 * Whether {@link failureOfBody} could find a failure in JSON `text`, told without parsing it: false
 * only when the text holds no `error` or `isError` key and no status key whose value could be a
 * failure (a status of 400 or more, or an error word), wherever they are nested. Importers that
 * defer parsing (see `DeferredJson`) parse a result to classify it only when this says so.
 * Conservative: a `\u` escape could spell a key, and an escaped status value is not read here,
 * so both answer true. Arrays and text that is not a JSON object hold no structured failure.
 */
export function mayReportStructuredFailure(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  // Most results name none of the keys: plain searches rule that out before the expression runs.
  if (!text.includes('"status') && !text.includes('"error"') && !text.includes('"isError"')) return text.includes('\\u');
  if (text.includes('\\u')) return true;
  FAILURE_FIELD.lastIndex = 0;
  for (let m = FAILURE_FIELD.exec(text); m !== null; m = FAILURE_FIELD.exec(text)) {
    const key = m[1]!;
    const value = m[2]!;
    if (key === 'error' || key === 'isError') return true;
    if (value.startsWith('"')) {
      if (value.includes('\\')) return true;
      const word = value.slice(1, -1);
      if (ERROR_STATUS_WORDS.has(word.toLowerCase())) return true;
      if (THREE_DIGITS.test(word) && Number(word) >= 400) return true;
    } else {
      const status = numericStatus(Number(value));
      if (status !== undefined && status >= 400) return true;
    }
  }
  return false;
}

/** Parses JSON text, or returns the text itself. */
export function parseResultText(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

const ERROR_PREFIX = /^\s*error\b/i;

/**
 * The failure a tool result shows: a structured body first, then text starting with "Error",
 * then the source's own error flag (Anthropic's `is_error`, MCP's `isError`). `body` is the text
 * parsed, when the caller already has it.
 */
export function failureOfResult(text: string, options: { isError?: boolean } = {}, body: unknown = parseResultText(text)): ResultFailure | null {
  const structured = failureOfBody(body, text);
  if (structured !== null) return structured;
  if (ERROR_PREFIX.test(text) || options.isError === true) return toolReported(text.trim() || 'the tool reported an error');
  return null;
}
