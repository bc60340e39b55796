/**
 * The mock tool catalog over plain HTTP (node:http), failing the way real APIs fail: typed tool
 * errors become real statuses with JSON bodies and Retry-After, and faults (per request through
 * `X-Inject-Error`, or from a fault plan) become statuses, reset sockets, requests that never
 * answer and rewritten bodies, on a real socket, so the client's own HTTP stack sees them.
 *
 *   GET  /tools          the tools: name, description, inputSchema, annotations
 *   GET  /tools/<name>   one tool
 *   POST /tools/<name>   runs it with the JSON body as arguments (headers: Idempotency-Key, X-Trace-Id,
 *                        X-Inject-Error, X-Inject-Commit, X-Faultline-Dry-Run; query: timeout_cap_ms)
 *   GET  /state          the catalog state (for checkers)
 *   GET  /faults         the faults injected so far (ground truth)
 *   GET  /health
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultDecision } from '../faults/decision.js';
import { droppedConnectionMessage, gatewayAnswer } from '../faults/gateway-answer.js';
import type { FaultPlan } from '../faults/plan.js';
import type { InjectedFault } from '../core/record-types.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { Tool, ToolContext } from '../runtime/define-tool.js';
import { closestNames } from '../runtime/suggest.js';
import { describeIssues, failureTypeOf } from '../runtime/validate.js';
import { anchoredClock } from './anchored-clock.js';
import type { ToolCatalog } from './catalog.js';
import { errorReply, invalidArgumentsReply, type HttpReply } from './http-error-response.js';
import { COMMIT_HEADER, INJECT_HEADER, parseInjectHeader } from '../faults/inject-error.js';
import { DRY_RUN_HEADER } from '../faults/dry-run.js';
import { idempotencyHeaderIssue } from './idempotency-keys.js';
import { hostAllowed, hostAllowlist, refusedHostMessage } from '../net/host-allowlist.js';
import { listen } from '../net/listen.js';

/**
 * What the server needs from a fault plan (`createFaultPlan`): a decision per request, and,
 * when offered, the outputs it served, which `stale` faults replay later.
 */
export type FaultDecider = Pick<FaultPlan, 'decide'> & Partial<Pick<FaultPlan, 'observe'>>;

export interface MockToolServerOptions {
  catalog: ToolCatalog;
  /** Default 0: any free port (read it from `url`). */
  port?: number;
  /** Default 127.0.0.1: nothing outside this machine can reach the server unless asked. */
  host?: string;
  /**
   * Host names besides the loopback ones that requests may carry while bound to loopback (a
   * proxy that fronts it deliberately); other names are refused 403, against DNS rebinding
   * (host-allowlist.ts). Default: none.
   */
  allowedHosts?: readonly string[];
  /**
   * Faults for requests without an X-Inject-Error header. A request with the header is not
   * shown to the plan at all, so it does not count towards the plan's triggers either.
   */
  plan?: FaultDecider;
  /** The tools' clock. Default: starts at the catalog's anchor and runs in real time. */
  clock?: Clock;
  /** Waits on the wire (slow responses, held requests). Default real time: the client's timers are real. */
  wireClock?: Clock;
  /** How long a `timeout` fault holds a request before answering 504 itself. Default 30 s. */
  timeoutCapMs?: number;
  /** Largest request body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
}

export interface InjectedFaultEntry {
  /** On the tools' clock. */
  at: string;
  tool: string;
  source: 'header' | 'plan';
  fault: InjectedFault;
}

export interface MockToolServer {
  /** e.g. `http://127.0.0.1:40123` */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** Faults applied so far, oldest first. */
  readonly injected: readonly InjectedFaultEntry[];
  /** Stops listening, drops open connections (held requests included) and resolves when closed. Safe to call twice. */
  close(): Promise<void>;
}

export const DEFAULT_TIMEOUT_CAP_MS = 30_000;
const MAX_TIMEOUT_CAP_MS = 600_000;

class RequestError extends Error {
  constructor(readonly reply: HttpReply) {
    super('request error');
  }
}

function problem(status: number, type: string, code: string, message: string, extra: Record<string, unknown> = {}): HttpReply {
  return { status, headers: {}, body: { error: { type, code, message, ...extra } } };
}

function firstHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new RequestError(problem(413, 'boundary_violation', 'BODY_TOO_LARGE', `request body exceeds ${limit} bytes`)));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function send(res: ServerResponse, reply: HttpReply, rawText?: string): void {
  if (res.headersSent || res.destroyed) return;
  const text = rawText ?? JSON.stringify(reply.body ?? null);
  res.writeHead(reply.status, { ...reply.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function describeTool(tool: Tool): Record<string, unknown> {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    annotations: tool.annotations ?? {},
    idempotent: tool.idempotent,
    idempotencyKey: tool.idempotencyKey,
  };
}

/**
 * Starts serving a catalog.
 *
 * @example
 * const server = await startMockToolServer({ catalog: createToolCatalog({ seed: 1 }), port: 0 });
 * const res = await fetch(`${server.url}/tools/get_weather`, {
 *   method: 'POST', headers: { 'x-inject-error': '429' }, body: JSON.stringify({ city: 'Shanghai' }),
 * }); // 429, Retry-After: 2
 * await server.close();
 */
export async function startMockToolServer(options: MockToolServerOptions): Promise<MockToolServer> {
  const { catalog } = options;
  const host = options.host ?? '127.0.0.1';
  const allowedHosts = hostAllowlist(host, options.allowedHosts);
  const clock = options.clock ?? anchoredClock(Date.parse(catalog.state.anchor));
  const wireClock = options.wireClock ?? systemClock;
  const timeoutCapMs = options.timeoutCapMs ?? DEFAULT_TIMEOUT_CAP_MS;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const tools = new Map(catalog.tools.map((t) => [t.name, t]));
  const injected: InjectedFaultEntry[] = [];
  const lifetime = new AbortController();
  let requests = 0;

  /** `dryRun`: a lost_write this server decided; a request the fault proxy marked is one too. */
  async function runTool(tool: Tool, args: unknown, req: IncomingMessage, signal: AbortSignal, n: number, dryRun = false): Promise<HttpReply> {
    const validated = tool.validateInput(args);
    if (!validated.ok) return invalidArgumentsReply(tool.name, failureTypeOf(validated.issues), describeIssues(validated.issues), validated.issues);
    const headerKey = firstHeader(req, 'idempotency-key');
    const keyIssue = headerKey === undefined || !tool.idempotencyKey ? undefined : idempotencyHeaderIssue(headerKey);
    if (keyIssue !== undefined) return invalidArgumentsReply(tool.name, keyIssue.code, keyIssue.message, [keyIssue]);
    const ctx: ToolContext = {
      signal,
      attempt: 0,
      // Without a header every request gets its own key: nothing is deduplicated unless the client asks.
      idempotencyKey: headerKey ?? `http-request-${n}`,
      traceId: firstHeader(req, 'x-trace-id') ?? `http-${n}`,
      toolName: tool.name,
      clock,
      ...(dryRun || firstHeader(req, DRY_RUN_HEADER) === '1' ? { dryRun: true } : {}),
    };
    try {
      const output = await tool.execute(validated.value, ctx);
      return { status: 200, headers: {}, body: output ?? null };
    } catch (error) {
      return errorReply(error, clock.now());
    }
  }

  /** Sleeps on the wire clock; false when the client or the server went away first. */
  async function hold(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await wireClock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  async function callTool(tool: Tool, req: IncomingMessage, res: ServerResponse, url: URL, signal: AbortSignal): Promise<void> {
    const n = ++requests;
    const text = await readBody(req, maxBodyBytes);
    let args: unknown = {};
    if (text.trim() !== '') {
      try {
        args = JSON.parse(text);
      } catch (error) {
        throw new RequestError(problem(400, 'schema_mismatch', 'INVALID_JSON', `the request body is not valid JSON: ${(error as Error).message}`));
      }
    }
    if (!isPlainObject(args)) throw new RequestError(problem(400, 'type_mismatch', 'INVALID_ARGUMENTS', 'the request body must be a JSON object of arguments'));

    let capMs = timeoutCapMs;
    const capParam = url.searchParams.get('timeout_cap_ms');
    if (capParam !== null) {
      capMs = Number(capParam);
      if (!Number.isInteger(capMs) || capMs < 0 || capMs > MAX_TIMEOUT_CAP_MS) {
        throw new RequestError(problem(400, 'boundary_violation', 'INVALID_TIMEOUT_CAP', `timeout_cap_ms must be an integer 0-${MAX_TIMEOUT_CAP_MS}`));
      }
    }

    let decision: FaultDecision | undefined;
    let source: InjectedFaultEntry['source'] = 'header';
    const header = firstHeader(req, INJECT_HEADER);
    if (header !== undefined && header.trim() !== '') {
      const parsed = parseInjectHeader(header, firstHeader(req, COMMIT_HEADER));
      if (!parsed.ok) throw new RequestError(problem(400, 'schema_mismatch', 'INVALID_INJECTION', parsed.message));
      decision = parsed.decision;
    } else if (options.plan !== undefined) {
      decision = options.plan.decide({ toolName: tool.name, args, now: clock.now(), transport: 'http' });
      source = 'plan';
    }
    const observe = (reply: HttpReply) => {
      if (reply.status >= 200 && reply.status < 300) options.plan?.observe?.({ toolName: tool.name, args, output: reply.body, now: clock.now() });
    };
    if (decision === undefined) {
      const reply = await runTool(tool, args, req, signal, n);
      observe(reply);
      send(res, reply);
      return;
    }

    const entry: InjectedFaultEntry = { at: new Date(clock.now()).toISOString(), tool: tool.name, source, fault: decision.fault };
    injected.push(entry);
    if (decision.delayMs > 0 && !(await hold(decision.delayMs, signal))) return;
    const effect = decision.effect;
    const needsOutput = decision.forward || effect.type === 'pass' || effect.type === 'malformed' || effect.type === 'rewrite' || effect.type === 'dry_run';
    const reply = needsOutput ? await runTool(tool, args, req, signal, n, effect.type === 'dry_run') : undefined;
    // A stale fault records the fresh output itself, as what it will serve next time.
    if (reply !== undefined && decision.kind !== 'stale') observe(reply);
    if (reply !== undefined && (reply.status < 200 || reply.status >= 300) && effect.type !== 'pass') {
      // A failure has no result to corrupt, and a fault after the write (commit_then_drop, commit:
      // true) follows only a write that landed: it goes out as it is, and /faults, being ground
      // truth, does not list it.
      injected.splice(injected.indexOf(entry), 1);
      send(res, reply);
      return;
    }
    switch (effect.type) {
      case 'pass':
      case 'dry_run':
        send(res, reply!);
        return;
      case 'respond':
        send(res, { status: effect.status, headers: effect.headers, body: effect.body });
        return;
      case 'drop': {
        if (effect.code === 'ECONNRESET') {
          // An RST, which clients report as ECONNRESET.
          res.socket?.resetAndDestroy();
          return;
        }
        // An accepted connection cannot be refused or unresolved after the fact: the 502 a gateway
        // sends for its upstream, as the HTTP proxy sends it.
        const host = req.headers.host ?? 'mock-tools';
        const answer = gatewayAnswer(effect.code, droppedConnectionMessage(effect.code, host, host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')), decision.kind);
        send(res, answer);
        return;
      }
      case 'timeout': {
        const waitMs = Math.min(effect.afterMs ?? capMs, capMs);
        if (!(await hold(waitMs, signal))) return;
        send(res, problem(504, 'timeout', 'HTTP_504', `Gateway Timeout: ${tool.name} did not answer within ${waitMs} ms`));
        return;
      }
      case 'malformed':
      case 'rewrite':
        if (effect.type === 'malformed') send(res, reply!, effect.render(reply!.body));
        else send(res, { ...reply!, body: effect.rewrite(reply!.body) });
        return;
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    // Before anything runs: a web page that rebound its name to 127.0.0.1 must not drive tool calls.
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      send(res, problem(403, 'forbidden', 'FORBIDDEN_HOST', refusedHostMessage(req.headers.host, 'mock tool server')));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://mock-tools.invalid');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const method = req.method ?? 'GET';
    const only = (allowed: string) => {
      if (method === allowed) return true;
      send(res, { ...problem(405, 'schema_mismatch', 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${allowed}`), headers: { allow: allowed } });
      return false;
    };
    if (path === '/tools') {
      if (only('GET')) send(res, { status: 200, headers: {}, body: { tools: catalog.tools.map(describeTool) } });
      return;
    }
    if (path.startsWith('/tools/')) {
      const name = decodeURIComponent(path.slice('/tools/'.length));
      const tool = tools.get(name);
      if (tool === undefined) {
        send(res, problem(404, 'unknown_tool', 'UNKNOWN_TOOL', `there is no tool named "${name}"`, { suggestions: closestNames(name, tools.keys()) }));
        return;
      }
      if (method === 'GET') send(res, { status: 200, headers: {}, body: describeTool(tool) });
      else if (only('POST')) await callTool(tool, req, res, url, signal);
      return;
    }
    if (path === '/state') {
      if (only('GET')) send(res, { status: 200, headers: {}, body: catalog.state.snapshot() });
      return;
    }
    if (path === '/faults') {
      if (only('GET')) send(res, { status: 200, headers: {}, body: { injected } });
      return;
    }
    if (path === '/health') {
      if (only('GET')) send(res, { status: 200, headers: {}, body: { ok: true, tools: tools.size } });
      return;
    }
    send(res, problem(404, 'not_found', 'NO_ROUTE', `no route ${method} ${path}; see GET /tools`));
  }

  const server: Server = createServer((req, res) => {
    const request = new AbortController();
    // 'close' before the response finished means the client gave up (or the socket was reset).
    res.on('close', () => {
      if (!res.writableFinished) request.abort(new Error('client closed the connection'));
    });
    const signal = AbortSignal.any([request.signal, lifetime.signal]);
    route(req, res, signal).catch((error: unknown) => {
      if (error instanceof RequestError) send(res, error.reply);
      else send(res, problem(500, 'runtime_error', 'INTERNAL', `mock tool server error: ${error instanceof Error ? error.message : String(error)}`));
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await listen(server, options.port ?? 0, host);
  const address = server.address() as AddressInfo;
  const urlHost = address.address.includes(':') ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    host: address.address,
    injected,
    close() {
      closing ??= new Promise<void>((resolve) => {
        lifetime.abort(new Error('server closing'));
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
