/**
 * The full path: a request served through node:http's server and client, for every request a
 * fault or a plan rule may touch. Its exchange is opened and recorded by exchange.ts, as on the
 * fast path; what happens between is the fault's decision applied on the wire.
 */
import type { Agent as HttpAgent, IncomingMessage, OutgoingHttpHeaders, ServerResponse, request as httpRequest } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { finished } from 'node:stream/promises';
import type { Clock } from '../../core/clock.js';
import { parseInjectHeader } from '../inject-error.js';
import type { FaultDecision, FaultEffect } from '../decision.js';
import { DRY_RUN_HEADER } from '../dry-run.js';
import { droppedConnectionMessage, gatewayAnswer } from '../gateway-answer.js';
import type { FaultPlan } from '../plan.js';
import { parseJson, pathOnly, type CallState, type ExchangeBook } from './exchange.js';
import type { ExchangeOutcome } from './exchange-record.js';
import { bodyBuffer, BodyCapture, readBodyPrefix, type BodyPrefix } from './request-body.js';
import { BAD_REQUEST, unexpectedUpgrade } from './fast-path.js';
import type { RouteTable } from './routes.js';
import { forwardableResponseHeaders, responseHeaderObject, undecodedTransferCoding, type RequestHeaders } from './wire-headers.js';

export const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
/** Headers that would lie about a rewritten body. */
const BODY_HEADERS = ['content-length', 'content-encoding', 'etag', 'content-md5', 'digest', 'content-range'];

/** What the full path reads from the proxy that runs it. */
export interface NodePathEnv {
  plan: FaultPlan;
  clock: Clock;
  book: ExchangeBook;
  routes: RouteTable;
  target: URL;
  /** The target's host name, without IPv6 brackets. */
  targetHost: string;
  targetPort: number | undefined;
  /** The target's path, prefixed to every request path. */
  basePath: string;
  send: typeof httpRequest;
  agent: HttpAgent | HttpsAgent;
  maxArgsBytes: number;
  maxRewriteBytes: number;
  holdCapMs: number;
  captureBytes: number;
  /** Requests in flight, marked gone when the proxy closes. */
  inFlight: Set<Live>;
  /** Set once the proxy is closing: a request given up then is recorded as cut by the close. */
  closing: boolean;
}

/** One request on the full (node:http) path while it is being served. */
export interface Live extends CallState {
  req: IncomingMessage;
  res: ServerResponse;
  /** The client went away, or the proxy is closing: nothing more will reach the client. */
  gone: boolean;
  /** The response emitted 'close' (delivered or not). */
  closed: boolean;
  /** Cancels what the request waits on when it is gone. One wait at a time, so one slot. */
  onGone: (() => void) | undefined;
  onClosed: (() => void) | undefined;
  method: string;
  /** Path and query. */
  path: string;
  /** The code of node:http's parser error that ended the request mid-body (a broken chunked framing). */
  parseError: string | undefined;
  /**
   * What broke the upstream's answer after its head. node's client ends a body read until the
   * close at a reset as if it were whole, and reports a broken chunk only as 'aborted'
   * (ECONNRESET): whatever reads the answer takes this error instead.
   */
  brokeOff: Error | undefined;
}

export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'UPSTREAM_ERROR';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function withoutHeaders(headers: OutgoingHttpHeaders, names: readonly string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  for (const name of names) delete out[name];
  return out;
}

/** Marks the request gone and cancels what it was waiting on. */
export function markGone(live: Live): void {
  if (live.gone) return;
  live.gone = true;
  const cancel = live.onGone;
  live.onGone = undefined;
  cancel?.();
}

/** Installs `cancel` as the request's gone handler; the returned function uninstalls it. */
function whileWaiting(live: Live, cancel: () => void): () => void {
  live.onGone = cancel;
  return () => {
    if (live.onGone === cancel) live.onGone = undefined;
  };
}

function responseClosed(live: Live): Promise<void> | undefined {
  if (live.closed) return undefined;
  return new Promise((resolve) => (live.onClosed = resolve));
}

/**
 * Relays an upstream response body to the client, keeping what `capture` wants of it. Resolves
 * when the client has it all (undefined), or with the error when either side broke off. By hand
 * rather than pipe() or stream.pipeline, which cost several listeners (pipeline also an
 * AbortSignal) per response.
 */
function relay(live: Live, upstream: IncomingMessage, capture: BodyCapture): Promise<Error | undefined> {
  const { res } = live;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      done();
      resolve(error);
    };
    const done = whileWaiting(live, () => {
      upstream.destroy();
      settle(new Error('the client closed the connection'));
    });
    const resume = () => upstream.resume();
    upstream.on('data', (chunk: Buffer) => {
      capture.add(chunk);
      if (!res.write(chunk)) {
        upstream.pause();
        res.once('drain', resume);
      }
    });
    upstream.once('end', () => {
      if (live.brokeOff === undefined) {
        res.end();
        return;
      }
      cutResponse(res, upstream);
      settle(live.brokeOff);
    });
    upstream.once('error', (error) => {
      cutResponse(res, upstream);
      settle(live.brokeOff ?? error);
    });
    res.once('finish', () => settle(undefined));
  });
}

/**
 * Ends a response whose upstream body broke off so that the client cannot take it for whole, as
 * the fast path does: a body the client reads until the close (an HTTP/1.0 client, no length)
 * ends in a reset, which a FIN would not be; otherwise the head goes out (node holds it back
 * until the first body byte) and the connection closes with the body short.
 */
function cutResponse(res: ServerResponse, upstream: IncomingMessage): void {
  const socket = res.socket;
  if (socket !== null && !res.chunkedEncoding && upstream.headers['content-length'] === undefined) {
    socket.resetAndDestroy();
    return;
  }
  if (!res.destroyed) res.flushHeaders();
  res.destroy();
}

/** node:http's answer to a request its parser refuses, by the error's code. */
export function clientErrorAnswer(code: string | undefined): string {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
    default:
      return BAD_REQUEST;
  }
}

function upstreamHeaders(np: NodePathEnv, live: Live, body: BodyPrefix): string[] {
  const h = live.headers;
  const framing: string[] = [];
  if (live.exchange.decision?.effect.type === 'dry_run') framing.push(DRY_RUN_HEADER, '1');
  if (body.complete) {
    // The body is already here in full: no 100-continue dance, and an exact length.
    if (body.bytes > 0 || h.contentLength !== undefined) framing.push('content-length', String(body.bytes));
  } else {
    if (h.contentLength !== undefined) framing.push('content-length', h.contentLength);
    if (h.expect !== undefined) framing.push('expect', h.expect);
  }
  return np.book.forwardedHeaders(h, live.req.socket.remoteAddress, framing);
}

function sendUpstream(np: NodePathEnv, live: Live, body: BodyPrefix): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let answer: IncomingMessage | undefined;
    const upstream = np.send(
      {
        protocol: np.target.protocol,
        hostname: np.targetHost,
        ...(np.targetPort === undefined ? {} : { port: np.targetPort }),
        method: live.method,
        path: np.basePath + live.path,
        headers: upstreamHeaders(np, live, body),
        setHost: false,
        agent: np.agent,
      },
      (response) => {
        done();
        if (response.statusCode === 101) {
          // No Upgrade is forwarded, so no request asked for it: a 502, as on the fast path, and
          // the socket, which speaks another protocol now, is not used again.
          upstream.destroy();
          reject(unexpectedUpgrade());
          return;
        }
        answer = response;
        resolve(response);
      },
    );
    const done = whileWaiting(live, () => upstream.destroy(new Error('the client went away')));
    upstream.on('error', (error) => {
      if (answer !== undefined) {
        // Emitted before the answer's 'end' (a reset) or its 'aborted' (a broken chunk).
        if (!answer.readableEnded) live.brokeOff ??= error;
        return;
      }
      done();
      reject(error);
    });
    // A 101 with an Upgrade header: without this listener node's client closes the socket and
    // says nothing, and the request would wait for ever.
    upstream.once('upgrade', (_response: IncomingMessage, socket: Socket) => {
      socket.destroy();
      done();
      reject(unexpectedUpgrade());
    });
    if (body.complete) {
      // One end() call: headers and body leave in a single write.
      upstream.end(bodyBuffer(body));
    } else {
      for (const chunk of body.chunks) upstream.write(chunk);
      live.req.pipe(upstream);
    }
  });
}

async function wait(np: NodePathEnv, live: Live, ms: number): Promise<boolean> {
  if (live.gone) return false;
  // Only holds and delays get here, so only they pay for an AbortSignal.
  const controller = new AbortController();
  const done = whileWaiting(live, () => controller.abort(new Error('the request is gone')));
  try {
    await np.clock.sleep(ms, controller.signal);
    return true;
  } catch {
    return false;
  } finally {
    done();
  }
}

/** A refused or unresolved upstream, real or injected, as a gateway answers it (see gateway-answer.ts). */
export function gatewayReply(code: string, message: string, faultKind?: string): { headers: Record<string, string>; body: string } {
  const answer = gatewayAnswer(code, message, faultKind);
  return { headers: { ...JSON_HEADERS, ...answer.headers }, body: JSON.stringify(answer.body) };
}

async function reply(live: Live, status: number, headers: OutgoingHttpHeaders, body: string | Buffer): Promise<ExchangeOutcome> {
  if (live.gone || live.res.destroyed) return { kind: 'gave_up' };
  const bytes = Buffer.byteLength(body);
  live.res.writeHead(status, { ...headers, 'content-length': bytes });
  live.res.end(body);
  await responseClosed(live);
  const text = typeof body === 'string' ? body : body.toString('utf8');
  return { kind: 'response', status, headers, body: bytes === 0 ? undefined : text, bodyBytes: bytes, ...(live.res.writableFinished ? {} : { cut: true }) };
}

function reset(live: Live): ExchangeOutcome {
  if (live.gone) return { kind: 'gave_up' };
  // An RST rather than a FIN: clients report ECONNRESET (undici: UND_ERR_SOCKET), as when a server dies mid-request.
  live.res.socket?.resetAndDestroy();
  return { kind: 'reset' };
}

async function gatewayError(live: Live, code: string, message: string, faultKind?: string): Promise<ExchangeOutcome> {
  const { headers, body } = gatewayReply(code, message, faultKind);
  const outcome = await reply(live, 502, headers, body);
  return outcome.kind === 'response' ? { ...outcome, errno: code } : outcome;
}

/**
 * Sends the request on and waits for the upstream to finish, discarding its answer: the write
 * happens, the client gets the fault. A fault after the write only follows a write that landed:
 * when the upstream refuses it (an error status, or no connection) its answer goes to the client
 * as it came, with no fault in the record, and that outcome is returned.
 */
async function forwardAndDrain(np: NodePathEnv, live: Live): Promise<ExchangeOutcome | undefined> {
  let upstream: IncomingMessage;
  try {
    upstream = await sendUpstream(np, live, live.body);
  } catch (error) {
    live.exchange.faultApplied = false;
    return upstreamFailed(np, live, error);
  }
  const status = upstream.statusCode ?? 502;
  live.exchange.upstreamStatus = status;
  if (status < 200 || status >= 300) {
    live.exchange.faultApplied = false;
    return streamBack(np, live, upstream);
  }
  try {
    const done = whileWaiting(live, () => upstream.destroy());
    upstream.resume();
    try {
      await finished(upstream);
    } finally {
      done();
    }
    if (live.brokeOff !== undefined) throw live.brokeOff;
  } catch (error) {
    if (!live.gone) live.exchange.upstreamError = errorCode(live.brokeOff ?? error);
  }
  return undefined;
}

async function upstreamFailed(np: NodePathEnv, live: Live, error: unknown): Promise<ExchangeOutcome> {
  if (live.gone) return { kind: 'gave_up' };
  const code = errorCode(error);
  live.exchange.upstreamError = code;
  return gatewayError(live, code, `upstream ${np.target.host}: ${errorMessage(error)}`);
}

/** Relays the upstream's answer to the client, keeping a prefix (or, when a stale rule needs it, all) for the record. */
async function streamBack(np: NodePathEnv, live: Live, upstream: IncomingMessage, already: readonly Buffer[] = []): Promise<ExchangeOutcome> {
  const status = upstream.statusCode ?? 502;
  if (live.gone) {
    upstream.destroy();
    return { kind: 'gave_up' };
  }
  const { exchange } = live;
  // A stale fault records what it replaces itself; every other real answer may be replayed later.
  const observe = exchange.decision?.kind !== 'stale' && np.book.watchesOutputs(exchange.toolName);
  const capture = new BodyCapture(observe ? np.maxRewriteBytes : np.captureBytes);
  live.res.writeHead(status, forwardableResponseHeaders(upstream.rawHeaders));
  for (const chunk of already) {
    capture.add(chunk);
    live.res.write(chunk);
  }
  const error = await relay(live, upstream, capture);
  // The record reads a few of these (content type, Retry-After); node builds the object on first use.
  const headers = upstream.headers;
  if (error !== undefined) {
    if (live.gone) return { kind: 'response', status, headers, body: capture.text(), bodyBytes: capture.bytes, cut: true };
    exchange.upstreamError = errorCode(error);
    return { kind: 'broken', code: errorCode(error), message: `the upstream response broke off: ${errorMessage(error)}`, status, headers, body: capture.text(), bodyBytes: capture.bytes };
  }
  const text = capture.text();
  if (observe && capture.complete && status >= 200 && status < 300 && text !== undefined) {
    const parsed = parseJson(text);
    if (parsed !== undefined) np.plan.observe({ toolName: exchange.toolName, args: np.book.argsOf(live), output: parsed.value, now: np.clock.now() });
  }
  return { kind: 'response', status, headers, body: text, bodyBytes: capture.bytes };
}

async function passThrough(np: NodePathEnv, live: Live): Promise<ExchangeOutcome> {
  let upstream: IncomingMessage;
  try {
    upstream = await sendUpstream(np, live, live.body);
  } catch (error) {
    return upstreamFailed(np, live, error);
  }
  live.exchange.upstreamStatus = upstream.statusCode ?? null;
  return streamBack(np, live, upstream);
}

/** Buffers the upstream's body, applies a malformed or rewrite effect to a 2xx JSON answer, and sends it with its new length. */
async function rewriteThrough(np: NodePathEnv, live: Live, effect: Extract<FaultEffect, { type: 'malformed' | 'rewrite' }>): Promise<ExchangeOutcome> {
  const { exchange } = live;
  let upstream: IncomingMessage;
  try {
    upstream = await sendUpstream(np, live, live.body);
  } catch (error) {
    exchange.faultApplied = false;
    return upstreamFailed(np, live, error);
  }
  const status = upstream.statusCode ?? 502;
  exchange.upstreamStatus = status;
  const chunks: Buffer[] = [];
  let bytes = 0;
  const complete = await new Promise<boolean | Error>((resolve) => {
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > np.maxRewriteBytes) {
        upstream.off('data', onData);
        upstream.pause();
        resolve(false);
      }
    };
    upstream.on('data', onData);
    upstream.once('end', () => resolve(live.brokeOff ?? true));
    upstream.once('error', (error) => resolve(live.brokeOff ?? error));
  });
  if (complete instanceof Error) {
    exchange.faultApplied = false;
    return upstreamFailed(np, live, complete);
  }
  if (!complete) {
    exchange.faultApplied = false;
    return streamBack(np, live, upstream, chunks);
  }
  const raw = Buffer.concat(chunks);
  const headers = responseHeaderObject(upstream.rawHeaders);
  if (status < 200 || status >= 300) {
    // An error answer carries no result to corrupt: it goes to the client as it came.
    exchange.faultApplied = false;
    return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
  }
  const text = raw.toString('utf8');
  const parsed = parseJson(text);
  if (parsed !== undefined && exchange.decision?.kind !== 'stale' && np.book.watchesOutputs(exchange.toolName)) {
    np.plan.observe({ toolName: exchange.toolName, args: np.book.argsOf(live), output: parsed.value, now: np.clock.now() });
  }
  if (effect.type === 'malformed') {
    return reply(live, status, withoutHeaders(headers, BODY_HEADERS), effect.render(parsed === undefined ? text : parsed.value));
  }
  if (parsed === undefined) {
    exchange.faultApplied = false;
    return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
  }
  const rewritten = JSON.stringify(effect.rewrite(parsed.value)) ?? 'null';
  return reply(live, status, { ...withoutHeaders(headers, BODY_HEADERS), 'content-type': 'application/json; charset=utf-8' }, rewritten);
}

async function refuse(live: Live, status: number, code: string, message: string): Promise<ExchangeOutcome> {
  const body = { error: { type: 'schema_mismatch', code, message } };
  const outcome = await reply(live, status, JSON_HEADERS, JSON.stringify(body));
  return outcome.kind === 'response' ? { kind: 'refused', status, code, message, body } : outcome;
}

async function applyDecision(np: NodePathEnv, live: Live, d: FaultDecision): Promise<ExchangeOutcome> {
  if (d.delayMs > 0 && !(await wait(np, live, d.delayMs))) return { kind: 'gave_up' };
  const effect = d.effect;
  // commit_then_drop is a timeout effect that forwards first: the write lands upstream, and the
  // client is held with no answer until it gives up (or gets the 504 at np.holdCapMs), as a hang.
  switch (effect.type) {
    case 'pass':
      return passThrough(np, live);
    case 'respond':
      if (d.forward) {
        const refused = await forwardAndDrain(np, live);
        if (refused !== undefined) return refused;
      }
      return reply(live, effect.status, effect.headers, JSON.stringify(effect.body ?? null));
    case 'drop':
      if (d.forward) {
        const refused = await forwardAndDrain(np, live);
        if (refused !== undefined) return refused;
      }
      if (effect.code === 'ECONNRESET') return reset(live);
      return gatewayError(live, effect.code, droppedConnectionMessage(effect.code, np.target.host, np.targetHost), d.kind);
    case 'timeout': {
      if (d.forward) {
        const refused = await forwardAndDrain(np, live);
        if (refused !== undefined) return refused;
      }
      const waitMs = effect.afterMs ?? np.holdCapMs;
      if (!(await wait(np, live, waitMs))) return { kind: 'gave_up' };
      const body = { error: { type: 'timeout', code: 'HTTP_504', message: `Gateway Timeout: ${live.exchange.toolName} did not answer within ${waitMs} ms` } };
      return reply(live, 504, JSON_HEADERS, JSON.stringify(body));
    }
    case 'malformed':
    case 'rewrite':
      return rewriteThrough(np, live, effect);
    case 'dry_run':
      // The upstream's own answer, to a request marked as a dry run (upstreamHeaders adds the
      // marker); an error answer goes out as it came, and is no fault.
      return passThrough(np, live).then((outcome) => {
        const status = live.exchange.upstreamStatus;
        if (status === null || status < 200 || status >= 300) live.exchange.faultApplied = false;
        return outcome;
      });
  }
}

async function serve(np: NodePathEnv, live: Live): Promise<ExchangeOutcome> {
  const { req, exchange, headers } = live;
  // A body with no Content-Length is chunked (llhttp refuses both): chunked must be its only
  // coding, as the proxy decodes no other and would pass the rest on as plain bytes (RFC 9112
  // section 6.1: 501). Chunked comes last (llhttp refuses it elsewhere), so the body's end is
  // known: it is read and dropped, and the connection serves the next request.
  const coding = headers.hasBody && headers.contentLength === undefined ? undecodedTransferCoding(req.rawHeaders) : undefined;
  if (coding !== undefined) {
    return refuse(live, 501, 'UNSUPPORTED_TRANSFER_CODING', `the proxy decodes no transfer coding but chunked, and the request body is sent with ${JSON.stringify(coding)}`);
  }
  if (headers.hasBody) {
    try {
      live.body = await readBodyPrefix(req, np.maxArgsBytes);
    } catch {
      // A body node:http's parser refused was answered 400 (clientError below), as the fast path answers and records it.
      if (live.parseError !== undefined) return { kind: 'refused', status: 400, code: live.parseError, message: 'the request body breaks the chunked framing', body: undefined };
      return { kind: 'gave_up' };
    }
  }

  const inject = headers.inject;
  if (inject !== undefined && inject.trim() !== '') {
    const parsed = parseInjectHeader(inject, headers.commit);
    if (!parsed.ok) return refuse(live, 400, 'INVALID_INJECTION', parsed.message);
    exchange.decision = parsed.decision;
  } else {
    // The plan counts every call, but reads the arguments only of tools it has rules for.
    const args = np.book.planLooksAt(exchange.toolName) ? np.book.argsOf(live) : undefined;
    exchange.decision = np.plan.decide({ toolName: exchange.toolName, args, now: np.clock.now(), transport: 'http' });
  }
  if (exchange.decision === undefined) return passThrough(np, live);
  np.book.counters.injected++;
  return applyDecision(np, live, exchange.decision);
}

export async function handleOnNodePath(np: NodePathEnv, req: IncomingMessage, res: ServerResponse, path: string, headers: RequestHeaders): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const live: Live = Object.assign(np.book.open(method, path, headers, np.routes.resolve(method, pathOnly(path))), {
    req,
    res,
    gone: false,
    closed: false,
    onGone: undefined,
    onClosed: undefined,
    method,
    path,
    parseError: undefined,
    brokeOff: undefined,
  });
  let outcome: ExchangeOutcome = { kind: 'gave_up' };
  try {
    np.inFlight.add(live);
    res.once('close', () => {
      live.closed = true;
      if (!res.writableFinished) markGone(live);
      live.onClosed?.();
    });
    try {
      outcome = await serve(np, live);
    } catch (error) {
      live.exchange.details['proxy_error'] = errorMessage(error);
      outcome = res.headersSent ? { kind: 'reset' } : await gatewayError(live, 'PROXY_ERROR', `faultline proxy error: ${errorMessage(error)}`);
      if (!res.writableFinished) res.destroy();
    } finally {
      np.inFlight.delete(live);
    }
    // A body left unread (answered without forwarding it) would stall the next request on this connection.
    if (headers.hasBody && !req.readableEnded && !req.destroyed) req.resume();
  } finally {
    np.book.close(live, outcome, np.closing);
  }
}
