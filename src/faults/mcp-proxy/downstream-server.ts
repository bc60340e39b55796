/**
 * The SDK Server one downstream client talks to: it describes the server as that client's own
 * upstream connection was told, sends tools/call through the fault plan (tool-call.ts), and
 * relays every other request upstream as it came. See proxy.ts for what passes through.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  ResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolRequest,
  type ClientRequest,
  type Implementation,
  type ServerCapabilities,
  type ServerResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../../core/clock.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { FaultPlan } from '../plan.js';
import type { RecordShaping } from './call-record.js';
import type { ClientRequestRelay } from './client-requests.js';
import { relayedError } from './rpc-error.js';
import { proxyToolCall, type CallSession, type HandlerExtra, type ToolCallDeps } from './tool-call.js';
import type { UpstreamLink } from './upstream-link.js';
import { lostBeforeCall, lostDuringCall, lostRequestError, UpstreamLostError } from './upstream-loss.js';

/** One downstream client. */
export interface Session extends CallSession {
  link: UpstreamLink | undefined;
  server: Server | undefined;
  relay: ClientRequestRelay | undefined;
  /** Resolves once the client has said it is initialized: what the server sends it waits for that. */
  ready: Promise<Server>;
  markReady(server: Server): void;
  /** Its tools/call requests in flight. */
  inflight: Set<Promise<unknown>>;
  closed: boolean;
  /** Closes its downstream connection (initialized or not). */
  close(): Promise<void>;
}

/** Any request's params, as far as progress relaying reads them. */
export type ParamsWithMeta = { _meta?: { progressToken?: string | number | undefined } | undefined } | undefined;

/** Only what the proxy relays: not `tasks`, since a task-augmented tools/call would bypass the fault plan. */
export function mirroredCapabilities(upstream: ServerCapabilities | undefined): ServerCapabilities {
  const caps: ServerCapabilities = {};
  if (upstream?.tools !== undefined) caps.tools = upstream.tools;
  if (upstream?.resources !== undefined) caps.resources = upstream.resources;
  if (upstream?.prompts !== undefined) caps.prompts = upstream.prompts;
  if (upstream?.logging !== undefined) caps.logging = upstream.logging;
  if (upstream?.completions !== undefined) caps.completions = upstream.completions;
  if (upstream?.experimental !== undefined) caps.experimental = upstream.experimental;
  return caps;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What every client's server reads from the proxy. */
export interface DownstreamScope {
  plan: FaultPlan;
  clock: Clock;
  log: (line: string) => void;
  upstreamTimeoutMs: number;
  shaping: RecordShaping;
  emit: (record: ToolExecutionRecord) => Promise<void> | undefined;
  /** What the server said it is at the start-up handshake, for a connection that says nothing. */
  serverInfo: Implementation;
  route: ((request: CallToolRequest) => { plan: FaultPlan; clock: Clock; session: CallSession } | undefined) | undefined;
  counters: { calls: number };
}

function requestOptions(scope: DownstreamScope, params: ParamsWithMeta, extra: HandlerExtra): RequestOptions {
  const token = params?._meta?.progressToken;
  return {
    signal: extra.signal,
    timeout: scope.upstreamTimeoutMs,
    resetTimeoutOnProgress: true,
    ...(token === undefined
      ? {}
      : {
          onprogress: (progress) => {
            extra
              .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
              .catch((error: unknown) => scope.log(`relaying progress failed: ${errorText(error)}`));
          },
        }),
  };
}

/** Sends a client's request upstream as it is and hands back the answer, or the upstream's error. */
async function relay<T>(scope: DownstreamScope, session: Session, link: UpstreamLink, send: (c: Client, options: RequestOptions) => Promise<T>, params: ParamsWithMeta, extra: HandlerExtra): Promise<T> {
  if (link.loss !== undefined) throw lostRequestError(link.loss);
  const options = requestOptions(scope, params, extra);
  const work = link.send((c) => send(c, options), lostRequestError);
  try {
    return await (session.relay === undefined ? work : session.relay.track(extra.requestId, work));
  } catch (error) {
    throw relayedError(error);
  }
}

function toolCallDeps(scope: DownstreamScope, link: UpstreamLink): ToolCallDeps {
  return {
    plan: scope.plan,
    clock: scope.clock,
    catalog: link.catalog,
    forward: async (params, extra) => {
      if (link.loss !== undefined) throw new UpstreamLostError(lostBeforeCall(link.loss));
      const options = requestOptions(scope, params, extra);
      return link.send((c) => c.request({ method: 'tools/call', params }, CallToolResultSchema, options), (lost) => new UpstreamLostError(lostDuringCall(lost)));
    },
    upstreamGone: () => link.loss !== undefined,
    shaping: scope.shaping,
    emit: scope.emit,
    log: scope.log,
  };
}

/** The SDK Server a client talks to, describing the server as its own connection was told. */
export function serverFor(scope: DownstreamScope, session: Session, link: UpstreamLink): Server {
  const caps = mirroredCapabilities(link.serverCapabilities);
  const linkInstructions = link.instructions;
  const server = new Server(link.serverInfo ?? scope.serverInfo, { capabilities: caps, ...(linkInstructions === undefined ? {} : { instructions: linkInstructions }) });
  const deps = toolCallDeps(scope, link);
  const pass = <T>(send: (c: Client, o: RequestOptions) => Promise<T>, params: ParamsWithMeta, extra: HandlerExtra) => relay(scope, session, link, send, params, extra);

  if (caps.tools !== undefined) {
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      // A later page would not line up with pages the upstream cut, so only a first page is served from memory.
      if (link.loss !== undefined && request.params?.cursor === undefined) return { tools: link.catalog.snapshot() };
      const result = await pass((c, o) => c.request(request, ListToolsResultSchema, o), request.params, extra);
      // A complete list seen in passing saves the catalog a request of its own.
      if (request.params?.cursor === undefined && result.nextCursor === undefined) link.catalog.replace(result.tools);
      return result;
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      scope.counters.calls++;
      const routed = scope.route?.(request);
      const work = routed === undefined ? proxyToolCall(deps, session, request, extra) : proxyToolCall({ ...deps, plan: routed.plan, clock: routed.clock }, routed.session, request, extra);
      const call = session.relay === undefined ? work : session.relay.track(extra.requestId, work);
      session.inflight.add(call);
      const done = () => session.inflight.delete(call);
      call.then(done, done);
      return call as Promise<ServerResult>;
    });
  }
  if (caps.resources !== undefined) {
    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => pass((c, o) => c.request(request, ListResourcesResultSchema, o), request.params, extra));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) => pass((c, o) => c.request(request, ListResourceTemplatesResultSchema, o), request.params, extra));
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => pass((c, o) => c.request(request, ReadResourceResultSchema, o), request.params, extra));
    if (caps.resources.subscribe === true) {
      server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
        const result = await pass((c, o) => c.request(request, EmptyResultSchema, o), request.params, extra);
        link.subscribed(request.params.uri);
        return result;
      });
      server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
        const result = await pass((c, o) => c.request(request, EmptyResultSchema, o), request.params, extra);
        link.unsubscribed(request.params.uri);
        return result;
      });
    }
  }
  if (caps.prompts !== undefined) {
    server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => pass((c, o) => c.request(request, ListPromptsResultSchema, o), request.params, extra));
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) => pass((c, o) => c.request(request, GetPromptResultSchema, o), request.params, extra));
  }
  if (caps.completions !== undefined) {
    server.setRequestHandler(CompleteRequestSchema, (request, extra) => pass((c, o) => c.request(request, CompleteResultSchema, o), request.params, extra));
  }
  if (caps.logging !== undefined) {
    // Replaces the SDK's local handler: the level is the server's to apply.
    server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
      const result = await pass((c, o) => c.request(request, EmptyResultSchema, o), request.params, extra);
      link.levelSet(request.params.level);
      return result;
    });
  }
  // Any other request or notification of the client's goes upstream as it came (roots changed,
  // experimental methods, methods to come); the server answers as it would straight.
  server.fallbackRequestHandler = (request, extra) =>
    pass((c, o) => c.request({ method: request.method, ...(request.params === undefined ? {} : { params: request.params }) } as ClientRequest, ResultSchema, o), request.params as ParamsWithMeta, extra) as Promise<ServerResult>;
  server.fallbackNotificationHandler = async (notification) => link.notify(notification);
  server.oninitialized = () => session.markReady(server);
  server.onerror = (error) => scope.log(`downstream: ${error.message}`);
  return server;
}
