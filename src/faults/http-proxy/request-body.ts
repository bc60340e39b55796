/**
 * Bodies the proxy looks at on their way through: the start of a request body (read before
 * forwarding, for the plan's `when` conditions and the record's input_params) and a kept prefix of
 * a response body (for raw_output, or all of it when a stale rule may replay it).
 */
import type { IncomingMessage } from 'node:http';

export interface BodyPrefix {
  chunks: Buffer[];
  bytes: number;
  /** The whole body was read. */
  complete: boolean;
}

/** A request without a body; shared, never written to. */
export const EMPTY_BODY: BodyPrefix = Object.freeze({ chunks: Object.freeze([]) as unknown as Buffer[], bytes: 0, complete: true });

/**
 * Reads a request body up to `limit` bytes. Past the limit it pauses the stream and resolves with
 * what it has (`complete: false`); the rest stays in the stream, to be piped to the upstream.
 * Rejects when the request breaks off (the client went away, or the proxy closed its connection).
 */
export function readBodyPrefix(req: IncomingMessage, limit: number): Promise<BodyPrefix> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onBroken);
      req.off('close', onBroken);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > limit) {
        cleanup();
        req.pause();
        resolve({ chunks, bytes, complete: false });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ chunks, bytes, complete: true });
    };
    const onBroken = () => {
      cleanup();
      reject(new Error('the client went away while sending the request'));
    };
    if (req.destroyed) {
      onBroken();
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onBroken);
    req.on('close', onBroken);
  });
}

/** The body as one buffer (no copy when it came in one chunk). */
export function bodyBuffer(body: BodyPrefix): Buffer | undefined {
  if (body.bytes === 0) return undefined;
  return body.chunks.length === 1 ? body.chunks[0]! : Buffer.concat(body.chunks, body.bytes);
}

/** Keeps the first `limit` bytes of a stream, and counts all of them. */
export class BodyCapture {
  bytes = 0;
  private kept = 0;
  private readonly chunks: Buffer[] = [];
  constructor(private readonly limit: number) {}
  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.kept >= this.limit) return;
    const part = this.kept + chunk.length > this.limit ? chunk.subarray(0, this.limit - this.kept) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  get complete(): boolean {
    return this.kept === this.bytes;
  }
  text(): string | undefined {
    if (this.bytes === 0) return undefined;
    return (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.kept)).toString('utf8');
  }
}
