/**
 * HTTP/1.1 message heads for the proxy's fast path (fast-path.ts): the request line or status
 * line and the header fields, and the framing they imply (RFC 9112 sections 2-6).
 *
 * Written by hand because node does not expose its parser (llhttp) outside node:http, and
 * node:http's server and client cost more than everything else the proxy does per request. The
 * request side accepts only a strict subset: anything it does not return is not rejected here but
 * handed to node:http, whose llhttp has the last word on odd or hostile input (obs-fold, bare CR or
 * LF, duplicate framing headers, a method llhttp does not know, HTTP/1.0, upgrades, Expect). So a
 * request the fast path relays is one node:http would have taken, framed the same way. The
 * response side comes from the proxy's own upstream and is checked as strictly; what fails is an
 * upstream error, as node:http's client would report it.
 */
import { METHODS } from 'node:http';

/** node:http's default limit on a message head (`http.maxHeaderSize`), start line included. */
export const MAX_HEAD_BYTES = 16 * 1024;

/** How a message body is delimited. */
export type BodyFraming = 'none' | 'length' | 'chunked' | 'close';

export interface RequestHead {
  method: string;
  /** The request target as sent. */
  target: string;
  /** `[name, value, name, value, ...]`, names as sent. */
  raw: string[];
  framing: 'none' | 'length' | 'chunked';
  /** Body bytes when framing is 'length'. */
  contentLength: number;
  /** The client asked to close the connection after this exchange. */
  close: boolean;
}

export interface ResponseHead {
  status: number;
  /** The status line's reason phrase, possibly empty. */
  reason: string;
  raw: string[];
  /** HTTP/1.1 (keep-alive by default) rather than 1.0. */
  http11: boolean;
  /** `Connection: close`, or an HTTP/1.0 answer without `Connection: keep-alive`. */
  close: boolean;
  /** Transfer-Encoding: chunked. */
  chunked: boolean;
  /** A Transfer-Encoding other than chunked alone: the body then runs to the end of the connection. */
  otherCoding: boolean;
  /** Content-Length, when present and valid. */
  contentLength: number | undefined;
  /** Two Content-Length fields, or one that is not a number. */
  badLength: boolean;
  /** The `timeout=` of a Keep-Alive header, seconds. */
  keepAliveSeconds: number | undefined;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
/** Control characters a head may not contain, and a CR or LF that is not part of a CRLF pair. */
const BAD_BYTES = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([A-Z]+) ([\x21-\x7e]+) HTTP\/1\.1$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: ([^\r\n]*))?$/;
const DIGITS = /^\d{1,15}$/;
/** The methods llhttp parses (node:http answers any other with 400), CONNECT aside: a tunnel is node's. */
const KNOWN_METHODS = new Set(METHODS.filter((m) => m !== 'CONNECT'));

function knownMethod(method: string): boolean {
  // The usual two without hashing a new string.
  return method === 'GET' || method === 'POST' || KNOWN_METHODS.has(method);
}
const KEEP_ALIVE_TIMEOUT = /(?:^|[\s,;])timeout=(\d{1,9})/i;

/** Where the head's blank line starts (`\r\n\r\n`), searching from `from`; -1 when not there yet. */
export function headEnd(buf: Buffer, from: number): number {
  return buf.indexOf(CRLF_CRLF, from);
}

/**
 * A CR or LF in `buf[from, end)` that is not part of a CRLF pair (a CR at the very end may still
 * be). A head with one never has the `\r\n\r\n` that ends it here, though another parser may
 * read it as ended: the caller gives it up rather than wait for more.
 */
export function hasBareLineBreak(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x0a ? i === 0 || buf[i - 1] !== 0x0d : c === 0x0d && i + 1 < buf.length && buf[i + 1] !== 0x0a) return true;
  }
  return false;
}

/** Without the optional whitespace (SP, HTAB) around a field value; String.trim() would also strip NBSP and others. */
function trimOws(s: string, start: number): string {
  let end = s.length;
  while (start < end && (s.charCodeAt(start) === 0x20 || s.charCodeAt(start) === 0x09)) start++;
  while (end > start && (s.charCodeAt(end - 1) === 0x20 || s.charCodeAt(end - 1) === 0x09)) end--;
  return s.slice(start, end);
}

function hasToken(value: string, token: string): boolean {
  const lower = value.toLowerCase();
  if (lower === token) return true;
  for (const part of lower.split(',')) if (part.trim() === token) return true;
  return false;
}

/** Splits the header lines after the start line into `raw`; false when a line is not `token: value`. */
function readFields(text: string, from: number, raw: string[]): boolean {
  let at = from;
  while (at < text.length) {
    let eol = text.indexOf('\r\n', at);
    if (eol === -1) eol = text.length;
    const colon = text.indexOf(':', at);
    if (colon === -1 || colon >= eol) return false;
    const name = text.slice(at, colon);
    // Also refuses obs-fold (a line starting with whitespace) and whitespace before the colon.
    if (!TOKEN.test(name)) return false;
    raw.push(name, trimOws(text.slice(colon + 1, eol), 0));
    at = eol + 2;
  }
  return true;
}

/**
 * The head of a request the fast path may serve, from its text without the final blank line; or
 * undefined, meaning "give it to node:http".
 */
export function parseRequestHead(text: string): RequestHead | undefined {
  if (BAD_BYTES.test(text)) return undefined;
  const lineEnd = text.indexOf('\r\n');
  const line = REQUEST_LINE.exec(lineEnd === -1 ? text : text.slice(0, lineEnd));
  if (line === null || !knownMethod(line[1]!)) return undefined;
  const raw: string[] = [];
  if (lineEnd !== -1 && !readFields(text, lineEnd + 2, raw)) return undefined;
  let hosts = 0;
  let length: string | undefined;
  let chunked = false;
  let close = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // Only the few names that change the framing or the connection; a cheap first-letter filter.
    const c = name.charCodeAt(0) | 0x20;
    if (c !== 0x63 && c !== 0x68 && c !== 0x74 && c !== 0x65 && c !== 0x75) continue;
    const value = raw[i + 1]!;
    switch (name.toLowerCase()) {
      case 'host':
        hosts++;
        break;
      case 'content-length':
        // Even a repeated identical one: llhttp refuses it, so node:http's path would too.
        if (length !== undefined || !DIGITS.test(value)) return undefined;
        length = value;
        break;
      case 'transfer-encoding':
        if (chunked || value.toLowerCase() !== 'chunked') return undefined;
        chunked = true;
        break;
      case 'connection':
        if (hasToken(value, 'upgrade')) return undefined;
        if (hasToken(value, 'close')) close = true;
        break;
      case 'upgrade':
      case 'expect':
      case 'te':
        return undefined;
    }
  }
  // node:http answers a missing or repeated Host with 400 (RFC 9112 section 3.2), and a message with
  // both framings is the stuff of request smuggling: both are node's to refuse.
  if (hosts !== 1 || (chunked && length !== undefined)) return undefined;
  const contentLength = length === undefined ? 0 : Number(length);
  return {
    method: line[1]!,
    target: line[2]!,
    raw,
    framing: chunked ? 'chunked' : contentLength > 0 ? 'length' : 'none',
    contentLength,
    close,
  };
}

/** The head of an upstream response, from its text without the final blank line; undefined when malformed. */
export function parseResponseHead(text: string): ResponseHead | undefined {
  if (BAD_BYTES.test(text)) return undefined;
  const lineEnd = text.indexOf('\r\n');
  const line = STATUS_LINE.exec(lineEnd === -1 ? text : text.slice(0, lineEnd));
  if (line === null) return undefined;
  const raw: string[] = [];
  if (lineEnd !== -1 && !readFields(text, lineEnd + 2, raw)) return undefined;
  const http11 = line[1] === '1';
  const head: ResponseHead = {
    status: Number(line[2]),
    reason: line[3] ?? '',
    raw,
    http11,
    close: !http11,
    chunked: false,
    otherCoding: false,
    contentLength: undefined,
    badLength: false,
    keepAliveSeconds: undefined,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const c = name.charCodeAt(0) | 0x20;
    if (c !== 0x63 && c !== 0x74 && c !== 0x6b) continue;
    const value = raw[i + 1]!;
    switch (name.toLowerCase()) {
      case 'content-length':
        // As node:http's client: a second Content-Length, even an equal one, is an error.
        if (head.contentLength !== undefined || !DIGITS.test(value)) head.badLength = true;
        else head.contentLength = Number(value);
        break;
      case 'transfer-encoding': {
        // Chunked must be the last coding; anything else is read to the end of the connection.
        const codings = value.toLowerCase().split(',').map((s) => s.trim());
        if (codings[codings.length - 1] === 'chunked' && codings.length === 1 && !head.chunked) head.chunked = true;
        else head.otherCoding = true;
        break;
      }
      case 'connection':
        if (hasToken(value, 'close')) head.close = true;
        else if (!http11 && hasToken(value, 'keep-alive')) head.close = false;
        break;
      case 'keep-alive': {
        const m = KEEP_ALIVE_TIMEOUT.exec(value);
        if (m !== null) head.keepAliveSeconds = Number(m[1]);
        break;
      }
    }
  }
  return head;
}

/**
 * How the body of a response to `method` is delimited (RFC 9112 section 6.3), or an error code
 * when it cannot be told: 'bad_length' for a wrong Content-Length, 'both' for one beside a
 * Transfer-Encoding (the RFC lets Transfer-Encoding win but calls it a likely smuggling or
 * splitting attempt "ought to be handled as an error"; node:http's client refuses it).
 */
export function responseFraming(method: string, head: ResponseHead): BodyFraming | 'bad_length' | 'both' {
  const s = head.status;
  if (method === 'HEAD' || s < 200 || s === 204 || s === 304) return 'none';
  if ((head.chunked || head.otherCoding) && (head.contentLength !== undefined || head.badLength)) return 'both';
  if (head.otherCoding) return 'close';
  if (head.chunked) return 'chunked';
  if (head.badLength) return 'bad_length';
  if (head.contentLength !== undefined) return head.contentLength === 0 ? 'none' : 'length';
  return 'close';
}
