/**
 * Reads the failure a text states: an HTTP status line or `NNN Reason Phrase`, an error page's
 * title, a traceback's exception, an errno code, a gRPC or JSON-RPC status, an `Error:` prefix.
 * These are forms that servers, runtimes and SDKs print in fixed shapes, so reading them is
 * parsing. Prose is left to `wording.ts`.
 *
 * Where a form sits matters: a short text (a tool's error string) is read whole, a long one (a
 * fetched page, a document about HTTP errors) only where a failure is reported: its first line,
 * its last line, an error page's title, a stack trace's exception lines. A status followed by
 * "errors" or "means" is discussed, not reported.
 */
import { STATUS_CODES } from 'node:http';
import { grpcCause, isGrpcName, meaningOfName } from './code-names.js';
import type { Cause, Signal } from './signal.js';
import { BARE_NOUNS, failureWords, NEGATION, SUCCESS_WORDS } from './wording.js';

/** Longest text read as one statement; longer ones are read at their ends. */
export const SHORT_TEXT = 320;
const READ_LIMIT = 8000;
/** Longest text whose failure words alone may fail it (a one- or two-sentence error string). */
const STATEMENT_TEXT = 200;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Reason phrases (RFC 9110, as Node names them, plus the spellings servers print) -> status. */
const PHRASE_STATUS = new Map<string, number>();
for (const [code, phrase] of Object.entries(STATUS_CODES)) {
  const n = Number(code);
  if (n >= 400 && n <= 599 && phrase !== undefined) PHRASE_STATUS.set(phrase.toLowerCase(), n);
}
for (const [phrase, n] of [['gateway time-out', 504], ['request time-out', 408], ['request entity too large', 413], ['content too large', 413], ['unprocessable content', 422], ['client closed request', 499], ['service temporarily unavailable', 503], ['internal error', 500]] as const) PHRASE_STATUS.set(phrase, n);

const PHRASE_ALTERNATIVES = [...PHRASE_STATUS.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
/** `502 Bad Gateway`, `404 - Not Found`, `429: Too Many Requests`. */
const NUMBER_PHRASE = new RegExp(`\\b([45]\\d\\d)\\s*[-:–]?\\s*(?:${PHRASE_ALTERNATIVES})\\b`, 'gi');
/** A text that opens with a reason phrase alone: `Not Found`, `Forbidden: ...`. */
const BARE_PHRASE = /^\W{0,3}(not found|forbidden|unauthorized|too many requests|service unavailable|bad gateway|gateway time-?out|internal server error|bad request|request time-?out|payload too large|unprocessable entity|method not allowed|precondition failed|not implemented)(?:\W|$)/i;

/** Status forms that say "this is a status": `HTTP/1.1 503`, `HTTP 401`, `status code 500`, `Error 404`. */
const STATUS_FORMS: readonly RegExp[] = [
  /\bHTTP\/\d(?:\.\d)?\s+([1-5]\d\d)\b/gi,
  /\bHTTP[ _-]?(?:(?:status|error|response)[ _-]?)?(?:code[ _-]?)?[:=#]?\s*([1-5]\d\d)\b/gi,
  /\bstatus(?:[ _-]?code)?\s*[:=]?\s*\(?([1-5]\d\d)\b/gi,
  /\b(?:response|return|result)[ _-]?code\s*[:=]?\s*\(?([45]\d\d)\b/gi,
  /\breturned error:?\s*([45]\d\d)\b/gi,
  /(?:error|exception|fehler|erreur|erro|错误|錯誤|エラー|오류)(?:[ _-]?code)?\s*[:=#]?\s*\(?([45]\d\d)\b/gi,
  /\b([45]\d\d)\s+(?:client|server)\s+error\b/gi,
  /\b(?:returned|responded with|failed with|received|got)\s+(?:an?\s+)?(?:HTTP\s+)?(?:status\s+)?(?:code\s+)?([45]\d\d)\b/gi,
  /(?:状态码|错误码|返回码|响应码|HTTP状态码?|ステータスコード|상태 코드)\s*[：:=]?\s*([1-5]\d\d)(?!\d)/gi,
];

/** Words of a text about status codes rather than one reporting a status. */
const DISCUSSES = /\b(?:status codes?|response codes?|indicates that|means that|refers to|for example|see also)\b/i;
/** An XML error document: S3's `<Error><Code>NoSuchKey</Code>`, a SOAP `<Fault>`. */
const XML_ERROR = /^\s*(?:<\?xml[^>]*>\s*)?(?:<(?:[\w-]+:)?(?:Envelope|Body)\b[^>]*>\s*)*<(?:[\w-]+:)?(?:Error|ErrorResponse|Errors|Fault)\b/;
/** SOAP's own fault codes: the server's fault, or the client's. */
const SOAP_FAULTS: Readonly<Record<string, number>> = { server: 500, receiver: 500, client: 400, sender: 400 };
const XML_CODE = /<(?:[\w-]+:)?(?:Code|faultcode|ErrorCode)>\s*([^<]{1,120}?)\s*<\//i;
const XML_MESSAGE = /<(?:[\w-]+:)?(?:Message|faultstring|ErrorMessage)>\s*([^<]{1,500}?)\s*<\//i;

/** After a status: it is being discussed ("HTTP 500 errors are ...", "a 404 means ..."). */
const DISCUSSED = /^\s*(?:[A-Za-z'-]+\s+){0,3}?(?:errors\b|error pages\b|status codes\b|responses\b|(?:is|are|means|indicates|occurs|happens|refers to)\b)/i;

const ERROR_PREFIX = /^\W{0,3}(?:curl: \(\d+\)|(?:ERR|WRONGTYPE|NOAUTH|NOPERM|NOSCRIPT|OOM|BUSY|LOADING|READONLY|CLUSTERDOWN|MISCONF|EXECABORT|MASTERDOWN) |(?:error|err|fatal|exception|failure|failed|erreur|fehler|erro)\s*[:：\-–—!|\]]|\[(?:error|err|fatal)\]|(?:error|fehler|erreur|erro)\s+(?:executing|calling|invoking|running|sending|connecting|reading|writing|decoding|parsing|opening|loading|resolving|uploading|downloading|while|when|during|in|occurred|from|processing|fetching|getting|code|response|\d{3,6})\b|(?:tool|function|api|request|call) (?:execution )?(?:error|failed|failure)\b|(?:错误|錯誤|异常|異常|失败|失敗|出错了?|报错|エラー|오류|실패)\s*[:：,，!！\s]|(?:调用|请求|执行|操作|查询|连接|登录|支付|下单|上传|下载|保存|发送|处理|获取)(?:失败|出错|异常|超时))/i;
const SOFT_PREFIX = /^\W{0,3}(?:failed|unable|could not|couldn't|cannot|can't) (?:to )?\w/i;

const JSON_RPC = [/\b(?:MCP|JSON-?RPC)\s+error\s*[:(]?\s*(-32\d{3})\b/gi, /["']?code["']?\s*[:=]\s*(-32\d{3})\b/gi];
const GRPC_GO = /rpc error: code = (\w+)/g;
const GRPC_PY = /StatusCode\.([A-Z_]+)/g;
const GRPC_NODE = /\b(1[0-6]|[1-9]) ([A-Z][A-Z_]{4,}):/g;
const GRPC_NUMBER = /grpc[-_ ]?status[:= ]+(\d{1,2})\b/gi;
const ERRNO = /\b(E[A-Z]{4,}|UND_ERR_[A-Z_]+|ERR_[A-Z_]{3,})\b/g;
const PY_ERRNO = /\[(?:Errno|WinError) (-?\d+)\]/g;
/** Linux (and Windows socket) errno numbers Python prints, as the errno names the runtime classifies. */
const ERRNO_NUMBERS: Readonly<Record<string, string>> = {
  '111': 'ECONNREFUSED', '104': 'ECONNRESET', '110': 'ETIMEDOUT', '113': 'EHOSTUNREACH', '101': 'ENETUNREACH', '32': 'EPIPE', '103': 'ECONNABORTED',
  '-2': 'ENOTFOUND', '-3': 'EAI_AGAIN', '-5': 'ENOTFOUND', '8': 'ENOTFOUND', '11001': 'ENOTFOUND',
  '10061': 'ECONNREFUSED', '10054': 'ECONNRESET', '10060': 'ETIMEDOUT', '10065': 'EHOSTUNREACH', '10053': 'ECONNABORTED',
};
/** Fixed messages of operating systems and HTTP clients (strerror, Go's net package, undici, axios). */
const SYSTEM_PHRASES: readonly (readonly [RegExp, string])[] = [
  [/connection refused|actively refused|econnrefused|\bfetch failed\b/i, 'ECONNREFUSED'],
  [/connection reset(?: by peer)?|socket hang up|broken pipe|remote end closed connection|connection aborted|server disconnected|unexpected eof|other side closed|terminated: other side/i, 'ECONNRESET'],
  [/name or service not known|nodename nor servname|temporary failure in name resolution|no such host|getaddrinfo failed|could not resolve host|failed to resolve/i, 'ENOTFOUND'],
  [/i\/o timeout|context deadline exceeded|connection timed out|read timed out|operation timed out|timeout of \d+ ?ms exceeded|the (?:read|write|handshake) operation timed out|client\.timeout exceeded|tls handshake timeout|connect timeout error|headers timeout error|body timeout error/i, 'ETIMEDOUT'],
  [/network is unreachable|no route to host|host is unreachable/i, 'EHOSTUNREACH'],
  [/certificate verify failed|x509: |ssl: |self[- ]signed certificate/i, 'ECONNREFUSED'],
];
const SYSTEM_PHRASE = new RegExp(SYSTEM_PHRASES.map(([pattern]) => `(${pattern.source})`).join('|'), 'i');
/** `An error occurred (ThrottlingException) when calling the PutItem operation` (botocore). */
const AWS_CODE = /An error occurred \(([\w.]+)\) when calling/g;
/** Error codes quoted inside the text: `'code': 'rate_limit_exceeded'`, `"type": "invalid_request_error"`. */
const QUOTED_CODE = /["'](?:code|type|error_code|errorCode|error_type|reason|status|__type)["']\s*:\s*["']([A-Za-z][\w.#:-]{2,80})["']/g;
/** Express's default 404 page and its text form. */
const EXPRESS_CANNOT = /\bCannot (?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \//;
/** `错误码：10001`, `code=40301`: a stated code that is no HTTP status still says the call failed. */
const STATED_CODE = /(?:错误码|错误代码|返回码|错误编号|エラーコード|error[ _]?code|errcode)\s*[：:=]\s*(-?\d{1,6})(?!\d)/gi;
/** An exception class: qualified identifier ending in a failure noun, followed by `:` or `(` or the line's end. */
const EXCEPTION = /(?:^|[\s(\[{'"`,=])((?:[A-Za-z_$][\w$]*(?:\.|::))*[A-Z][\w$]*?(?:Error|Exception|Timeout|Fault|Refused|Exceeded|Exhausted|Denied|Failure|Unavailable|NotFound|Throttled))(?=\s*[:(\[]|\s*$)/gm;
/** A cheap test for {@link EXCEPTION}: a class name's failure noun after a letter (a bare `Error:` is the prefix's). */
const EXCEPTION_NOUN = /[a-z0-9](?:Error|Exception|Timeout|Fault|Refused|Exceeded|Exhausted|Denied|Failure|Unavailable|NotFound|Throttled)\b|\.Timeout\b/;
const GO_CLIENT = /^(?:Get|Post|Put|Patch|Delete|Head) "https?:\/\/[^"]*": /;
const HTML_START = /^\s*<(?:!doctype|html|head|body|\?xml|center|h1|title)\b/i;
const STACK_FRAME = /^\s+at\s|^\s+File "|^goroutine \d+ \[|^Caused by: |^\s+\.\.\. \d+ more/m;
const PY_TRACEBACK = 'Traceback (most recent call last)';
/** Go's `panic: …` and Rust's `thread 'main' panicked at …`, as the text opens. */
const PANIC = /^(?:(panic): |thread '[^'\n]{1,80}' (panicked) at )/;

const clip = (s: string, n = 60): string => {
  const one = s.trim().replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n)}…` : one;
};

export interface TextContext {
  /**
   * The text is known to report a failure (an error field's message, an `isError` result): every
   * form in it counts, wherever it is.
   */
  inError: boolean;
}

/** Pushes the signals `text` states onto `sink`. */
export function readText(text: string, sink: Signal[], context: TextContext): void {
  let t = text.trim();
  if (t === '') return;
  if (t.length > READ_LIMIT) t = `${t.slice(0, READ_LIMIT / 2)}\n${t.slice(-READ_LIMIT / 2)}`;
  if (XML_ERROR.test(t)) {
    readXmlError(t, sink);
    return;
  }
  if (HTML_START.test(t)) {
    readHtml(t, sink);
    return;
  }
  // A statement is short and at most a few lines; longer text (a page, a changelog) is read at its ends.
  const whole = context.inError || (t.length <= SHORT_TEXT && lineCount(t) <= 3);
  const start = sink.length;
  // A log excerpt reports what happened elsewhere; its words are doubts at most.
  if (!context.inError && t.includes('\n') && isLogExcerpt(t)) {
    const words = failureWords(t.slice(0, 2000));
    if (words !== undefined) sink.push({ evidence: `words:${words.phrase}`, confidence: 0.45, fails: false, cause: words.cause, wording: true, statement: false });
    return;
  }
  readPrefix(t, sink);
  const panic = PANIC.exec(t);
  // Go's and Rust's crash of the tool's own code: what the panic message names is the bug, not the call's cause.
  if (panic !== null) sink.push({ evidence: `exception:${panic[1] ?? panic[2]!}`, confidence: 0.85, fails: true, cause: { name: 'Panic' } });
  const stack = t.includes('\n') && (t.includes(PY_TRACEBACK) || STACK_FRAME.test(t));
  if (stack) readStack(t, sink);
  // The part of the text where a failure would be reported: all of a short one, the first and
  // last lines of a long one. `after` gives what follows a match in the text itself, so that a
  // line cut short does not hide that its status was being discussed.
  let scan = t;
  let after = (end: number): string => t.slice(end, end + 60);
  if (!whole) {
    const firstBreak = t.indexOf('\n');
    const head = (firstBreak < 0 ? t : t.slice(0, firstBreak)).slice(0, 400);
    const lastBreak = t.lastIndexOf('\n');
    const tail = lastBreak < 0 ? '' : t.slice(lastBreak + 1).slice(0, 400);
    scan = tail === '' ? head : `${head}\n${tail}`;
    const tailAt = lastBreak + 1 - (head.length + 1);
    after = (end) => (end <= head.length ? t.slice(end, end + 60) : t.slice(end + tailAt, end + tailAt + 60));
  }
  // A long text that explains status codes (a fetched page of documentation) reports none,
  // unless it opened with an error prefix.
  if (context.inError || sink.length > start || t.length <= 160 || !DISCUSSES.test(t)) readForms(scan, sink, whole, after);
  // gRPC clients print the status on a line of its own (Python's `<_InactiveRpcError … status = StatusCode.X`).
  if (!whole && (t.includes('StatusCode.') || t.includes('rpc error:'))) readGrpc(t, sink, true);
  if (!sink.slice(start).some((s) => s.cause !== undefined && s.confidence >= 0.7)) {
    const words = failureWords(scan);
    if (words !== undefined) {
      const statement = isStatement(t, words.phrase, words.at);
      sink.push({ evidence: `words:${words.phrase}`, confidence: 0.45, fails: false, cause: words.cause, wording: true, statement });
    }
  }
}

function lineCount(t: string): number {
  let n = 1;
  for (let i = t.indexOf('\n'); i >= 0; i = t.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** The first clause of a text: up to its first sentence or clause mark. */
const CLAUSE_END = /[.;:!?。；：！？，,（(]/;

/**
 * Whether failure words make `t` a failure statement by themselves: one short line that does not
 * report success, with the words in its first clause, and not a bare noun ("Timeout set to 30s").
 */
function isStatement(t: string, phrase: string, at: number): boolean {
  if (t.length > STATEMENT_TEXT || t.includes('\n') || SUCCESS_WORDS.test(t)) return false;
  const end = t.search(CLAUSE_END);
  if (end >= 0 && at > end) return false;
  // "rate limited", "timeouted": the noun made a verb states the failure.
  const verb = /^(?:ed|ing)\b/.test(t.slice(at + phrase.length, at + phrase.length + 4));
  return !BARE_NOUNS.has(phrase) || verb || NEGATION.test(t);
}

/** Lines that start with a timestamp: a log excerpt, whose ERROR lines are data. */
const LOG_LINE = /^\s*\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d/;

function isLogExcerpt(t: string): boolean {
  const lines = t.split('\n', 50).filter((line) => line.trim() !== '');
  if (lines.length < 2) return false;
  let logged = 0;
  for (const line of lines) if (LOG_LINE.test(line)) logged += 1;
  return logged * 2 >= lines.length;
}

function readPrefix(t: string, sink: Signal[]): void {
  const prefix = ERROR_PREFIX.exec(t);
  if (prefix !== null) {
    sink.push({ evidence: `text:${clip(prefix[0], 30)}`, confidence: 0.8, fails: true });
    return;
  }
  if (GO_CLIENT.test(t)) {
    sink.push({ evidence: `text:${clip(t.slice(0, t.indexOf('": ') + 2), 40)}`, confidence: 0.75, fails: true });
    return;
  }
  const soft = SOFT_PREFIX.exec(t);
  if (soft !== null) sink.push({ evidence: `text:${clip(soft[0], 30)}`, confidence: 0.6, fails: true });
}

/** A traceback or stack trace: the exception lines say what failed (the frames are code, not the failure). */
function readStack(t: string, sink: Signal[]): void {
  const lines = t.split('\n');
  if (t.includes(PY_TRACEBACK)) {
    // Python prints the exception last: `module.Name: message`, unindented.
    for (let i = lines.length - 1; i >= 0 && i >= lines.length - 4; i--) {
      const line = lines[i]!.trimEnd();
      const m = /^([A-Za-z_][\w.]*)(?::\s?(.*))?$/.exec(line);
      if (m !== null && /^[A-Z]|\.[A-Z]/.test(m[1]!) && !line.startsWith(' ')) {
        pushException(m[1]!, sink, 0.85);
        if (m[2] !== undefined) readForms(m[2], sink, true);
        return;
      }
    }
    sink.push({ evidence: 'text:Traceback', confidence: 0.8, fails: true });
    return;
  }
  sink.push({ evidence: 'text:stack trace', confidence: 0.8, fails: true });
  const statements = lines.filter((line) => !/^\s+at\s|^\s+File "|^\s+\.\.\. \d+ more|^\s*$/.test(line)).join('\n');
  readForms(statements, sink, true);
}

function pushException(name: string, sink: Signal[], confidence: number): void {
  const meaning = meaningOfName(name);
  const bare = name.slice(Math.max(name.lastIndexOf('.'), -1) + 1);
  if (meaning === 'wrapper') sink.push({ evidence: `exception:${bare}`, confidence, fails: true });
  else if (meaning !== null) sink.push({ evidence: `exception:${bare}`, confidence, fails: true, cause: meaning.cause });
  // A class the meanings do not know is still the tool crashing, as the runtime files a thrown
  // error it cannot read: weaker than any code the message states.
  else sink.push({ evidence: `exception:${bare}`, confidence: 0.55, fails: true, cause: { name: bare } });
}

function statusSignal(evidence: string, status: number, confidence: number, fails: boolean): Signal | undefined {
  if (status < 400 || status > 599) return undefined;
  return { evidence: `text:${clip(evidence)}`, confidence, fails, cause: { status } };
}

/**
 * The fixed forms in `scan`, each of which shows a failure. `whole`: `scan` is a whole statement;
 * otherwise it is the ends of a long text, where a bare `NNN Phrase` counts only as its opening.
 */
function readForms(scan: string, sink: Signal[], whole: boolean, after: (end: number) => string = (end) => scan.slice(end, end + 60)): void {
  const fails = true;
  if (scan.includes('Cannot ') && EXPRESS_CANNOT.test(scan)) sink.push({ evidence: 'text:Cannot GET', confidence: 0.8, fails, cause: { status: 404 } });
  const hasDigits = /\d\d\d/.test(scan);
  if (hasDigits) {
    for (const form of STATUS_FORMS) {
      form.lastIndex = 0;
      for (let m = form.exec(scan); m !== null; m = form.exec(scan)) {
        if (DISCUSSED.test(after(m.index + m[0].length))) continue;
        const s = statusSignal(m[0], Number(m[1]), 0.85, fails);
        if (s !== undefined) sink.push(s);
      }
    }
    NUMBER_PHRASE.lastIndex = 0;
    for (let m = NUMBER_PHRASE.exec(scan); m !== null; m = NUMBER_PHRASE.exec(scan)) {
      if (DISCUSSED.test(after(m.index + m[0].length))) continue;
      // In a long text a bare `NNN Phrase` is a report only where the text opens with it.
      const s = statusSignal(m[0], Number(m[1]), 0.8, whole || m.index <= 40);
      if (s !== undefined) sink.push(s);
    }
    for (const form of JSON_RPC) {
      form.lastIndex = 0;
      for (let m = form.exec(scan); m !== null; m = form.exec(scan)) {
        const rpc = Number(m[1]);
        // -32000..-32099 are the server's own codes: its message says what they mean.
        sink.push({ evidence: `jsonrpc:${m[1]}`, confidence: 0.9, fails, cause: { rpc }, ...(rpc >= -32099 ? { broad: true } : {}) });
      }
    }
  }
  const bare = BARE_PHRASE.exec(scan);
  if (bare !== null) {
    const status = PHRASE_STATUS.get(bare[1]!.toLowerCase());
    const s = status === undefined ? undefined : statusSignal(bare[1]!, status, 0.75, fails);
    if (s !== undefined) sink.push(s);
  }
  if (hasDigits || scan.includes('rpc') || scan.includes('StatusCode')) readGrpc(scan, sink, fails);
  if (/[A-Z]{4}/.test(scan)) {
    ERRNO.lastIndex = 0;
    for (let m = ERRNO.exec(scan); m !== null; m = ERRNO.exec(scan)) {
      const meaning = meaningOfName(m[1]!);
      if (meaning !== null && meaning !== 'wrapper' && 'errno' in meaning.cause) sink.push({ evidence: `errno:${m[1]}`, confidence: 0.85, fails, cause: meaning.cause });
    }
  }
  if (scan.includes('Error ') || scan.includes('Errno')) {
    PY_ERRNO.lastIndex = 0;
    for (let m = PY_ERRNO.exec(scan); m !== null; m = PY_ERRNO.exec(scan)) {
      const errno = ERRNO_NUMBERS[m[1]!];
      sink.push({ evidence: `errno:${errno ?? m[1]}`, confidence: 0.85, fails, ...(errno === undefined ? {} : { cause: { errno } }) });
    }
  }
  const system = SYSTEM_PHRASE.exec(scan);
  if (system !== null) {
    for (let i = 1; i < system.length; i++) {
      if (system[i] !== undefined) {
        sink.push({ evidence: `text:${system[i]!.toLowerCase()}`, confidence: 0.7, fails, cause: { errno: SYSTEM_PHRASES[i - 1]![1] } });
        break;
      }
    }
  }
  if (scan.includes('An error occurred (')) {
    AWS_CODE.lastIndex = 0;
    for (let m = AWS_CODE.exec(scan); m !== null; m = AWS_CODE.exec(scan)) pushCode(`text:${m[1]}`, m[1]!, sink, true);
  }
  if (scan.includes('":') || scan.includes("':") || scan.includes('" :') || scan.includes("' :")) {
    QUOTED_CODE.lastIndex = 0;
    for (let m = QUOTED_CODE.exec(scan); m !== null; m = QUOTED_CODE.exec(scan)) pushCode(`text:${clip(m[0], 50)}`, m[1]!, sink, false);
  }
  if (hasDigits || /\d/.test(scan)) {
    STATED_CODE.lastIndex = 0;
    for (let m = STATED_CODE.exec(scan); m !== null; m = STATED_CODE.exec(scan)) {
      const code = Number(m[1]);
      if (code === 0) continue;
      const s = statusSignal(m[0], code, 0.85, fails);
      sink.push(s ?? { evidence: `text:${clip(m[0])}`, confidence: 0.75, fails });
    }
  }
  if (EXCEPTION_NOUN.test(scan)) {
    EXCEPTION.lastIndex = 0;
    for (let m = EXCEPTION.exec(scan); m !== null; m = EXCEPTION.exec(scan)) pushException(m[1]!, sink, 0.8);
  }
}

function pushCode(evidence: string, name: string, sink: Signal[], fails: boolean): void {
  const meaning = meaningOfName(name);
  if (meaning !== null && meaning !== 'wrapper') sink.push({ evidence, confidence: 0.8, fails, cause: meaning.cause });
  else if (fails) sink.push({ evidence, confidence: 0.8, fails });
}

function readGrpc(scan: string, sink: Signal[], fails: boolean): void {
  const push = (name: string, cause: Cause | null | undefined): void => {
    if (cause === undefined || cause === null) return;
    const upper = name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    sink.push({ evidence: `grpc:${upper}`, confidence: 0.85, fails, cause });
  };
  if (scan.includes('rpc error')) {
    GRPC_GO.lastIndex = 0;
    for (let m = GRPC_GO.exec(scan); m !== null; m = GRPC_GO.exec(scan)) push(m[1]!, grpcCause(m[1]!));
  }
  if (scan.includes('StatusCode.')) {
    GRPC_PY.lastIndex = 0;
    for (let m = GRPC_PY.exec(scan); m !== null; m = GRPC_PY.exec(scan)) push(m[1]!, grpcCause(m[1]!));
  }
  GRPC_NODE.lastIndex = 0;
  for (let m = /\d [A-Z]/.test(scan) ? GRPC_NODE.exec(scan) : null; m !== null; m = GRPC_NODE.exec(scan)) {
    if (isGrpcName(m[2]!) && grpcCause(Number(m[1])) === grpcCause(m[2]!)) push(m[2]!, grpcCause(m[2]!));
  }
  if (scan.includes('grpc') || scan.includes('GRPC') || scan.includes('Grpc')) {
    GRPC_NUMBER.lastIndex = 0;
    for (let m = GRPC_NUMBER.exec(scan); m !== null; m = GRPC_NUMBER.exec(scan)) push(`grpc-status ${m[1]}`, grpcCause(Number(m[1])));
  }
}

function readXmlError(t: string, sink: Signal[]): void {
  sink.push({ evidence: 'text:<Error>', confidence: 0.85, fails: true });
  const code = XML_CODE.exec(t);
  if (code !== null) {
    const value = code[1]!.replace(/^\w+:/, '');
    const soap = SOAP_FAULTS[value.toLowerCase()];
    const meaning = soap === undefined ? meaningOfName(value) : { cause: { status: soap } };
    if (meaning !== null && meaning !== 'wrapper') sink.push({ evidence: `text:<Code>${clip(value, 50)}`, confidence: 0.85, fails: true, cause: meaning.cause });
  }
  const message = XML_MESSAGE.exec(t);
  if (message !== null) readText(message[1]!, sink, { inError: true });
}

/**
 * A CDN's own error or challenge page (Cloudflare's): its error number tells the status the edge
 * sent. Cloudflare's 1015 is its rate limit (429), its other 1xxx numbers refuse the client (403),
 * its 52x are the origin failing; a challenge ("Just a moment...", "Attention Required!") is a 403.
 */
const CDN_PAGE = /cf-error-code|cf-error-details|Cloudflare Ray ID:\s*(?:<[^>]+>\s*)*[0-9a-f]{16}|challenge-error-text|_cf_chl_opt|<title>Attention Required! \| Cloudflare/i;
const CDN_CODE = /cf-error-code[^>]*>\s*(\d{3,4})\s*<|\bError(?: code)?\s+(\d{4}|5\d\d)\b|\|\s*(5\d\d):/i;
/** Prose that explains a status code rather than reports one. */
const DISCUSSES_STATUS = /\b(?:status code|response code|status response)\b[^.]{0,80}\b(?:indicates|means|is returned|is sent)\b|\bindicates that the server\b/i;

function readCdnPage(t: string, sink: Signal[]): boolean {
  if (!CDN_PAGE.test(t)) return false;
  const m = CDN_CODE.exec(t);
  const code = m === null ? undefined : Number(m[1] ?? m[2] ?? m[3]);
  const status = code === undefined ? 403 : code === 1015 ? 429 : code >= 1000 ? 403 : code;
  if (status < 400 || status > 599) return false;
  sink.push({ evidence: `text:cdn ${code === undefined ? 'challenge' : `error ${code}`}`, confidence: 0.85, fails: true, cause: { status } });
  return true;
}

const TITLE = /<title[^>]*>([^<]{1,200})<\/title>|<h1[^>]*>([^<]{1,200})<\/h1>/gi;
const HTML_STATUS = /^\s*(?:HTTP\s+)?(?:(?:Status|Error)\s*)?([45]\d\d)\b|\|\s*([45]\d\d)\s*:|\bError\s+([45]\d\d)\b/i;

/**
 * An HTML page: an error page says its status in its title or heading (nginx, Apache, IIS,
 * Tomcat, Cloudflare, Express). A page whose title states none is a fetched page, unless it is
 * short and its title or heading reads as a failure.
 */
function readHtml(t: string, sink: Signal[]): void {
  if (readCdnPage(t, sink)) return;
  TITLE.lastIndex = 0;
  const headings: string[] = [];
  for (let m = TITLE.exec(t); m !== null && headings.length < 4; m = TITLE.exec(t)) headings.push((m[1] ?? m[2] ?? '').trim());
  for (const heading of headings) {
    const m = HTML_STATUS.exec(heading);
    const status = m === null ? PHRASE_STATUS.get(heading.toLowerCase()) : Number(m[1] ?? m[2] ?? m[3]);
    if (status !== undefined && status >= 400 && status <= 599) {
      // A page that explains the status it is titled with (MDN's "503 Service Unavailable - HTTP") is documentation.
      if (DISCUSSES_STATUS.test(t)) return;
      sink.push({ evidence: `text:<title>${clip(heading, 50)}`, confidence: 0.85, fails: true, cause: { status } });
      return;
    }
  }
  if (EXPRESS_CANNOT.test(t)) {
    sink.push({ evidence: 'text:Cannot GET', confidence: 0.8, fails: true, cause: { status: 404 } });
    return;
  }
  if (t.length > 4000) return;
  const words = failureWords(headings.join('\n'));
  if (words !== undefined) sink.push({ evidence: `words:${words.phrase}`, confidence: 0.5, fails: true, cause: words.cause, wording: true });
}
