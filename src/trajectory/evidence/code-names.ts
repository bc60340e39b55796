/**
 * Machine names of failures, read as the runtime's causes: an error code field
 * (`rate_limit_error`, `channel_not_found`, `BAD_USER_INPUT`), an exception class
 * (`ThrottlingException`, `requests.exceptions.ReadTimeout`), a gRPC status (`DEADLINE_EXCEEDED`,
 * `Unavailable`, `14`). These are identifiers an API or a library states for programs to branch on,
 * so reading them is parsing; free prose is read by `wording.ts` instead, at lower confidence.
 *
 * A name is cut into words (`ResourceNotFoundException` -> "resource not found exception") and
 * matched against the meanings below, each of which names the cause the runtime would have seen
 * live (an HTTP status, an errno code, a JSON-RPC code) so that `classifyCause` decides the
 * category, not this file.
 */
import { classifyCause, type Cause } from './signal.js';

/** gRPC status codes in their numeric order (grpc/status.proto), as causes the runtime classifies. */
const GRPC: readonly (readonly [string, Cause | null])[] = [
  ['OK', null],
  ['CANCELLED', { name: 'AbortError' }],
  ['UNKNOWN', { status: 500 }],
  ['INVALID_ARGUMENT', { status: 400 }],
  ['DEADLINE_EXCEEDED', { errno: 'ETIMEDOUT' }],
  ['NOT_FOUND', { status: 404 }],
  ['ALREADY_EXISTS', { status: 409 }],
  ['PERMISSION_DENIED', { status: 403 }],
  ['RESOURCE_EXHAUSTED', { status: 429 }],
  ['FAILED_PRECONDITION', { status: 412 }],
  // ABORTED is gRPC's concurrency conflict (a transaction aborted), not a cancellation.
  ['ABORTED', { status: 409 }],
  ['OUT_OF_RANGE', { status: 416 }],
  ['UNIMPLEMENTED', { rpc: -32601 }],
  ['INTERNAL', { status: 500 }],
  ['UNAVAILABLE', { status: 503 }],
  ['DATA_LOSS', { status: 500 }],
  ['UNAUTHENTICATED', { status: 401 }],
];

const GRPC_BY_NAME = new Map(GRPC.map(([name, cause]) => [name.replace(/_/g, ''), cause]));

/**
 * The cause of a gRPC status named in any of its spellings (`DEADLINE_EXCEEDED`,
 * `DeadlineExceeded`, `StatusCode.DEADLINE_EXCEEDED`) or by number; undefined when `name` is no
 * gRPC status, null for OK.
 */
export function grpcCause(name: string | number): Cause | null | undefined {
  if (typeof name === 'number') return Number.isInteger(name) && name >= 0 && name < GRPC.length ? GRPC[name]![1] : undefined;
  const key = name.replace(/^StatusCode\./, '').replace(/_/g, '').toUpperCase();
  return GRPC_BY_NAME.get(key);
}

/** Whether `name` is a gRPC status name as gRPC writes it (upper snake case or Go's camel case). */
export function isGrpcName(name: string): boolean {
  return GRPC_BY_NAME.has(name.replace(/_/g, '').toUpperCase()) && /^(?:[A-Z]+(?:_[A-Z]+)*|(?:[A-Z][a-z]+)+)$/.test(name);
}

/**
 * Meanings of the words in a name, most specific first. Each pattern runs on the name's words,
 * lower case, one space apart and padded with a space at each end.
 */
const MEANINGS: readonly (readonly [RegExp, Cause])[] = [
  [/ (?:expired?|expiry) (?:token|credentials?|session|key|signature|jwt) | (?:token|credentials?|session|jwt|key|signature|password) (?:is |has )?expired? /, { status: 401, type: 'credential_expired' }],
  [/ insufficient quota | quota | billing | credit balance | out of credits /, { status: 429, type: 'quota_exhausted' }],
  [/ rate ?limit| ratelimit| throttl| (?:flow|limit) control | too many requests | slow ?down | (?:request|query|call|qps|daily|frequency) limit | limit (?:exceeded|reached) | over ?limit | provisioned throughput | resource exhausted /, { status: 429 }],
  [/ gateway time ?out /, { status: 504 }],
  [/ time ?out| timed ?out | deadline exceeded /, { errno: 'ETIMEDOUT' }],
  [/ dns | name resolution | unknown host | no such host | gaierror | name not resolved | could not resolve /, { errno: 'ENOTFOUND' }],
  [/ connection reset | reset by peer | hang up | broken pipe | disconnected | connection closed | remote (?:end )?closed | connection aborted | incomplete read | chunked encoding | unexpected eof /, { errno: 'ECONNRESET' }],
  [/ proxy /, { errno: 'ERR_TUNNEL_CONNECTION_FAILED' }],
  [/ connection refused | connect(?:ion|or)? (?:error|exception|failed|failure) | cannot connect | unreachable | no route | new connection | ssl | tls | certificate | x509 | handshake /, { errno: 'ECONNREFUSED' }],
  [/ unauthori[sz]ed (?:error|exception|access|request) | unauthori[sz]ed | unauthenticated | authentication | auth (?:failure|failed|error) | not authed | invalid auth | (?:invalid|unknown|bad|wrong) (?:api |access |user |secret |app )?key(?: id)? | invalid token | sign(?:ature)? (?:error|not match|mismatch|invalid|failure|failed) | invalid sign(?:ature)? | invalid (?:grant|client) | unauthorized client | bad credentials | invalid credentials? | signature does not match | unrecognized client | invalid client token | login required | not logged in | api key | invalid session | session (?:expired|invalid) /, { status: 401 }],
  [/ forbidden | permission | access denied | denied | authori[sz]ation (?:failed|failure|error|required) | not allowed | insufficient (?:scope|privileges?|permissions?) | missing scope /, { status: 403 }],
  // A missing module is the tool's own code failing to load, not a resource the call asked for.
  [/ module not found | no module named | import error | cannot find module | command not found /, { name: 'ImportError' }],
  [/ unknown tool | tool not found | method not found | unimplemented | not implemented | no such method | unknown method /, { rpc: -32601 }],
  [/ not found | no such | notfound | does not exist | not exists? | nonexistent | resource missing | missing resource /, { status: 404 }],
  [/ already exists? | conflict | duplicate | integrity | concurrent modification | version mismatch /, { status: 409 }],
  [/ precondition | conditional check | invalid state | wrong state /, { status: 412 }],
  [/ too large | too long | payload | out of range | context length | length exceeded | max(?:imum)? length /, { status: 413 }],
  [/ card (?:error|declined) | declined | payment required | insufficient (?:funds|balance) /, { status: 402 }],
  [/ param(?:eter)?s? (?:error|err|invalid|missing|wrong) | invalid | validation | bad request | malformed | bad user input | unprocessable | missing | required | illegal argument | argument | graphql parse | graphql validation | unknown (?:field|parameter|param|argument) /, { status: 400 }],
  [/ overloaded | unavailable | service down | maintenance | temporarily | capacity | busy /, { status: 503 }],
  [/ bad gateway | upstream /, { status: 502 }],
  [/ internal | server error | api error | unknown error | data loss /, { status: 500 }],
  [/ cancell?ed | cancellation /, { name: 'AbortError' }],
];

/**
 * Exception names that wrap a failure without saying its cause (`ToolException`, `HTTPError`,
 * `McpError`): their message tells. Matched on the words left when `error` / `exception` is cut off.
 */
const WRAPPERS = new Set([
  '', 'tool', 'mcp', 'http', 'http status', 'client', 'api', 'api status', 'request', 'requests', 'axios', 'fetch', 'client response', 'response',
  'web application', 'service', 'sdk', 'base', 'generic', 'application', 'operation', 'openai', 'anthropic', 'botocore', 'client http', 'http client',
  'graphql', 'rest client', 'programming', 'database', 'operational', 'interface', 'data', 'sql', 'db', 'rpc', 'grpc', 'aio rpc', 'inactive rpc', 'tool execution', 'tool call', 'function call', 'custom', 'user', 'app', 'status',
]);

/** A name's words, lower case, one space apart, padded (`"ThrottlingException"` -> `" throttling exception "`). */
export function nameWords(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .toLowerCase();
  return ` ${words} `;
}

/** The last segment of a qualified name (`requests.exceptions.ReadTimeout`, `aws#ThrottlingException`). */
export function bareName(name: string): string {
  const cut = Math.max(name.lastIndexOf('.'), name.lastIndexOf('#'), name.lastIndexOf(':'), name.lastIndexOf('/'));
  return cut >= 0 && cut < name.length - 1 ? name.slice(cut + 1) : name;
}

const ERRNO_SHAPE = /^(?:E[A-Z]{3,}|UND_ERR_[A-Z_]+|ERR_[A-Z_]+|insufficient_quota|rate_limit_exceeded)$/;

/** What a name says: the cause it states, or `wrapper` (its message tells), or null when it says nothing known. */
export type NameMeaning = { cause: Cause } | 'wrapper' | null;

/** Names repeat across a log (the same codes, the same exceptions); their meaning is a pure function of the name. */
const meanings = new Map<string, NameMeaning>();

/** The cause a machine name states; see the file comment. */
export function meaningOfName(name: string): NameMeaning {
  const hit = meanings.get(name);
  if (hit !== undefined) return hit;
  const meaning = meaningUncached(name);
  if (meanings.size < 4096) meanings.set(name, meaning);
  return meaning;
}

function meaningUncached(name: string): NameMeaning {
  const bare = bareName(name.trim());
  if (bare === '') return null;
  if (ERRNO_SHAPE.test(bare) && classifyCause({ errno: bare }) !== null) return { cause: { errno: bare } };
  // The names the runtime itself classifies (DOM's TimeoutError and AbortError).
  if (bare === 'TimeoutError' || bare === 'AbortError') return { cause: { name: bare } };
  // Dotted error codes put the class first (`InvalidAccessKeyId.NotFound`, `AuthFailure.SignatureFailure`),
  // where a qualified exception name puts its module first (`requests.exceptions.ReadTimeout`).
  const trimmed = name.trim();
  if (bare !== trimmed && /^[A-Z][A-Za-z]+\./.test(trimmed)) {
    const all = nameWords(trimmed);
    for (const [pattern, cause] of MEANINGS) if (pattern.test(all)) return { cause };
  }
  const grpc = isGrpcName(bare) ? grpcCause(bare) : undefined;
  if (grpc !== undefined) return grpc === null ? null : { cause: grpc };
  const words = nameWords(bare);
  for (const [pattern, cause] of MEANINGS) if (pattern.test(words)) return { cause };
  if (bare !== name.trim()) {
    const all = nameWords(name.trim());
    for (const [pattern, cause] of MEANINGS) if (pattern.test(all)) return { cause };
  }
  const core = words.replace(/ (?:error|exception|err|exc|fault|failure|failed)s? /g, ' ').trim();
  return WRAPPERS.has(core) ? 'wrapper' : null;
}

/** The cause prose-free `words` state, for names already cut into words (see {@link nameWords}). */
export function meaningOfWords(words: string): Cause | undefined {
  for (const [pattern, cause] of MEANINGS) if (pattern.test(words)) return cause;
  return undefined;
}
