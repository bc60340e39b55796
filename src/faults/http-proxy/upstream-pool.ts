/**
 * Keep-alive sockets to the proxy's upstream, for the fast path (fast-path.ts): one request at a
 * time per socket, the most recently used socket first (so that a burst's extra sockets go idle
 * and get closed by the upstream rather than kept warm round-robin), at most `maxFree` idle.
 *
 * Each socket keeps the same four listeners for its whole life and passes events to whoever holds
 * it; adding and removing listeners per request is what makes node:http's agent dear. An idle
 * socket that hears anything (data, an end, an error) is closed: it is of no use any more.
 */
import { connect, type Socket } from 'node:net';

/** What the holder of an upstream socket hears from it. */
export interface UpstreamUser {
  upstreamData(chunk: Buffer): void;
  /** The upstream closed its side (EOF). */
  upstreamEnd(): void;
  /** The socket failed or was closed without an end first. */
  upstreamError(error: Error): void;
  upstreamDrain(): void;
}

export class UpstreamSocket {
  user: UpstreamUser | undefined;
  /** Served a request before: a failure before the first answer byte may be a keep-alive race. */
  reused = false;
  /** When the upstream's Keep-Alive hint says it will close the idle socket (ms, Date.now()). */
  expiresAt = Number.POSITIVE_INFINITY;
  dead = false;

  constructor(
    readonly socket: Socket,
    private readonly pool: UpstreamPool,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.user !== undefined) this.user.upstreamData(chunk);
      else this.destroy();
    });
    socket.on('end', () => {
      const user = this.user;
      this.dead = true;
      if (user !== undefined) user.upstreamEnd();
      else this.destroy();
    });
    socket.on('error', (error: Error) => {
      this.fail(error);
    });
    socket.on('close', () => {
      this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      this.pool.forget(this);
    });
    socket.on('drain', () => this.user?.upstreamDrain());
  }

  private fail(error: Error): void {
    this.dead = true;
    const user = this.user;
    this.user = undefined;
    user?.upstreamError(error);
  }

  write(data: string | Buffer): boolean {
    return typeof data === 'string' ? this.socket.write(data, 'latin1') : this.socket.write(data);
  }

  destroy(): void {
    this.dead = true;
    this.user = undefined;
    this.socket.destroy();
  }
}

export class UpstreamPool {
  private readonly free: UpstreamSocket[] = [];
  private readonly all = new Set<UpstreamSocket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly maxFree: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** An idle socket, or a new one (connecting; writes wait for the connection). */
  acquire(user: UpstreamUser): UpstreamSocket {
    for (;;) {
      const s = this.free.pop();
      if (s === undefined) break;
      if (s.dead) continue;
      if (s.expiresAt <= this.now()) {
        s.destroy();
        continue;
      }
      s.user = user;
      s.reused = true;
      return s;
    }
    const s = new UpstreamSocket(connect({ host: this.host, port: this.port }), this);
    this.all.add(s);
    s.user = user;
    return s;
  }

  /** Back to the pool after a complete exchange; `keepAliveSeconds` is the upstream's hint. */
  release(s: UpstreamSocket, keepAliveSeconds: number | undefined): void {
    s.user = undefined;
    if (s.dead || this.free.length >= this.maxFree) {
      s.destroy();
      return;
    }
    // A second early, as node's agent does: the upstream's timer and ours do not start together.
    s.expiresAt = keepAliveSeconds === undefined ? Number.POSITIVE_INFINITY : this.now() + Math.max(0, keepAliveSeconds * 1000 - 1000);
    this.free.push(s);
  }

  forget(s: UpstreamSocket): void {
    this.all.delete(s);
    const i = this.free.lastIndexOf(s);
    if (i !== -1) this.free.splice(i, 1);
  }

  get idle(): number {
    return this.free.length;
  }

  destroyAll(): void {
    for (const s of [...this.all]) s.destroy();
    this.free.length = 0;
  }
}
