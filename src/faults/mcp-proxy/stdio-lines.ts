/**
 * Reading newline-delimited JSON-RPC on the proxy's two stdio sides: from a server it started
 * (upstream.ts) and from the client that started `faultline mcp-proxy`. Both keep the SDK's
 * transports, with a larger, linear read buffer in place of the SDK's.
 */
import type { Readable, Writable } from 'node:stream';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { deserializeMessage, ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The largest message the proxy reads over stdio, from the server it started or from the client
 * that started it: a tool result or a tool's arguments that big pass through. The SDK's default,
 * 10 MiB, is a 5 MB text from a server that also sends it as structured content; over it the SDK
 * stops the server (upstream), or closes the client's connection without an answer (downstream).
 */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * The SDK's ReadBuffer, linear in the message size: it joins a message's chunks once. The SDK's
 * copies the whole buffer at every chunk and searches all of it for a newline again, which for a
 * message of tens of megabytes blocks the proxy for seconds.
 */
export class LineBuffer extends ReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Chunks already searched for a newline without one. */
  private searched = 0;

  constructor(private readonly maxBytes: number) {
    super({ maxBufferSize: maxBytes });
  }

  override append(chunk: Buffer): void {
    if (this.size + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  override readMessage(): JSONRPCMessage | null {
    for (let i = this.searched; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      const at = chunk.indexOf(0x0a);
      if (at === -1) continue;
      const line = i === 0 ? chunk.subarray(0, at) : Buffer.concat([...this.chunks.slice(0, i), chunk.subarray(0, at)]);
      const rest = chunk.subarray(at + 1);
      this.chunks = rest.length > 0 ? [rest, ...this.chunks.slice(i + 1)] : this.chunks.slice(i + 1);
      this.size -= line.length + 1;
      this.searched = 0;
      return deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
    }
    this.searched = this.chunks.length;
    return null;
  }

  override clear(): void {
    this.chunks = [];
    this.size = 0;
    this.searched = 0;
  }
}

/**
 * Puts a {@link LineBuffer} of {@link MAX_STDIO_MESSAGE_BYTES} in place of the SDK's in one of its
 * stdio transports, before it starts. The SDK keeps its buffer private and takes no other kind; if
 * a later SDK renames the field, the SDK's own buffer stays in use, and the tests with messages
 * over 10 MiB (a large result, a large request) fail.
 */
export function useLineBuffer<T extends StdioClientTransport | StdioServerTransport>(transport: T): T {
  (transport as unknown as { _readBuffer: ReadBuffer })._readBuffer = new LineBuffer(MAX_STDIO_MESSAGE_BYTES);
  return transport;
}

/** The proxy's side towards a client over stdio: the SDK's server transport on `stdin`/`stdout`, with the proxy's read buffer. */
export function stdioDownstream(stdin: Readable, stdout: Writable): StdioServerTransport {
  return useLineBuffer(new StdioServerTransport(stdin, stdout));
}
