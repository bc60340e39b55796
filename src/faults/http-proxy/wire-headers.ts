/**
 * Headers on their way through the proxy, kept as raw `[name, value, name, value, ...]` lists
 * (`IncomingMessage.rawHeaders`), the form node:http both produces and accepts. Forwarding a list
 * needs no header object on either side, keeps the sender's spelling and repeated headers, and
 * costs one pass: this is the proxy's hot path.
 */
import { COMMIT_HEADER, INJECT_HEADER } from '../inject-error.js';
import { DRY_RUN_HEADER } from '../dry-run.js';

/** RFC 9110 section 7.6.1: headers that describe one connection, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);
/** `Connection` tokens that name no other header. */
const CONNECTION_OPTIONS = new Set(['keep-alive', 'close']);

/** What the proxy reads from a request's headers, gathered in the same pass that picks the ones to forward. */
export interface RequestHeaders {
  /**
   * End-to-end headers to forward as they came, minus the ones the proxy sets itself (Host,
   * Content-Length, Expect, X-Forwarded-*), the injection headers, which are for the proxy alone,
   * and Accept-Encoding: identity bodies can be recorded and rewritten, and compression buys
   * little on the hop to a local tool.
   */
  forward: string[];
  host: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
  /** The request has a body to read (Content-Length above 0, or Transfer-Encoding). */
  hasBody: boolean;
  expect: string | undefined;
  traceId: string | undefined;
  traceparent: string | undefined;
  idempotencyKey: string | undefined;
  inject: string | undefined;
  commit: string | undefined;
  /** Every X-Forwarded-For, joined. */
  forwardedFor: string | undefined;
  forwardedHost: string | undefined;
}

/** Lower-cased names listed in `Connection` values that are themselves headers to drop. */
function connectionListed(values: readonly string[]): Set<string> | undefined {
  let listed: Set<string> | undefined;
  for (const value of values) {
    // The usual value, on nearly every message: nothing to split.
    if (CONNECTION_OPTIONS.has(value.toLowerCase())) continue;
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '' && !CONNECTION_OPTIONS.has(name)) (listed ??= new Set()).add(name);
    }
  }
  return listed;
}

function withoutListed(raw: string[], listed: Set<string> | undefined): string[] {
  if (listed === undefined) return raw;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!listed.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** One pass over a request's raw headers. */
export function readRequestHeaders(raw: readonly string[]): RequestHeaders {
  const h: RequestHeaders = {
    forward: [],
    host: undefined,
    contentType: undefined,
    contentLength: undefined,
    hasBody: false,
    expect: undefined,
    traceId: undefined,
    traceparent: undefined,
    idempotencyKey: undefined,
    inject: undefined,
    commit: undefined,
    forwardedFor: undefined,
    forwardedHost: undefined,
  };
  let connection: string[] | undefined;
  let chunked = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    switch (lower) {
      case 'host':
        h.host ??= value;
        continue;
      case 'content-length':
        h.contentLength ??= value;
        continue;
      case 'expect':
        h.expect ??= value;
        continue;
      case 'accept-encoding':
      case 'x-forwarded-proto':
      // Only the proxy marks a request as a dry run (a lost_write it decided and records).
      case DRY_RUN_HEADER:
        continue;
      case 'x-forwarded-for':
        h.forwardedFor = h.forwardedFor === undefined ? value : `${h.forwardedFor}, ${value}`;
        continue;
      case 'x-forwarded-host':
        h.forwardedHost ??= value;
        continue;
      case INJECT_HEADER:
        h.inject ??= value;
        continue;
      case COMMIT_HEADER:
        h.commit ??= value;
        continue;
      case 'connection':
        (connection ??= []).push(value);
        continue;
      case 'transfer-encoding':
        chunked = true;
        continue;
      case 'content-type':
        h.contentType ??= value;
        break;
      case 'x-trace-id':
        h.traceId ??= value;
        break;
      case 'traceparent':
        h.traceparent ??= value;
        break;
      case 'idempotency-key':
        h.idempotencyKey ??= value;
        break;
      default:
        if (HOP_BY_HOP.has(lower)) continue;
    }
    h.forward.push(name, value);
  }
  h.hasBody = chunked || (h.contentLength !== undefined && h.contentLength.trim() !== '0');
  if (connection !== undefined) h.forward = withoutListed(h.forward, connectionListed(connection));
  return h;
}

/**
 * A request's Transfer-Encoding, all its fields joined, when it names a coding other than chunked
 * (gzip, deflate, ...); undefined when chunked is the only one, or there is none.
 */
export function undecodedTransferCoding(raw: readonly string[]): string | undefined {
  let codings: string | undefined;
  let other = false;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'transfer-encoding') continue;
    const value = raw[i + 1]!;
    codings = codings === undefined ? value : `${codings}, ${value}`;
    for (const coding of value.split(',')) if (coding.trim().toLowerCase() !== 'chunked') other = true;
  }
  return other ? codings : undefined;
}

/** A response's raw headers minus the hop-by-hop ones, ready for `writeHead`. */
export function forwardableResponseHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  let connection: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === 'connection') (connection ??= []).push(raw[i + 1]!);
    if (!HOP_BY_HOP.has(lower)) out.push(name, raw[i + 1]!);
  }
  return connection === undefined ? out : withoutListed(out, connectionListed(connection));
}

/** The same, as an object with lower-cased names (for answers the proxy rewrites). */
export function responseHeaderObject(raw: readonly string[]): Record<string, string | string[]> {
  const list = forwardableResponseHeaders(raw);
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!.toLowerCase();
    const value = list[i + 1]!;
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/**
 * A response's header lines as they go to the client on the fast path (`Name: value\r\n` each):
 * hop-by-hop headers out, and Content-Length too when `dropLength` (the fast path writes the
 * framing headers itself). Notes whether a Date header is there.
 */
export function responseHeadLines(raw: readonly string[], dropLength: boolean): { text: string; hasDate: boolean } {
  let text = '';
  let hasDate = false;
  let connection: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 10 && name.toLowerCase() === 'connection') (connection ??= []).push(raw[i + 1]!);
  }
  const listed = connection === undefined ? undefined : connectionListed(connection);
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || (dropLength && lower === 'content-length') || listed?.has(lower) === true) continue;
    if (lower === 'date') hasDate = true;
    text += `${name}: ${raw[i + 1]!}\r\n`;
  }
  return { text, hasDate };
}
