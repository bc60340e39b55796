/**
 * A JSON-RPC error the proxy sends downstream, either relayed from the upstream server or made up
 * by a fault. The SDK's Server turns any thrown value with a numeric `code` into an error
 * response carrying `code`, `message` and `data` verbatim.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * Not an McpError on purpose: McpError prefixes its message with `MCP error <code>: `, and the
 * client's SDK adds that prefix again when it reads the response.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

/** The message as the peer sent it, without the prefix the SDK's McpError adds. */
function wireMessage(error: McpError): string {
  const prefix = `MCP error ${error.code}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/**
 * What the downstream client gets when forwarding a request upstream failed: the upstream's own
 * JSON-RPC error as it was, or -32603 for anything that is not one (a result that did not parse,
 * an upstream that is gone).
 */
export function relayedError(error: unknown): JsonRpcError {
  if (error instanceof McpError) return new JsonRpcError(error.code, wireMessage(error), error.data);
  if (error instanceof JsonRpcError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new JsonRpcError(ErrorCode.InternalError, `upstream request failed: ${message}`);
}
