/**
 * The fast path of the HTTP fault proxy: requests no fault touches, relayed over plain sockets.
 *
 * node:http's server and client cost a request more CPU than everything else the proxy does (the
 * bare node:http proxy in perf/http-proxy.bench.js), and every tool call pays for it. So the
 * proxy's listener takes each connection here first. A request whose head parses as plain HTTP/1.1
 * (http1-head.ts) and that the host says needs no fault, no plan rule and no admin handler is
 * relayed byte for byte: its head rewritten (hop-by-hop headers out, X-Forwarded-* in), its body
 * (Content-Length or chunked) passed on as it arrives to a pooled keep-alive upstream socket
 * (upstream-pool.ts), the answer's head rewritten the same way and its body passed back, both
 * with backpressure. Only what routing and recording need is parsed: the heads, the framing, a
 * prefix of each body.
 *
 * Anything else (HTTP/1.0, upgrades, Expect, a head that is odd or over 16 KiB, an X-Inject-Error
 * header, a tool the plan has rules for, the admin API) is handed, with the bytes read so far put
 * back, to node:http's server and the full path in http-proxy.ts, which keeps the connection from
 * then on. That is decided on a request's head, before any of its body is read, so nothing is
 * lost or read twice. Pipelined requests are served one after another: the next head is not read
 * before the answer to the previous one is out.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ChunkedFraming } from './chunked-framing.js';
import type { ExchangeOutcome, HeaderValues } from './exchange-record.js';
import { hasBareLineBreak, headEnd, MAX_HEAD_BYTES, parseRequestHead, parseResponseHead, responseFraming, type BodyFraming, type RequestHead, type ResponseHead } from './http1-head.js';
import { BodyCapture, EMPTY_BODY, type BodyPrefix } from './request-body.js';
import { UpstreamPool, type UpstreamSocket, type UpstreamUser } from './upstream-pool.js';
import { responseHeadLines, responseHeaderObject } from './wire-headers.js';

/** One request on the fast path, as the host tracks it. */
export interface FastCall {
  /** Set by the fast path once the request body is read (or known to be over the limit). */
  body: BodyPrefix;
  exchange: { upstreamStatus: number | null; upstreamError: string | null };
}

/** What the proxy (http-proxy.ts) decides and records for the fast path. */
export interface FastPathHost<C extends FastCall> {
  /** Starts an exchange for a request, or returns undefined when it needs the full path. */
  open(head: RequestHead, remoteAddress: string | undefined): C | undefined;
  /** The head to send upstream, its final blank line included. */
  upstreamHead(call: C, head: RequestHead, remoteAddress: string | undefined): string;
  /** The answer that stands for an upstream that could not be reached or failed before answering. */
  gatewayError(call: C, error: Error): { status: number; headers: Record<string, string>; body: string; code: string };
  /** The exchange is over: record it. */
  finish(call: C, outcome: ExchangeOutcome): void;
  /** Gives a connection to node:http's server, its unread bytes already put back. */
  handOff(socket: Socket): void;
}

export interface FastPathOptions {
  upstreamHost: string;
  upstreamPort: number;
  maxFreeUpstreamSockets: number;
  /** Request body bytes kept for the record's arguments. */
  maxArgsBytes: number;
  /** Response body bytes kept for raw_output. */
  captureBytes: number;
  /** An idle client connection is closed after this long, as node:http's keepAliveTimeout does. */
  keepAliveTimeoutMs?: number;
  /** A client that has not sent a whole head after this long is cut off (node:http's headersTimeout). */
  headersTimeoutMs?: number;
}

export interface FastPath {
  /** Serves a connection the proxy's server accepted. */
  accept(socket: Socket): void;
  /** Cuts every connection (in-flight exchanges end as the client giving up) and the upstream sockets. */
  closeAll(): void;
  /** Client connections the fast path holds now. */
  readonly connections: number;
}

/** Pipelined bytes held while an answer is in progress before the client is paused. */
const PIPELINE_HIGH_WATER = 64 * 1024;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;
const SWEEP_INTERVAL_MS = 1_000;
/** node:http's answer to a request it cannot parse (its server's default `clientError` handling). */
export const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

let dateSecond = -1;
let dateText = '';
/** The Date header node:http adds, computed once a second as node does. */
function httpDate(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A 101 answer: the proxy forwards no Upgrade header, so no request of its own asked to switch protocols. */
export function unexpectedUpgrade(): Error {
  return codedError('HPE_UNEXPECTED_UPGRADE', 'the upstream switched protocols without being asked to');
}

function errorCodeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : 'UPSTREAM_ERROR';
}

const enum RequestPhase {
  /** No exchange: waiting for a request head. */
  Idle,
  /** The body is being relayed. */
  Body,
  /** The request has been read in full. */
  Read,
}

class ClientConnection<C extends FastCall> implements UpstreamUser {
  /** Bytes read and not yet used: a head in progress, or pipelined requests. */
  private pending: Buffer | undefined;
  private scanned = 0;
  private phase = RequestPhase.Idle;
  private call: C | undefined;
  private head: RequestHead | undefined;
  private up: UpstreamSocket | undefined;
  private bodyLeft = 0;
  private readonly requestChunks = new ChunkedFraming();
  private body: BodyPrefix = EMPTY_BODY;
  private closeAfter = false;
  private pausedForUpstream = false;
  private pausedForPipeline = false;
  // The response in progress.
  private responseHead: ResponseHead | undefined;
  private responseBuf: Buffer | undefined;
  private responseScanned = 0;
  private framing: BodyFraming = 'none';
  private responseLeft = 0;
  private readonly responseChunks = new ChunkedFraming();
  private capture: BodyCapture | undefined;
  private headSent = false;
  private reusable = true;
  private waitingForClientDrain = false;
  /** Since when the connection has been waiting for a request head (ms). */
  idleSince: number;
  /** No longer ours: closed, or handed to node:http. */
  done = false;

  private readonly onData = (chunk: Buffer) => this.clientData(chunk);
  private readonly onEnd = () => this.clientEnd();
  private readonly onClose = () => this.clientClose();
  private readonly onError = () => undefined;
  private readonly onDrain = () => this.clientDrain();
  private readonly keepBody = (buf: Buffer, start: number, end: number) => this.keep(buf.subarray(start, end));
  private readonly keepResponse = (buf: Buffer, start: number, end: number) => this.capture!.add(buf.subarray(start, end));

  constructor(
    readonly socket: Socket,
    private readonly path: FastPathImpl<C>,
  ) {
    this.idleSince = Date.now();
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
    socket.on('drain', this.onDrain);
  }

  get idle(): boolean {
    return this.call === undefined;
  }

  get hasPartialHead(): boolean {
    return this.pending !== undefined;
  }

  // --- the client side ---

  private clientData(chunk: Buffer): void {
    if (this.done) return;
    if (this.phase === RequestPhase.Body) {
      this.feedBody(chunk);
      return;
    }
    this.stash(chunk);
    if (this.call === undefined) this.nextRequest();
  }

  private stash(chunk: Buffer): void {
    this.pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.call !== undefined && this.pending.length > PIPELINE_HIGH_WATER && !this.pausedForPipeline) {
      this.pausedForPipeline = true;
      this.socket.pause();
    }
  }

  private nextRequest(): void {
    const buf = this.pending;
    if (buf === undefined || this.done) return;
    const end = headEnd(buf, Math.max(0, this.scanned - 3));
    if (end === -1) {
      // node:http answers an oversized head itself, and one with a bare CR or LF, which would never end here.
      if (buf.length > MAX_HEAD_BYTES || hasBareLineBreak(buf, Math.max(0, this.scanned - 1))) this.handOff();
      else this.scanned = buf.length;
      return;
    }
    const head = end + 4 > MAX_HEAD_BYTES ? undefined : parseRequestHead(buf.toString('latin1', 0, end));
    const call = head === undefined ? undefined : this.path.host.open(head, this.socket.remoteAddress);
    if (call === undefined) {
      this.handOff();
      return;
    }
    this.pending = undefined;
    this.scanned = 0;
    this.start(head!, call, end + 4 < buf.length ? buf.subarray(end + 4) : undefined);
  }

  private start(head: RequestHead, call: C, rest: Buffer | undefined): void {
    this.call = call;
    this.head = head;
    this.closeAfter = head.close;
    this.headSent = false;
    this.reusable = true;
    this.responseHead = undefined;
    this.framing = 'none';
    this.capture = undefined;
    this.body = EMPTY_BODY;
    const up = this.path.pool.acquire(this);
    this.up = up;
    const text = this.path.host.upstreamHead(call, head, this.socket.remoteAddress);
    if (head.framing === 'none') {
      this.phase = RequestPhase.Read;
      up.write(text);
      if (rest !== undefined) this.stash(rest);
      return;
    }
    this.phase = RequestPhase.Body;
    this.body = { chunks: [], bytes: 0, complete: true };
    this.bodyLeft = head.contentLength;
    this.requestChunks.reset();
    up.socket.cork();
    up.write(text);
    if (rest !== undefined) this.feedBody(rest);
    up.socket.uncork();
  }

  /** Keeps the start of the request body for the record, as the full path's readBodyPrefix does. */
  private keep(part: Buffer): void {
    const body = this.body;
    if (!body.complete) return;
    body.chunks.push(part);
    body.bytes += part.length;
    if (body.bytes > this.path.options.maxArgsBytes) {
      body.complete = false;
      body.chunks.length = 0;
    }
  }

  private feedBody(chunk: Buffer): void {
    let used: number;
    if (this.head!.framing === 'length') {
      used = Math.min(this.bodyLeft, chunk.length);
      const part = used === chunk.length ? chunk : chunk.subarray(0, used);
      this.keep(part);
      this.sendUp(part);
      this.bodyLeft -= used;
      if (this.bodyLeft > 0) return;
    } else {
      used = this.requestChunks.feed(chunk, 0, chunk.length, this.keepBody);
      if (used === -1) {
        this.refuseBody();
        return;
      }
      this.sendUp(used === chunk.length ? chunk : chunk.subarray(0, used));
      if (!this.requestChunks.done) return;
    }
    this.phase = RequestPhase.Read;
    this.call!.body = this.body;
    if (used < chunk.length) this.stash(chunk.subarray(used));
  }

  private sendUp(part: Buffer): void {
    const up = this.up;
    if (up === undefined || part.length === 0) return;
    if (!up.write(part) && !this.pausedForUpstream) {
      this.pausedForUpstream = true;
      this.socket.pause();
    }
  }

  upstreamDrain(): void {
    if (!this.pausedForUpstream) return;
    this.pausedForUpstream = false;
    if (!this.pausedForPipeline) this.socket.resume();
  }

  private clientDrain(): void {
    if (!this.waitingForClientDrain) return;
    this.waitingForClientDrain = false;
    this.up?.socket.resume();
  }

  private clientEnd(): void {
    if (this.done) return;
    if (this.call !== undefined) {
      // As node:http's server does (httpAllowHalfOpen is off): a client that ends its side has
      // given up on the request in flight.
      this.clientGone();
      return;
    }
    // Half a head and no more coming is nothing to answer.
    if (this.pending !== undefined) this.socket.destroy();
    else this.socket.end();
    this.done = true;
  }

  private clientClose(): void {
    this.path.forget(this);
    if (this.call !== undefined) this.clientGone();
    this.done = true;
  }

  /**
   * A chunked request body that breaks the framing (chunked-framing.ts): the upstream request is
   * cut, before the bad bytes reach it, and the client gets node:http's answer to the same bytes,
   * a 400 and the end of the connection, as nothing of the body after them can be trusted.
   */
  private refuseBody(): void {
    if (this.headSent) {
      // An answer is already on its way: too late for a 400.
      this.clientGone();
      return;
    }
    this.dropUpstream();
    const message = 'the request body breaks the chunked framing';
    this.endExchange({ kind: 'refused', status: 400, code: 'HPE_INVALID_CHUNK_SIZE', message, body: undefined });
    this.done = true;
    this.socket.end(BAD_REQUEST, 'latin1');
    this.socket.destroySoon();
  }

  /** The client is gone (or the proxy is closing) with an exchange in flight. */
  clientGone(): void {
    const call = this.call;
    if (call !== undefined) {
      this.dropUpstream();
      const h = this.responseHead;
      const c = this.capture;
      this.endExchange(
        this.headSent && h !== undefined && c !== undefined
          ? { kind: 'response', status: h.status, headers: responseHeaderObject(h.raw), body: c.text(), bodyBytes: c.bytes, cut: true }
          : { kind: 'gave_up' },
      );
    }
    this.done = true;
    this.socket.destroy();
  }

  private handOff(): void {
    this.done = true;
    this.path.forget(this);
    const { socket } = this;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('error', this.onError);
    socket.off('drain', this.onDrain);
    const buf = this.pending;
    this.pending = undefined;
    socket.pause();
    if (buf !== undefined) socket.unshift(buf);
    this.path.host.handOff(socket);
    socket.resume();
  }

  // --- the upstream side ---

  upstreamData(chunk: Buffer): void {
    if (this.call === undefined) return;
    if (this.responseHead !== undefined) {
      if (this.relay(chunk)) this.responseComplete();
      return;
    }
    const buf = this.responseBuf === undefined ? chunk : Buffer.concat([this.responseBuf, chunk]);
    const end = headEnd(buf, Math.max(0, this.responseScanned - 3));
    if (end === -1) {
      if (buf.length > MAX_HEAD_BYTES) {
        this.upstreamFailed(codedError('HPE_HEADER_OVERFLOW', 'the upstream response head is over 16 KiB'));
        return;
      }
      // Lines ended by a bare LF (or CR): the head would never end here, and the client would wait forever.
      if (hasBareLineBreak(buf, Math.max(0, this.responseScanned - 1))) {
        this.upstreamFailed(codedError('HPE_INVALID_RESPONSE', 'the upstream sent a malformed response head'));
        return;
      }
      this.responseBuf = buf;
      this.responseScanned = buf.length;
      return;
    }
    this.responseBuf = undefined;
    this.responseScanned = 0;
    const head = end + 4 > MAX_HEAD_BYTES ? undefined : parseResponseHead(buf.toString('latin1', 0, end));
    if (head === undefined) {
      this.upstreamFailed(codedError('HPE_INVALID_RESPONSE', 'the upstream sent a malformed response head'));
      return;
    }
    const rest = end + 4 < buf.length ? buf.subarray(end + 4) : undefined;
    if (head.status < 200) {
      if (head.status === 101) {
        this.upstreamFailed(unexpectedUpgrade());
        return;
      }
      // An interim answer (103 Early Hints, an unasked-for 100): node:http's path does not pass
      // them on either; the final answer follows on the same socket.
      if (rest !== undefined) this.upstreamData(rest);
      return;
    }
    const framing = responseFraming(this.head!.method, head);
    if (framing === 'bad_length') {
      this.upstreamFailed(codedError('HPE_UNEXPECTED_CONTENT_LENGTH', 'the upstream sent a repeated or invalid Content-Length'));
      return;
    }
    if (framing === 'both') {
      this.upstreamFailed(codedError('HPE_INVALID_TRANSFER_ENCODING', 'the upstream sent both Transfer-Encoding and Content-Length'));
      return;
    }
    this.startResponse(head, framing, rest);
  }

  private startResponse(head: ResponseHead, framing: BodyFraming, rest: Buffer | undefined): void {
    const call = this.call!;
    call.exchange.upstreamStatus = head.status;
    this.responseHead = head;
    this.framing = framing;
    this.responseLeft = framing === 'length' ? head.contentLength! : 0;
    this.responseChunks.reset();
    this.capture = new BodyCapture(this.path.options.captureBytes);
    // A socket whose next message cannot be told apart is not used again (RFC 9112 section 6.3).
    this.reusable = !head.close && framing !== 'close';
    if (framing === 'close') this.closeAfter = true;
    const now = Date.now();
    const lines = responseHeadLines(head.raw, framing !== 'none');
    let text = `HTTP/1.1 ${head.status} ${STATUS_CODES[head.status] ?? head.reason}\r\n${lines.text}`;
    if (!lines.hasDate) text += `Date: ${httpDate(now)}\r\n`;
    if (framing === 'length') text += `Content-Length: ${head.contentLength}\r\n`;
    else if (framing === 'chunked') text += 'Transfer-Encoding: chunked\r\n';
    text += this.closeAfter ? 'Connection: close\r\n\r\n' : this.path.keepAliveLines;
    this.headSent = true;
    const { socket } = this;
    socket.cork();
    this.sendDown(text);
    const complete = framing === 'none' || (rest !== undefined && this.relay(rest));
    socket.uncork();
    if (complete) this.responseComplete();
  }

  private sendDown(data: string | Buffer): void {
    const ok = typeof data === 'string' ? this.socket.write(data, 'latin1') : this.socket.write(data);
    if (!ok && !this.waitingForClientDrain && this.up !== undefined) {
      this.waitingForClientDrain = true;
      this.up.socket.pause();
    }
  }

  /** Passes response body bytes on; true when the body is complete. */
  private relay(chunk: Buffer): boolean {
    switch (this.framing) {
      case 'length': {
        const n = Math.min(this.responseLeft, chunk.length);
        const part = n === chunk.length ? chunk : chunk.subarray(0, n);
        this.capture!.add(part);
        this.sendDown(part);
        this.responseLeft -= n;
        // Bytes past the body's end: the socket's framing can no longer be trusted.
        if (n < chunk.length) this.reusable = false;
        return this.responseLeft === 0;
      }
      case 'chunked': {
        const used = this.responseChunks.feed(chunk, 0, chunk.length, this.keepResponse);
        if (used === -1) {
          this.upstreamFailed(codedError('HPE_INVALID_CHUNK_SIZE', 'the upstream sent a malformed chunked body'));
          return false;
        }
        this.sendDown(used === chunk.length ? chunk : chunk.subarray(0, used));
        if (used < chunk.length) this.reusable = false;
        return this.responseChunks.done;
      }
      case 'close':
        this.capture!.add(chunk);
        this.sendDown(chunk);
        return false;
      case 'none':
        this.reusable = false;
        return true;
    }
  }

  private responseComplete(): void {
    if (this.phase === RequestPhase.Body) {
      // Answered before the client finished sending: what is left of the body cannot be told from
      // a next request without reading it, so the connection closes after this answer.
      this.closeAfter = true;
      this.reusable = false;
    }
    const h = this.responseHead!;
    const c = this.capture!;
    const up = this.up;
    this.up = undefined;
    if (up !== undefined) {
      if (this.reusable && this.phase === RequestPhase.Read) this.path.pool.release(up, h.keepAliveSeconds);
      else up.destroy();
    }
    this.endExchange({ kind: 'response', status: h.status, headers: responseHeaderObject(h.raw), body: c.text(), bodyBytes: c.bytes });
    this.afterExchange();
  }

  upstreamEnd(): void {
    if (this.call === undefined) return;
    if (this.responseHead !== undefined && this.framing === 'close') {
      this.dropUpstream();
      this.responseComplete();
      return;
    }
    this.upstreamFailed(this.responseHead === undefined ? codedError('ECONNRESET', 'socket hang up') : codedError('ECONNRESET', 'aborted'));
  }

  upstreamError(error: Error): void {
    if (this.call === undefined) return;
    this.upstreamFailed(error);
  }

  private dropUpstream(): void {
    const up = this.up;
    this.up = undefined;
    up?.destroy();
    if (this.waitingForClientDrain) this.waitingForClientDrain = false;
  }

  private upstreamFailed(error: Error): void {
    const call = this.call!;
    this.dropUpstream();
    const code = errorCodeOf(error);
    call.exchange.upstreamError = code;
    const h = this.responseHead;
    if (this.headSent && h !== undefined) {
      const c = this.capture!;
      const untilClose = this.framing === 'close';
      this.endExchange({ kind: 'broken', code, message: `the upstream response broke off: ${error.message}`, status: h.status, headers: responseHeaderObject(h.raw), body: c.text(), bodyBytes: c.bytes });
      this.done = true;
      // A body read until the connection closes looks complete at a FIN: a reset tells the client it broke.
      if (untilClose) {
        this.socket.resetAndDestroy();
        return;
      }
      // Bad bytes right behind the head: the head, corked with them in startResponse, still goes
      // out, as node:http's path sends it, so the client sees the answer that broke off.
      if (this.socket.writableCorked > 0) this.socket.uncork();
      this.socket.destroy();
      return;
    }
    const g = this.path.host.gatewayError(call, error);
    if (this.phase === RequestPhase.Body) this.closeAfter = true;
    const bytes = Buffer.byteLength(g.body);
    let text = `HTTP/1.1 ${g.status} ${STATUS_CODES[g.status] ?? ''}\r\n`;
    for (const name of Object.keys(g.headers)) text += `${name}: ${g.headers[name]}\r\n`;
    text += `Date: ${httpDate(Date.now())}\r\nContent-Length: ${bytes}\r\n`;
    text += this.closeAfter ? 'Connection: close\r\n\r\n' : this.path.keepAliveLines;
    this.headSent = true;
    this.socket.write(text + g.body, 'utf8');
    const headers: HeaderValues = g.headers;
    this.endExchange({ kind: 'response', status: g.status, headers, body: bytes === 0 ? undefined : g.body, bodyBytes: bytes, errno: code });
    this.afterExchange();
  }

  private endExchange(outcome: ExchangeOutcome): void {
    const call = this.call!;
    this.call = undefined;
    this.head = undefined;
    this.responseHead = undefined;
    this.responseBuf = undefined;
    this.responseScanned = 0;
    this.capture = undefined;
    if (this.phase === RequestPhase.Read) call.body = this.body;
    else if (!this.body.complete) call.body = this.body;
    this.phase = RequestPhase.Idle;
    this.body = EMPTY_BODY;
    this.path.host.finish(call, outcome);
  }

  private afterExchange(): void {
    if (this.done) return;
    if (this.closeAfter) {
      this.done = true;
      this.socket.end();
      return;
    }
    this.idleSince = Date.now();
    if (this.pausedForPipeline) {
      this.pausedForPipeline = false;
      if (!this.pausedForUpstream) this.socket.resume();
    }
    this.nextRequest();
  }
}

class FastPathImpl<C extends FastCall> implements FastPath {
  readonly pool: UpstreamPool;
  readonly keepAliveLines: string;
  private readonly open = new Set<ClientConnection<C>>();
  private readonly sweep: NodeJS.Timeout;
  private readonly keepAliveTimeoutMs: number;
  private readonly headersTimeoutMs: number;

  constructor(
    readonly host: FastPathHost<C>,
    readonly options: FastPathOptions,
  ) {
    this.pool = new UpstreamPool(options.upstreamHost, options.upstreamPort, options.maxFreeUpstreamSockets);
    this.keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
    this.headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
    this.keepAliveLines = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.keepAliveTimeoutMs / 1000)}\r\n\r\n`;
    // One timer for all connections rather than one per request: idle and slow-head cut-offs.
    this.sweep = setInterval(() => this.closeStale(), SWEEP_INTERVAL_MS);
    this.sweep.unref();
  }

  get connections(): number {
    return this.open.size;
  }

  accept(socket: Socket): void {
    this.open.add(new ClientConnection(socket, this));
  }

  forget(c: ClientConnection<C>): void {
    this.open.delete(c);
  }

  private closeStale(): void {
    const now = Date.now();
    for (const c of this.open) {
      if (!c.idle) continue;
      const limit = c.hasPartialHead ? this.headersTimeoutMs : this.keepAliveTimeoutMs;
      if (now - c.idleSince > limit) {
        c.done = true;
        c.socket.destroy();
      }
    }
  }

  closeAll(): void {
    clearInterval(this.sweep);
    for (const c of [...this.open]) c.clientGone();
    this.open.clear();
    this.pool.destroyAll();
  }
}

/** The fast path over `host`; see the top of this file. */
export function createFastPath<C extends FastCall>(host: FastPathHost<C>, options: FastPathOptions): FastPath {
  return new FastPathImpl(host, options);
}
