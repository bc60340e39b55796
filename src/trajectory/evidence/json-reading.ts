/**
 * Reads the failure a JSON result body states, by walking it for the fields APIs and frameworks
 * report errors in, whatever their names' case or separators (`error`, `errors[]`, `err`,
 * `exception`, `fault`; `status`, `statusCode`, `status_code`, `http_status`, `code`, `error_code`,
 * `errcode`, `ret`, `exit_code`; `success: false`, `ok: false`, `isError: true`, `type: "error"`,
 * `status: "error"`), and inside an error object its code, type, name and message. So OpenAI and
 * Anthropic error objects, GraphQL `errors[].extensions.code`, JSON-RPC `error.code`, Google's
 * `error.status`, AWS `__type`, Slack's `ok: false, error: "channel_not_found"` and Chinese APIs'
 * `{ code, msg }` are the same walk, not a list of shapes.
 *
 * Only the body's own level (and a wrapper holding nothing but the result, such as `{"output": …}`
 * or an MCP `content` list) speaks for the call: an `error` deep inside the data (one job of a
 * listing that failed) is data. Empty values (`"error": null`, `"errors": []`) say nothing.
 */
import { meaningOfName, nameWords } from './code-names.js';
import type { Signal } from './signal.js';
import { readText } from './text-reading.js';
import { SUCCESS_WORDS } from './wording.js';

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);
/** `status_code`, `statusCode`, `Status-Code` -> `statuscode`. */
const normalized = new Map<string, string>();
const norm = (key: string): string => {
  let k = normalized.get(key);
  if (k === undefined) {
    k = key.toLowerCase().replace(/[_\-\s.]/g, '');
    if (normalized.size < 8192) normalized.set(key, k);
  }
  return k;
};

const isEmpty = (v: unknown): boolean =>
  v === null || v === undefined || v === false || v === '' || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** Keys whose value, when not empty, is the error. */
const CONTAINERS = new Set(['error', 'errors', 'errormessages', 'err', 'exception', 'exceptions', 'fault', 'faults', 'failure', 'failures', 'errorinfo', 'errordetail', 'errordetails', 'errorobject', 'lasterror']);
/** Keys holding an error's text. */
const ERROR_TEXTS = new Set(['resultmsg', 'retmsg', 'returnmsg', 'errormessage', 'errmsg', 'errormsg', 'errordescription', 'errordesc', 'errorstring', 'errortext', 'errorreason', 'faultstring']);
/** Keys holding an error's code, where 0 (or nothing) means none. */
const ERROR_CODES = new Set(['errorcode', 'errcode', 'errno', 'errorno', 'errornumber', 'errortype', 'errorname', 'faultcode', 'errorkey']);
/** Return codes: non-zero is a failure. `ret` and `rc` are short enough to be data, so they count only in an envelope. */
const EXIT_CODES = new Set(['exitcode', 'exitstatus', 'returncode']);
const RETURN_CODES = new Set(['ret', 'retcode', 'rc', 'resultcode', 'errcode']);
/** Keys holding an HTTP status (or a status word) for the call. */
const STATUS_KEYS = new Set(['status', 'statuscode', 'httpstatus', 'httpstatuscode', 'httpcode', 'responsecode', 'responsestatus', 'statuscodevalue']);
const FALSE_MEANS_FAILED = new Set(['success', 'ok', 'succeeded', 'successful', 'issuccess', 'issuccessful']);
const TRUE_MEANS_FAILED = new Set(['iserror', 'haserror', 'failed', 'isfailure', 'error']);
/** Outcome words for the call (JSend's `fail`, `error`). */
const FAILED_WORD = /^(?:error|errored|fail|failed|failure|fatal|exception|timeout|timed[_ ]?out|denied)$/i;
const OUTCOME_KEYS = new Set(['state', 'result', 'outcome']);
/** Keys whose text a bare envelope speaks through (`{"message": "Not Found", "documentation_url": …}`). */
const MESSAGE_KEYS = ['message', 'msg', 'detail', 'reason'];
/** More text an error states, read once a failure is known. */
const MORE_TEXT_KEYS = ['description', 'title', 'hint', 'details', 'stderr', 'errors'];
/**
 * What a bare error envelope holds besides its error: messages, ids, links, times. A body with a
 * key outside these (data) is a result, whose status words describe the data, not the call.
 */
const ENVELOPE = new Set([
  'status', 'statuscode', 'httpstatus', 'httpcode', 'code', 'cod', 'message', 'info', 'infocode', 'msg', 'detail', 'details', 'description', 'reason', 'title', 'type', 'instance',
  'hint', 'help', 'success', 'ok', 'requestid', 'traceid', 'correlationid', 'timestamp', 'time', 'path', 'method', 'url', 'documentationurl', 'docurl',
  'docs', 'moreinfo', 'helpurl', 'link', 'links', 'retryafter', 'jsonrpc', 'id', 'kind', 'service', 'meta', 'metadata', 'data', 'result', 'ret', 'retcode',
  'rc', 'state', 'outcome', 'stderr', 'stdout', 'exitcode', 'returncode', 'iserror', 'params', 'param', 'field', 'location', 'locale', 'lang', 'tips',
  'object', 'name', 'debugid', 'category', 'errorcategory', 'resultmsg', 'resultmessage', 'retmsg', 'returnmsg', 'returnmessage', 'resultcode', 'hostid', 'spanid', 'logid', 'recommend', 'apiversion', 'moreinfo', 'docurl', 'errorurl', 'support', 'timestampms', 'servertime',
]);
/** Keys of a wrapper that holds only the result (`{"output": …}`), and of an MCP `CallToolResult`. */
export const UNWRAP_KEYS = new Set(['output', 'result', 'content', 'text', 'observation', 'response', 'answer', 'body', 'data', 'return', 'returnvalue', 'toolresult', 'toolresponse', 'value']);
export const MCP_KEYS = new Set(['content', 'structuredcontent', 'iserror', 'meta']);

/** Keys inside an error object that name its kind. */
const ERROR_NAME_KEYS = new Set(['code', 'status', 'statuscode', 'httpstatus', 'httpcode', 'errorcode', 'errcode', 'type', 'name', 'reason', 'kind', 'errortype', 'class', 'exception', 'exceptiontype', 'errno', 'faultcode', 'grpccode', 'grpcstatus', 'subcode', 'errorname', 'key']);
const ERROR_MESSAGE_KEYS = new Set(['message', 'msg', 'detail', 'description', 'title', 'errormessage', 'errmsg', 'text', 'faultstring', 'localizedmessage', 'usermessage', 'displaymessage', 'summary']);
const ERROR_NESTED_KEYS = new Set(['error', 'errors', 'cause', 'details', 'extensions', 'data', 'innererror', 'inner', 'errordetails', 'fielderrors', 'violations', 'body', 'response', 'detail']);

/** What the walk found besides signals: the error's message, and a server-requested wait. */
export interface JsonFindings {
  message?: string;
  /**
   * Texts the body states (messages, error strings), read once the walk is done and only when
   * its structure has not already told the failure and its cause: reading prose costs far more
   * than walking fields, and a stated status says more than the words beside it.
   */
  texts?: { text: string; inError: boolean }[];
  /** Retry-After, in seconds, as text (what the runtime's classifier reads from a header). */
  retryAfter?: string;
}

const RETRY_KEYS = new Set(['retryafter', 'retryafterseconds', 'retryafters', 'retryin']);

function noteRetry(key: string, value: unknown, found: JsonFindings): void {
  const k = norm(key);
  if (RETRY_KEYS.has(k) && (typeof value === 'number' || (typeof value === 'string' && /^\d+(?:\.\d+)?$/.test(value)))) found.retryAfter ??= String(value);
  else if (k === 'retryafterms' && typeof value === 'number') found.retryAfter ??= String(value / 1000);
}

const ENTITY_ID = /^(?:id|sid|uuid|guid|[a-z]+(?:_id|Id|ID|_sid|Sid))$/;
const ENTITY_STATE = new Set(['status', 'state', 'phase']);

/** A body that describes a thing with an id and a state of its own (a job, an order), not the call. */
function describesEntity(obj: Loose): boolean {
  let id = false;
  let state = false;
  for (const key of Object.keys(obj)) {
    if (ENTITY_ID.test(key) && (typeof obj[key] === 'string' || typeof obj[key] === 'number')) id = true;
    else if (ENTITY_STATE.has(key) && typeof obj[key] === 'string') state = true;
  }
  return id && state;
}

function isEnvelope(obj: Loose, allowData: boolean, keys: readonly string[], nkeys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const k = nkeys[i]!;
    if (ENVELOPE.has(k) || k.includes('err') || k.includes('fault') || k.includes('exception')) {
      if (!allowData && (k === 'data' || k === 'result') && !isEmpty(obj[key])) return false;
      continue;
    }
    if (!isEmpty(obj[key])) return false;
  }
  return true;
}

const httpStatus = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
};

const BROAD = { broad: true } as const;
/** Error types that name a whole class of requests (`invalid_request_error`, `api_error`), not a cause. */
const UMBRELLA = /^ (?:invalid request|bad request|request|client|api|invalid|card)(?: error| exception)? $/;

const SUCCESS_CODE = /^(?:0|ok|success|succeeded|none|null|normal|200)$/i;

/** A code's value: an HTTP status, a JSON-RPC code, or a name (errno, gRPC status, error type). */
function readCodeValue(value: unknown, path: string, sink: Signal[], fails: boolean, confidence: number, broad = false): boolean {
  if (typeof value === 'number' || (typeof value === 'string' && /^-?\d+$/.test(value))) {
    const n = Number(value);
    if (n === 0) return false;
    const status = httpStatus(n);
    if (status !== undefined) {
      if (status < 400) return false;
      sink.push({ evidence: `field:${path}=${n}`, confidence, fails, cause: { status } });
      return true;
    }
    if (n <= -32000 && n >= -32768) {
      sink.push({ evidence: `jsonrpc:${n}`, confidence: 0.9, fails, cause: { rpc: n }, ...(n >= -32099 ? BROAD : {}) });
      return true;
    }
    return false;
  }
  if (typeof value !== 'string' || value === '' || SUCCESS_CODE.test(value)) return false;
  // A code with spaces is prose that landed in a code field; read it as text.
  if (/\s/.test(value.trim())) {
    readText(value, sink, { inError: true });
    return true;
  }
  const meaning = meaningOfName(value);
  if (meaning !== null && meaning !== 'wrapper') {
    sink.push({ evidence: `field:${path}=${value.length > 60 ? `${value.slice(0, 60)}…` : value}`, confidence, fails, cause: meaning.cause, ...(broad ? BROAD : {}) });
    return true;
  }
  return false;
}

/** The inside of an error: its codes, names and messages, and nested errors (GraphQL extensions, Google details, causes). */
function readErrorObject(obj: Loose, path: string, sink: Signal[], found: JsonFindings, depth: number): void {
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    const k = norm(key);
    noteRetry(key, value, found);
    if (ERROR_NAME_KEYS.has(k) && !isObject(value) && !Array.isArray(value)) {
      // A number in `code` or `status` is an HTTP status or a JSON-RPC code; a small one in a gRPC key is a gRPC status.
      if ((k === 'grpccode' || k === 'grpcstatus') && typeof value === 'number') {
        const name = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'][value];
        if (name !== undefined) readCodeValue(name, `${path}.${key}`, sink, true, 0.85);
        continue;
      }
      // A `type` is often a broad class (`invalid_request_error`) beside a specific `code`; an umbrella one says less than the message.
      const type = k === 'type' || k === 'kind';
      readCodeValue(value, `${path}.${key}`, sink, true, type ? 0.8 : 0.85, type && typeof value === 'string' && UMBRELLA.test(nameWords(value)));
    } else if (ERROR_MESSAGE_KEYS.has(k) && typeof value === 'string') {
      found.message ??= value;
      later(found, value, true);
    } else if (depth < 4 && (ERROR_NESTED_KEYS.has(k) || CONTAINERS.has(k))) {
      if (isObject(value)) readErrorObject(value, `${path}.${key}`, sink, found, depth + 1);
      else if (Array.isArray(value)) {
        for (let i = 0; i < value.length && i < 8; i++) {
          const item = value[i];
          if (isObject(item)) readErrorObject(item, `${path}.${key}[${i}]`, sink, found, depth + 1);
          else if (typeof item === 'string') later(found, item, true);
        }
      } else if (typeof value === 'string' && k !== 'data' && k !== 'body') {
        found.message ??= value;
        later(found, value, true);
      }
    }
  }
}

/** The value of an error key (`error`, `errors`, `exception`, ...) at the body's own level. */
function readContainer(value: unknown, path: string, sink: Signal[], found: JsonFindings): void {
  if (isEmpty(value)) return;
  if (value === true) {
    sink.push({ evidence: `flag:${path}`, confidence: 0.9, fails: true });
    return;
  }
  if (typeof value === 'string') {
    sink.push({ evidence: `field:${path}`, confidence: 0.85, fails: true });
    found.message ??= value;
    // `"error": "channel_not_found"` is a code; `"error": "upstream timed out"` is a message.
    if (/\s/.test(value.trim()) || !readCodeValue(value, path, sink, true, 0.85)) later(found, value, true);
    return;
  }
  if (typeof value === 'number') {
    sink.push({ evidence: `field:${path}`, confidence: 0.85, fails: true });
    readCodeValue(value, path, sink, true, 0.85);
    return;
  }
  if (Array.isArray(value)) {
    sink.push({ evidence: `field:${path}[0]`, confidence: 0.85, fails: true });
    for (let i = 0; i < value.length && i < 8; i++) {
      const item = value[i];
      if (isObject(item)) readErrorObject(item, `${path}[${i}]`, sink, found, 1);
      else if (typeof item === 'string') {
        found.message ??= item;
        later(found, item, true);
      }
    }
    return;
  }
  if (isObject(value)) {
    sink.push({ evidence: `field:${path}`, confidence: 0.85, fails: true });
    if (norm(path) === 'errors' && isFieldErrors(value)) {
      // Rails' and Jira's `{"errors": {"title": ["can't be blank"]}}`: messages by input field are a validation failure.
      const field = Object.keys(value)[0]!;
      sink.push({ evidence: `field:${path}.${field}`, confidence: 0.8, fails: true, cause: { status: 422 } });
      for (const messages of Object.values(value)) for (const m of Array.isArray(messages) ? messages : [messages]) later(found, m as string, true);
      found.message ??= `${field}: ${String(Array.isArray(value[field]) ? value[field][0] : value[field])}`;
      return;
    }
    readErrorObject(value, path, sink, found, 1);
  }
}

/** An object of input fields, each with its message or messages, and nothing an error object would hold. */
function isFieldErrors(value: Loose): boolean {
  const keys = Object.keys(value);
  if (keys.length === 0 || keys.length > 50) return false;
  for (const key of keys) {
    const k = norm(key);
    if (ERROR_NAME_KEYS.has(k) || ERROR_NESTED_KEYS.has(k) || (ERROR_MESSAGE_KEYS.has(k) && k !== 'title' && k !== 'summary') || ENTITY_ID.test(key) || k.endsWith('id')) return false;
    const v = value[key];
    if (typeof v === 'string' ? v === '' : !(Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string'))) return false;
  }
  return true;
}

/** The text parts of an MCP `content` list (or any list of `{ type: 'text', text }`), joined. */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) if (isObject(part) && typeof part['text'] === 'string') texts.push(part['text']);
  return texts.length === 0 ? undefined : texts.join('\n');
}

/**
 * Walks a result body, pushing what it states onto `sink`. `depth` counts wrappers unwrapped;
 * `inError`: the caller already knows the call failed (a source's error flag).
 */
export function readJson(value: unknown, sink: Signal[], found: JsonFindings = {}, inError = false, depth = 0): JsonFindings {
  if (!isObject(value)) return found;
  const obj = value;
  const keys = Object.keys(obj);
  const nkeys = keys.map(norm);
  const envelope = isEnvelope(obj, false, keys, nkeys);
  // `{"errcode": 0, "errmsg": "ok"}`: a zero error code says the text beside it is no error.
  const zeroCode = keys.some((key, i) => (ERROR_CODES.has(nkeys[i]!) || RETURN_CODES.has(nkeys[i]!)) && (obj[key] === 0 || (typeof obj[key] === 'string' && /^0+$/.test(obj[key] as string))));
  // `{"job_id": 7, "status": "failed", "error": "disk full"}` describes a job: its error is data.
  const entity = describesEntity(obj);
  // JSend (`{"status": "fail", "data": {…}}`) puts what failed under `data`: status words still speak for the call.
  const jsend = envelope || isEnvelope(obj, true, keys, nkeys);
  const start = sink.length;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = obj[key];
    const k = nkeys[i]!;
    const path = key;
    noteRetry(key, v, found);
    if (CONTAINERS.has(k)) {
      if (entity) continue;
      if (k === 'error' && v === true) sink.push({ evidence: `flag:${path}`, confidence: 0.9, fails: true });
      else readContainer(v, path, sink, found);
    } else if (ERROR_TEXTS.has(k)) {
      if (typeof v === 'string' && v.trim() !== '' && !zeroCode && !entity && !SUCCESS_CODE.test(v.trim())) {
        sink.push({ evidence: `field:${path}`, confidence: 0.85, fails: true });
        found.message ??= v;
        later(found, v, true);
      }
    } else if (ERROR_CODES.has(k) || (RETURN_CODES.has(k) && envelope)) {
      if (entity) continue;
      if (!readCodeValue(v, path, sink, true, 0.9) && v !== null && v !== undefined && v !== '' && !(typeof v === 'string' && SUCCESS_CODE.test(v)) && Number(v) !== 0) {
        // A non-zero code that is no HTTP status (`errcode: 40001`, `error_code: 110`) still says it
        // failed; an exception class there (`errorType: TypeError`) is the tool crashing.
        const crash = typeof v === 'string' && /^[A-Z]\w*(?:Error|Exception)$/.test(v);
        if (typeof v === 'number' || typeof v === 'string') sink.push({ evidence: `field:${path}=${String(v).slice(0, 40)}`, confidence: 0.8, fails: true, ...(crash ? { cause: { name: v as string } } : {}) });
      }
    } else if (EXIT_CODES.has(k)) {
      // A shell's 126 and 127 say the command could not be run at all: the tool itself is broken.
      if (typeof v === 'number' && v !== 0) sink.push({ evidence: `field:${path}=${v}`, confidence: 0.8, fails: true, ...(v === 126 || v === 127 ? { cause: { name: 'CommandNotFound' } } : {}) });
    } else if (STATUS_KEYS.has(k)) {
      const status = httpStatus(v);
      if (status !== undefined) {
        if (status >= 400) sink.push({ evidence: `field:${path}=${status}`, confidence: 0.95, fails: true, cause: { status } });
      } else if (typeof v === 'string' && jsend) {
        if (FAILED_WORD.test(v)) sink.push({ evidence: `field:${path}=${v}`, confidence: 0.85, fails: true });
        else readCodeValue(v, path, sink, true, 0.85);
      } else if (isObject(v) && depth < 2) {
        // `"status": { "code": 503, "message": … }` (Google's long-running operations, some gateways).
        const inner: Signal[] = [];
        readErrorObject(v, path, inner, found, 1);
        if (inner.some((s) => s.cause !== undefined)) sink.push(...inner);
      }
    } else if (k === 'code' || k === 'cod') {
      if (envelope && !readCodeValue(v, path, sink, true, 0.9)) {
        // A non-zero code beside a message, with no data (`{"code": 10001, "msg": …}`), is the API saying no.
        if (typeof v === 'number' && v !== 0 && !(v >= 200 && v < 400)) sink.push({ evidence: `field:${path}=${v}`, confidence: 0.75, fails: true });
        // A code name beside a message, with no data, is the API naming its error (`PGRST116`).
        else if (typeof v === 'string' && v !== '' && !SUCCESS_CODE.test(v) && nkeys.some((nk) => MESSAGE_KEYS.includes(nk))) sink.push({ evidence: `field:${path}=${v.slice(0, 40)}`, confidence: 0.7, fails: true });
      }
    } else if ((k === 'detail' || k === 'details') && envelope && Array.isArray(v) && v.some((item) => isObject(item) && (typeof item['msg'] === 'string' || typeof item['message'] === 'string'))) {
      // FastAPI's and similar validation bodies: `{"detail": [{"loc": […], "msg": "field required", "type": "value_error.missing"}]}`.
      readContainer(v, path, sink, found);
    } else if (FALSE_MEANS_FAILED.has(k)) {
      if (v === false || v === 'false' || v === 0) sink.push({ evidence: `field:${path}=false`, confidence: 0.9, fails: true });
    } else if (TRUE_MEANS_FAILED.has(k)) {
      if (v === true || v === 'true') sink.push({ evidence: `flag:${path}`, confidence: 0.9, fails: true });
    } else if (k === 'object' && typeof v === 'string' && /^error$/i.test(v)) {
      // Stripe's, Notion's and Mistral's bodies say what they are: `"object": "error"`.
      sink.push({ evidence: `field:${path}=error`, confidence: 0.85, fails: true });
    } else if (k === 'name' && typeof v === 'string' && envelope && nkeys.some((nk) => MESSAGE_KEYS.includes(nk)) && /^(?:[A-Z][A-Z_]{3,}|[A-Z]\w*(?:Error|Exception))$/.test(v)) {
      // A serialized error (`{"name": "UNPROCESSABLE_ENTITY", "message": …}`, `{"name": "TypeError", …}`).
      if (!readCodeValue(v, path, sink, true, 0.85)) sink.push({ evidence: `field:${path}=${v.slice(0, 60)}`, confidence: 0.8, fails: true, ...(/(?:Error|Exception)$/.test(v) ? { cause: { name: v } } : {}) });
    } else if (k === 'type') {
      if (typeof v === 'string' && /^error$/i.test(v)) sink.push({ evidence: `field:${path}=error`, confidence: 0.85, fails: true });
      // AWS's JSON protocol names the error in `__type` (`…#ThrottlingException`).
      else if (typeof v === 'string' && envelope && /(?:Exception|Error|Fault)$/.test(v)) {
        if (!readCodeValue(v, path, sink, true, 0.85)) sink.push({ evidence: `field:${path}=${v.slice(0, 60)}`, confidence: 0.8, fails: true });
      }
    } else if (OUTCOME_KEYS.has(k) && jsend && typeof v === 'string' && FAILED_WORD.test(v)) {
      sink.push({ evidence: `field:${path}=${v}`, confidence: 0.85, fails: true });
    }
  }
  if (depth === 0 && !failsFrom(sink, start)) {
    readZeroStatus(obj, keys, nkeys, sink, found);
    readMutationErrors(obj['data'], sink, found);
  }
  const failedHere = inError || failsFrom(sink, start);
  if (failedHere || envelope) {
    // The message says why (or, in a bare envelope such as GitHub's `{"message": "Not Found"}`, whether).
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const k = nkeys[i]!;
      const v = obj[key];
      if (MESSAGE_KEYS.includes(k) || (failedHere && MORE_TEXT_KEYS.includes(k))) {
        if (typeof v === 'string') {
          if (MESSAGE_KEYS.includes(k)) found.message ??= v;
          later(found, v, failedHere);
        } else if (failedHere && (isObject(v) || Array.isArray(v)) && !CONTAINERS.has(k)) {
          readContainerCauses(v, key, sink, found);
        }
      }
    }
  }
  // A wrapper holding only the result, or an MCP result: the result inside speaks.
  if (depth < 3) {
    const first = keys[0];
    const only = keys.length === 1 && first !== undefined && UNWRAP_KEYS.has(nkeys[0]!);
    const mcp = keys.includes('content') && nkeys.every((nk) => MCP_KEYS.has(nk));
    if (only || mcp) {
      const inner = obj[mcp ? 'content' : first!];
      const text = contentText(inner);
      if (text !== undefined) {
        const trimmed = text.trimStart();
        if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && text.length < 1_000_000) {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text) as unknown;
          } catch {
            // Not JSON after all: read as the text it is.
          }
          if (isObject(parsed)) readJson(parsed, sink, found, failedHere, depth + 1);
          else readText(text, sink, { inError: failedHere });
        } else readText(text, sink, { inError: failedHere });
        if (failedHere) found.message ??= text;
      } else if (isObject(inner)) readJson(inner, sink, found, failedHere, depth + 1);
      if (mcp && isObject(obj['structuredContent'])) readJson(obj['structuredContent'], sink, found, failedHere, depth + 1);
    }
  }
  if (depth === 0) readLater(sink, found);
  return found;
}

/**
 * `{"status": "0", "info": "INVALID_USER_KEY", "infocode": "10001"}`: in the APIs where a status of
 * 0 is the failure (Amap, Baidu's older web APIs), an `info` beside it that is no success word
 * says so, and names the error. A bare `{"status": 0, "result": …}` is a success elsewhere.
 */
function readZeroStatus(obj: Loose, keys: readonly string[], nkeys: readonly string[], sink: Signal[], found: JsonFindings): void {
  const status = nkeys.indexOf('status');
  const info = nkeys.indexOf('info');
  if (status < 0 || info < 0) return;
  const s = obj[keys[status]!];
  const text = obj[keys[info]!];
  if ((s !== 0 && s !== '0') || typeof text !== 'string' || text === '' || SUCCESS_CODE.test(text) || SUCCESS_WORDS.test(text)) return;
  sink.push({ evidence: `field:${keys[status]}=0`, confidence: 0.75, fails: true });
  found.message ??= text;
  if (/\s/.test(text.trim()) || !readCodeValue(text, keys[info]!, sink, true, 0.8)) later(found, text, true);
}

/**
 * A GraphQL mutation's payload that states `userErrors` (Shopify's, Saleor's convention): the
 * mutation was refused, usually for its input, and each error's message says why.
 */
function readMutationErrors(data: unknown, sink: Signal[], found: JsonFindings): void {
  if (!isObject(data)) return;
  for (const key of Object.keys(data)) {
    const payload = data[key];
    if (!isObject(payload)) continue;
    for (const inner of Object.keys(payload)) {
      const errors = payload[inner];
      if (norm(inner) !== 'usererrors' || !Array.isArray(errors) || errors.length === 0) continue;
      const path = `data.${key}.${inner}`;
      sink.push({ evidence: `field:${path}[0]`, confidence: 0.85, fails: true, cause: { status: 422 }, broad: true });
      readContainer(errors, path, sink, found);
    }
  }
}

/** Whether a signal from `start` on fails the result (without copying the sink). */
function failsFrom(sink: readonly Signal[], start: number): boolean {
  for (let i = start; i < sink.length; i++) if (sink[i]!.fails) return true;
  return false;
}

function later(found: JsonFindings, text: string, inError: boolean): void {
  (found.texts ??= []).push({ text, inError });
}

/** The texts the walk put aside, unless a failure and a stated cause of it are already known. */
function readLater(sink: Signal[], found: JsonFindings): void {
  const texts = found.texts;
  if (texts === undefined) return;
  delete found.texts;
  let fails = false;
  let caused = false;
  for (const s of sink) {
    if (s.fails) fails = true;
    if (s.cause !== undefined && s.wording !== true && s.broad !== true && s.confidence >= 0.8) caused = true;
  }
  if (fails && caused) return;
  for (const { text, inError } of texts) readText(text, sink, { inError: inError || fails });
}

/** Causes in a list or object of error details that sits under a message-like key (FastAPI's `detail: [{ msg, type }]`). */
function readContainerCauses(value: unknown, path: string, sink: Signal[], found: JsonFindings): void {
  if (isObject(value)) readErrorObject(value, path, sink, found, 1);
  else if (Array.isArray(value)) {
    for (let i = 0; i < value.length && i < 8; i++) {
      const item = value[i];
      if (isObject(item)) readErrorObject(item, `${path}[${i}]`, sink, found, 1);
    }
  }
}

