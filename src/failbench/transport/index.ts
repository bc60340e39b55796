/**
 * How FailBench reaches the tools when not in process: `--transport http` (HTTP fault proxy in
 * front of the mock tool server) or `--transport mcp` (MCP fault proxy in front of an MCP server
 * over the same catalog). A host per suite; one wire per run, opened after its world and closed
 * with it.
 */
import { openHttpWire } from './http-wire.js';
import { createMcpHost } from './mcp-wire.js';
import type { WireHost, WireTransport } from './wire.js';

export type { Wire, WireHost, WireOptions, WireTransport } from './wire.js';

/**
 * The http transport gives each run its own proxy and tool server (two listens, well under a
 * millisecond, and the fault proxy takes one plan and one clock); the mcp transport shares one
 * stack, whose session handshake would otherwise cost more than the run.
 */
export function createWireHost(transport: WireTransport): WireHost {
  if (transport === 'mcp') return createMcpHost();
  return { transport, open: openHttpWire, close: async () => undefined };
}
