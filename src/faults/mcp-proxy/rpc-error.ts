/**
 * A JSON-RPC error the proxy sends downstream, either relayed from the upstream server or made up
 * by a fault. The SDK's Server turns any thrown value with a numeric `code` into an error
 * response carrying `code`, `message` and `data` verbatim.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { classifyError } from '../../runtime/classify.js';

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
 * The errno of a request that failed on its way to the upstream (a Streamable HTTP server that is
 * down: fetch rejects with the socket's code in `cause`), or undefined for any other failure.
 */
export function connectionErrno(error: unknown): string | undefined {
  if (error instanceof McpError || error instanceof JsonRpcError) return undefined;
  const classified = classifyError(error, Date.now());
  return classified.category === 'network' && /^[A-Z][A-Z0-9_]+$/.test(classified.code) ? classified.code : undefined;
}

/**
 * What the downstream client gets when forwarding a request upstream failed: the upstream's own
 * JSON-RPC error as it was; for a connection that failed (refused, reset, a name that does not
 * resolve), -32000 with the errno in `data`, the shape an injected drop has (fault-answers.ts);
 * or -32603 for anything else (a result that did not parse).
 */
export function relayedError(error: unknown): JsonRpcError {
  if (error instanceof McpError) return new JsonRpcError(error.code, wireMessage(error), error.data);
  if (error instanceof JsonRpcError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const errno = connectionErrno(error);
  if (errno !== undefined) return new JsonRpcError(ErrorCode.ConnectionClosed, `upstream connection failed: ${message} (${errno})`, { code: errno });
  return new JsonRpcError(ErrorCode.InternalError, `upstream request failed: ${message}`);
}
