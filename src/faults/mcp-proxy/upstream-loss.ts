/**
 * What clients get once the upstream connection ends on its own (the server exited, or closed its
 * end). The proxy stays up for its clients, and each tools/call fails the way a call to a dead
 * server fails, in one of two forms:
 *
 * | when                                   | the MCP client sees                                     | the record                                          |
 * |----------------------------------------|---------------------------------------------------------|-----------------------------------------------------|
 * | the call was upstream when it ended    | -32000 Connection closed, data `{code: 'ECONNRESET', exit_code, signal}` | ECONNRESET network/connection_reset, ambiguous: it may have run |
 * | the call came after it ended           | -32000 Connection closed, data `{code: 'UPSTREAM_EXITED', exit_code, signal}` | UPSTREAM_EXITED system/dependency_down: nothing ran |
 *
 * An upstream that is not a child process (a transport the caller made) has no exit status: its
 * data carries the code alone, and calls after it are `UPSTREAM_CLOSED`.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../../runtime/tool-errors.js';
import { JsonRpcError } from './rpc-error.js';
import { describeExit, type UpstreamExit } from './upstream.js';

/** The upstream connection ended without the proxy closing it. */
export interface UpstreamLoss {
  /** Undefined when the upstream is not a child process. */
  exit: UpstreamExit | undefined;
  /** When the proxy saw it (clock time, ms). */
  at: number;
}

/** What a tools/call is answered with, and what its record classifies. */
export interface LossAnswer {
  error: JsonRpcError;
  classifyAs: unknown;
}

/** Carries a LossAnswer out of the forwarding function, which can only resolve or throw. */
export class UpstreamLostError extends Error {
  constructor(readonly answer: LossAnswer) {
    super(answer.error.message);
    this.name = 'UpstreamLostError';
  }
}

/** "exited with code 7", or "closed the connection" for an upstream without a process. */
export function describeLoss(loss: UpstreamLoss): string {
  return loss.exit === undefined ? 'closed the connection' : describeExit(loss.exit);
}

function details(loss: UpstreamLoss, code: string): Record<string, unknown> {
  return loss.exit === undefined ? { code } : { code, exit_code: loss.exit.code, signal: loss.exit.signal };
}

/** The SDK's answer to every request still waiting when its transport closed. */
export function isConnectionClosed(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
}

/** For a call that was upstream when the connection ended: it may or may not have run. */
export function lostDuringCall(loss: UpstreamLoss): LossAnswer {
  const message = `Connection closed: the upstream MCP server ${describeLoss(loss)} during the call`;
  const data = details(loss, 'ECONNRESET');
  return { error: new JsonRpcError(ErrorCode.ConnectionClosed, message, data), classifyAs: Object.assign(new Error(message), { code: 'ECONNRESET' }) };
}

/** For a call made after the connection ended: it was not sent, so nothing ran. */
export function lostBeforeCall(loss: UpstreamLoss): LossAnswer {
  const message = `Connection closed: the upstream MCP server ${describeLoss(loss)}; the call was not sent`;
  const code = loss.exit === undefined ? 'UPSTREAM_CLOSED' : 'UPSTREAM_EXITED';
  const data = details(loss, code);
  return { error: new JsonRpcError(ErrorCode.ConnectionClosed, message, data), classifyAs: new ToolError('system', 'dependency_down', message, { code, details: data }) };
}

/** For any other request (resources, prompts, ...): the same error, nothing to record. */
export function lostRequestError(loss: UpstreamLoss): JsonRpcError {
  return lostBeforeCall(loss).error;
}
