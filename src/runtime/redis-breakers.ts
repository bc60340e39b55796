/**
 * Circuit breakers whose state the runtimes of many processes share through Redis, so that when
 * one agent process sees a tool fail, the others stop calling it too (DESIGN.md, "Stores and
 * scale").
 *
 * - **Counting** is fleet-wide: each counted failure increments the tool's count in Redis, a
 *   success anywhere resets it, and the failure that reaches the threshold opens the circuit for
 *   every process. One Lua script per outcome keeps the read-modify-write atomic.
 * - **Admission stays local and synchronous.** Each process keeps a mirror of the shared state
 *   (loaded at start, kept current by a pub/sub channel and by the script's replies) and decides
 *   from it, so a tool call never waits for Redis. After the cooldown each process may send one
 *   probe; a probe's success closes the circuit everywhere, its failure reopens it everywhere.
 * - **Before the first connection** (a script's first calls), reports are queued, up to
 *   {@link MAX_QUEUED_REPORTS}, and sent in order once it is up, before the mirror is loaded; a
 *   first connection that fails drops them. Reads and resets wait for it (at most the connect
 *   timeout) and fail with a {@link FaultlineError} when Redis cannot be reached.
 * - **A server that does not answer** (it accepts the connection and stays silent: a stopped
 *   Redis, another service on the port) is given the connect timeout too, for each answer
 *   awaited: ioredis's own covers only the TCP connect, after which `ready()`, a read or a reset
 *   (and `close()`, waiting out the first connection) would wait for ever.
 * - **Redis down** means local breakers: outcomes are still counted in process, reports are
 *   dropped (counted, and passed to `onError`), nothing waits or queues. When Redis comes back,
 *   the mirror is reloaded (and subscribed, when the first connection failed).
 * - **A server that stops answering** keeps the connection, so reports would wait in ioredis's
 *   queue for as long as it is silent: at most {@link MAX_PENDING_REPORTS} await an answer, and
 *   more are dropped (counted, and passed to `onError` once) until one comes.
 * - **Time** is the runtime's clock: `openedAt` is epoch ms as each process's clock reads it, so
 *   the processes' clocks should agree to well within the cooldown.
 *
 * A success is reported only when the shared count or state needs resetting, so a healthy tool
 * costs no Redis traffic.
 */
import { reportSafely } from '../core/notify.js';
import { Redis, ReplyError, type RedisOptions } from 'ioredis';
import { ConfigError, FaultlineError } from '../core/errors.js';
import { maskUrlPassword } from '../core/mask-url-password.js';
import { ConsecutiveBreaker, type Admission, type Breaker, type BreakerOptions, type BreakerProvider, type BreakerSnapshot } from './breaker.js';
import type { BreakerStateName } from '../core/record-types.js';

export interface RedisBreakersOptions {
  /** `redis://…` URL. Default `redis://127.0.0.1:6379`. Ignored when `client` is given. */
  url?: string;
  /** An ioredis client to use (faultline makes one more, for the subscription, from its options). */
  client?: Redis;
  /** Key and channel prefix, to keep fleets (or test runs) apart. Default `faultline`. */
  prefix?: string;
  /** Where failures to reach Redis are reported. Default: a process warning, once per outage. */
  onError?: (error: unknown) => void;
  /** Extra ioredis options for the connections faultline makes. */
  redis?: RedisOptions;
}

/** The shared state of one tool's breaker, as kept in Redis. */
interface SharedState {
  state: 'closed' | 'open';
  failures: number;
  openedAt: number | null;
  trips: number;
  version: number;
}

/** A tool's circuit as Redis holds it: the snapshot, and the cooldown its runtimes use (null if unknown). */
export interface SharedBreakerState extends BreakerSnapshot {
  cooldownMs: number | null;
}

export interface RedisBreakers extends BreakerProvider {
  /**
   * Resolves when both connections are up, the reports made before are in Redis, and every breaker
   * made so far mirrors the shared state.
   * @throws FaultlineError when the first connection fails.
   */
  ready(): Promise<void>;
  /**
   * Reports that could not reach Redis, or were made while {@link MAX_PENDING_REPORTS} awaited its
   * answer (the breaker went on with its local state).
   */
  readonly droppedReports: number;
  /**
   * The shared state of every tool with one, read from Redis (after the first connection, and
   * the reports queued before it).
   * @throws FaultlineError when Redis cannot be reached.
   */
  sharedStates(): Promise<Record<string, SharedBreakerState>>;
  /**
   * Closes the shared circuit of a tool for every process.
   * @throws FaultlineError when Redis cannot be reached.
   */
  reset(toolName: string): Promise<void>;
  /** Ends both connections (the ones faultline made; a given client stays open). Safe to call twice. */
  close(): Promise<void>;
}

// KEYS[1]: the tool's hash; KEYS[2]: the channel. ARGV: outcome ('success' | 'failure' | 'reset'),
// now (epoch ms), failure threshold, 1 when the failure was a half-open probe, the tool name, the
// breaker's cooldown (kept for readers such as `faultline breakers`).
// Returns the state after the outcome as [state, failures, openedAt, trips, version].
const OUTCOME_SCRIPT = `
local h = redis.call('HMGET', KEYS[1], 'state', 'failures', 'openedAt', 'trips', 'version')
local state = h[1] or 'closed'
local failures = tonumber(h[2] or '0')
local openedAt = h[3] or ''
local trips = tonumber(h[4] or '0')
local version = tonumber(h[5] or '0')
local changed = false
if ARGV[1] == 'success' or ARGV[1] == 'reset' then
  if state ~= 'closed' or failures ~= 0 then
    state = 'closed'; failures = 0; openedAt = ''; changed = true
  end
elseif state == 'closed' then
  failures = failures + 1
  if failures >= tonumber(ARGV[3]) then
    state = 'open'; failures = 0; openedAt = ARGV[2]; trips = trips + 1
  end
  changed = true
elseif ARGV[4] == '1' then
  openedAt = ARGV[2]; trips = trips + 1; changed = true
end
if changed then
  version = version + 1
  local cooldown = ARGV[6]
  if cooldown == '' then cooldown = redis.call('HGET', KEYS[1], 'cooldown') or '' end
  redis.call('HSET', KEYS[1], 'state', state, 'failures', failures, 'openedAt', openedAt, 'trips', trips, 'version', version, 'cooldown', cooldown)
  redis.call('PUBLISH', KEYS[2], cjson.encode({ARGV[5], state, failures, openedAt, trips, version}))
end
return {state, failures, openedAt, trips, version}
`;

type Reply = [state: string, failures: number | string, openedAt: string, trips: number | string, version: number | string];

function parseState(reply: readonly unknown[]): SharedState {
  const [state, failures, openedAt, trips, version] = reply as Reply;
  return {
    state: state === 'open' ? 'open' : 'closed',
    failures: Number(failures),
    openedAt: openedAt === '' || openedAt === undefined ? null : Number(openedAt),
    trips: Number(trips),
    version: Number(version),
  };
}

/** A tool's breaker that mirrors, and reports to, the shared state: a local breaker it drives. */
class SharedBreaker implements Breaker {
  private appliedVersion = 0;
  private readonly local: ConsecutiveBreaker;

  constructor(
    readonly options: BreakerOptions,
    private readonly report: (outcome: 'success' | 'failure', now: number, probe: boolean, breaker: SharedBreaker) => void,
    /** Until the first connection the shared count is unknown, so every success is reported. */
    private readonly beforeFirstConnection: () => boolean,
    private readonly claim: (ttlMs: number) => Promise<boolean>,
  ) {
    this.local = new ConsecutiveBreaker(options);
  }

  get currentState(): BreakerStateName {
    return this.local.currentState;
  }

  admit(now: number): Admission {
    return this.local.admit(now);
  }

  peek(now: number): BreakerStateName {
    return this.local.peek(now);
  }

  onNeutral(): void {
    this.local.onNeutral();
  }

  snapshot(): BreakerSnapshot {
    return this.local.snapshot();
  }

  restore(snapshot: BreakerSnapshot): void {
    this.local.restore(snapshot);
  }

  /** Adopts a shared state newer than the one applied last. */
  adopt(shared: SharedState): void {
    if (shared.version <= this.appliedVersion) return;
    this.appliedVersion = shared.version;
    const local = this.local.snapshot();
    // A circuit that is open here and there since the same moment is the same circuit: keep the
    // local probe slot (restore would free it) when only the count moved.
    if (local.state === shared.state && local.openedAt === shared.openedAt && local.consecutiveFailures === shared.failures) return;
    this.local.restore({ state: shared.state, consecutiveFailures: shared.failures, openedAt: shared.openedAt, trips: shared.trips });
  }

  onSuccess(): void {
    const before = this.local.snapshot();
    this.local.onSuccess();
    if (before.state !== 'closed' || before.consecutiveFailures > 0 || this.beforeFirstConnection()) this.report('success', 0, false, this);
  }

  /** One background probe per cooldown across the fleet: a key set only if absent, expiring with the cooldown. */
  claimProbe(_now: number): Promise<boolean> {
    return this.claim(this.options.cooldownMs);
  }

  onFailure(now: number): boolean {
    const probe = this.local.currentState === 'half_open';
    const tripped = this.local.onFailure(now);
    this.report('failure', now, probe, this);
    return tripped;
  }
}

/**
 * The most reports queued before the first connection; more are dropped (and counted). Successes
 * in a row of one tool take one place.
 */
export const MAX_QUEUED_REPORTS = 10_000;

/**
 * The most reports sent to Redis and not answered yet; more are dropped (and counted) until an
 * answer comes. A server that stops answering keeps the connection, and ioredis would hold every
 * report for as long as it is silent.
 */
export const MAX_PENDING_REPORTS = 10_000;

/** A report made before the first connection, sent once it is up. */
interface QueuedReport {
  tool: string;
  kind: 'success' | 'failure';
  now: number;
  probe: boolean;
  breaker: SharedBreaker;
}

/** The most databases a Redis server can be configured with (INT_MAX; it has 16 by default). */
const MAX_DATABASE_INDEX = 2_147_483_647;

/**
 * Checks the database a `redis://` URL selects (its path, else `?db=`) before connecting: ioredis
 * sends whatever is there to SELECT, and leaves the error of a SELECT of no number unhandled. An
 * index the server does not have fails its SELECT, which `ready()` reports as a connect error.
 * @throws ConfigError when the index is not a whole number from 0 to 2147483647.
 */
function checkDatabaseIndex(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // not a URL (a socket path, host:port): ioredis reads it, or fails to connect
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return;
  const db = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : parsed.searchParams.get('db');
  if (db === null || (/^\d{1,10}$/.test(db) && Number(db) <= MAX_DATABASE_INDEX)) return;
  throw new ConfigError(`invalid Redis URL ${maskUrlPassword(url)}: the database index must be a whole number (0-15 on a default server), got "${db}"`, 'url');
}

/** ioredis emits 'error' on every failed reconnect: the first of an outage is reported, and a connection that is ready again ends the outage. */
function reportOutagesOnce(connections: readonly Redis[], onError: (error: unknown) => void, warning: { rearm: () => void }): void {
  let reported = false;
  for (const connection of connections) {
    connection.on('error', (error: unknown) => {
      if (reported) return;
      reported = true;
      onError(error);
    });
    connection.on('ready', () => {
      reported = false;
      warning.rearm();
    });
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What the connections' errors said: the last one, and a failed SELECT. */
class ConnectionErrors {
  last: unknown;
  /**
   * ioredis sends SELECT on connecting and only emits its error: a database the server does not
   * have would otherwise leave the connection on database 0.
   */
  select: unknown;
  constructor(connections: readonly Redis[]) {
    for (const connection of connections) {
      connection.on('error', (error: unknown) => {
        this.last = error;
        if ((error as { command?: { name?: unknown } }).command?.name === 'select') this.select ??= error;
      });
    }
  }
}

/** Connects both connections and subscribes; rejects with the cause (a failed SELECT first). */
async function firstConnection(client: Redis, subscriber: Redis, ownsClient: boolean, channel: string, errors: ConnectionErrors): Promise<void> {
  try {
    if (ownsClient) await client.connect();
    await subscriber.connect();
    // Its reply came before the ready check's, so a failed SELECT has been reported by now.
    if (errors.select !== undefined) throw errors.select;
    await subscriber.subscribe(channel);
  } catch (error) {
    throw errors.select ?? errors.last ?? error;
  }
}

/**
 * ioredis retries a first connection that failed (unless its retryStrategy says not), and renews
 * only subscriptions that were made: the one the first connection did not get to is made when the
 * client gets through, and the mirror reloaded after it.
 */
class LateSubscription {
  firstConnectionFailed = false;
  /** The subscription under way, if any. */
  pending: Promise<void> | undefined;
  constructor(
    private readonly client: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly hooks: { reload: () => Promise<void>; mayTry: () => boolean; onError: (error: unknown) => void },
  ) {}

  tryNow(): void {
    if (!this.firstConnectionFailed || this.pending !== undefined || !this.hooks.mayTry() || this.client.status !== 'ready') return;
    const subscriber = this.subscriber;
    const subscribing = (async () => {
      if (subscriber.status === 'wait' || subscriber.status === 'end') await subscriber.connect();
      else if (subscriber.status !== 'ready') await new Promise((resolve) => subscriber.once('ready', resolve));
      await subscriber.subscribe(this.channel);
      await this.hooks.reload();
    })();
    this.pending = subscribing;
    subscribing.catch((error: unknown) => {
      this.pending = undefined; // tried again when the client next gets through
      this.hooks.onError(error);
    });
  }
}

/** Reports made before the first connection, in order, to be sent once it is up. */
class EarlyReports {
  readonly #reports: QueuedReport[] = [];
  readonly #last = new Map<string, 'success' | 'failure'>();

  /** False when there was no room for it (the caller counts it dropped). */
  add(report: QueuedReport): boolean {
    // Successes in a row leave the shared count as one does.
    if (report.kind === 'success' && this.#last.get(report.tool) === 'success') return true;
    if (this.#reports.length >= MAX_QUEUED_REPORTS) return false;
    this.#reports.push(report);
    this.#last.set(report.tool, report.kind);
    return true;
  }

  /** Every report queued, in order; the queue is left empty. */
  take(): QueuedReport[] {
    const reports = this.#reports.splice(0);
    this.#last.clear();
    return reports;
  }
}

/** The default for `onError`: one process warning per outage. */
function outageWarning(): { report: (error: unknown) => void; rearm: () => void } {
  let warned = false;
  return {
    report(error) {
      if (warned) return;
      warned = true;
      process.emitWarning(`faultline: shared breakers: Redis unreachable, breakers are local until it is back (${error instanceof Error ? error.message : String(error)})`);
    },
    rearm() {
      warned = false;
    },
  };
}

/** The client for commands and scripts and the subscriber for the channel, with the options they were made with. */
function openConnections(options: RedisBreakersOptions): { client: Redis; subscriber: Redis; connectionOptions: RedisOptions; ownsClient: boolean } {
  const connectionOptions: RedisOptions = {
    // Never queue commands while Redis is away: a report that cannot go now is dropped.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    ...options.redis,
  };
  const ownsClient = options.client === undefined;
  if (ownsClient && options.url !== undefined) checkDatabaseIndex(options.url);
  const client = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', connectionOptions);
  const subscriber = options.client !== undefined ? options.client.duplicate({ ...connectionOptions }) : client.duplicate();
  return { client, subscriber, connectionOptions, ownsClient };
}

type OutcomeKind = 'success' | 'failure' | 'reset';

/** Runs the outcome script for one tool: the shared state after it, as the script replies. */
function outcomeScript(
  client: Redis,
  keyOf: (tool: string) => string,
  channel: string,
): (tool: string, kind: OutcomeKind, now: number, options: BreakerOptions | undefined, probe: boolean) => Promise<unknown[]> {
  client.defineCommand('faultlineBreakerOutcome', { numberOfKeys: 2, lua: OUTCOME_SCRIPT });
  return (tool, kind, now, options, probe) =>
    (client as unknown as { faultlineBreakerOutcome(...args: unknown[]): Promise<unknown[]> }).faultlineBreakerOutcome(
      keyOf(tool),
      channel,
      kind,
      now,
      options?.failureThreshold ?? 1,
      probe ? 1 : 0,
      tool,
      options?.cooldownMs ?? '',
    );
}

/** Loads the shared state of these tools into their mirrors; a tool never shared keeps its own. */
async function loadStates(client: Redis, keyOf: (tool: string) => string, names: readonly string[], breakers: ReadonlyMap<string, SharedBreaker>): Promise<void> {
  if (names.length === 0) return;
  const pipeline = client.pipeline();
  for (const name of names) pipeline.hmget(keyOf(name), 'state', 'failures', 'openedAt', 'trips', 'version');
  const replies = (await pipeline.exec()) ?? [];
  replies.forEach(([error, reply], i) => {
    if (error !== null) throw error;
    const fields = reply as (string | null)[];
    if (fields[4] === null) return; // never shared yet
    breakers.get(names[i]!)?.adopt(parseState(fields.map((f) => f ?? '')));
  });
}

/** Every tool's shared state under the prefix, as stored in Redis. */
async function readSharedStates(client: Redis, prefix: string): Promise<Record<string, SharedBreakerState>> {
  const out: Record<string, SharedBreakerState> = {};
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:breaker:*`, 'COUNT', 100);
    cursor = next;
    for (const key of keys) {
      const fields = await client.hmget(key, 'state', 'failures', 'openedAt', 'trips', 'version', 'cooldown');
      const s = parseState(fields.slice(0, 5).map((f) => f ?? ''));
      const cooldown = fields[5] ?? '';
      out[key.slice(`${prefix}:breaker:`.length)] = {
        state: s.state,
        consecutiveFailures: s.failures,
        openedAt: s.openedAt,
        trips: s.trips,
        cooldownMs: cooldown === '' ? null : Number(cooldown),
      };
    }
  } while (cursor !== '0');
  return out;
}

/** One probe per cooldown across the fleet (`SET NX PX`); without Redis the breakers are local, and so is the probe. */
function probeClaim(client: Redis, prefix: string, toolName: string): (ttlMs: number) => Promise<boolean> {
  return (ttlMs) =>
    client.status !== 'ready'
      ? Promise.resolve(true)
      : client.set(`${prefix}:probe:${toolName}`, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX').then(
          (reply) => reply === 'OK',
          () => true,
        );
}

/**
 * `work`, or a FaultlineError when it has not settled within `timeoutMs` (0: no bound). ioredis's
 * connectTimeout ends a TCP connect that hangs, not the wait for the server's answers.
 */
function withAnswerTimeout<T>(work: Promise<T>, timeoutMs: number, where: string): Promise<T> {
  if (!(timeoutMs > 0)) return work;
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FaultlineError(`could not connect to Redis at ${where}: no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([work, silence]).finally(() => clearTimeout(timer));
}

/**
 * Breakers shared through Redis, for `createRuntime({ breakers })`.
 *
 * @example
 * import { createRedisBreakers } from 'faultline/redis';
 * const breakers = createRedisBreakers({ url: process.env.REDIS_URL });
 * const rt = createRuntime({ tools, breakers });
 * // ... every process with the same Redis and prefix shares each tool's circuit
 * await rt.close();
 * await breakers.close();
 * @throws ConfigError when `url` selects a database index that is not a whole number.
 */
export function createRedisBreakers(options: RedisBreakersOptions = {}): RedisBreakers {
  const prefix = options.prefix ?? 'faultline';
  const channel = `${prefix}:breakers`;
  const keyOf = (tool: string) => `${prefix}:breaker:${tool}`;
  const { client, subscriber, connectionOptions, ownsClient } = openConnections(options);
  const outcome = outcomeScript(client, keyOf, channel);

  const breakers = new Map<string, SharedBreaker>();
  let dropped = 0;
  let closed = false;
  const warning = outageWarning();
  const given = options.onError ?? warning.report;
  const onError = (error: unknown) => reportSafely(given, error);
  reportOutagesOnce([client, subscriber], onError, warning);

  // Reports sent and not answered yet, and whether MAX_PENDING_REPORTS was reached since the last answer.
  let pending = 0;
  let unanswered = false;
  function send(tool: string, kind: 'success' | 'failure', now: number, probe: boolean, breaker: SharedBreaker): Promise<void> {
    pending++;
    return outcome(tool, kind, now, breaker.options, probe).then(
      (reply) => {
        pending--;
        if (unanswered) {
          unanswered = false;
          warning.rearm(); // the silence is over: the next outage is reported again
        }
        breaker.adopt(parseState(reply));
      },
      (error: unknown) => {
        pending--;
        unanswered = false;
        dropped++;
        // Those that close() cut off are counted, not reported.
        if (!closed) onError(error);
      },
    );
  }

  // Reports made before the first connection, in order; null once it is up (or has failed).
  let queued: EarlyReports | null = client.status === 'ready' ? null : new EarlyReports();
  // Settles when the queued reports have been answered.
  let flushed: Promise<unknown> = Promise.resolve();
  // Registered before the listener that reloads the mirror: the queued outcomes reach Redis
  // first, so the load never shows a breaker the state from before them (a circuit tripped here,
  // closed again by the load until the reply to the trip came).
  client.once('ready', () => {
    if (queued === null) return;
    const reports = queued.take();
    queued = null;
    // On a database other than the one asked for (its SELECT failed), they are dropped.
    if (errors.select !== undefined) {
      dropped += reports.length;
      return;
    }
    flushed = Promise.all(reports.map((r) => send(r.tool, r.kind, r.now, r.probe, r.breaker)));
  });

  const load = (names: readonly string[]) => loadStates(client, keyOf, names, breakers);

  subscriber.on('message', (_channel: string, message: string) => {
    try {
      const [tool, ...rest] = JSON.parse(message) as [string, ...Reply];
      breakers.get(tool)?.adopt(parseState(rest));
    } catch (error) {
      onError(error);
    }
  });
  // After a reconnect the subscription is renewed by ioredis; what was published meanwhile is
  // lost, so the mirror is reloaded.
  client.on('ready', () => void load([...breakers.keys()]).catch(onError));

  const errors = new ConnectionErrors([client, subscriber]);
  const where = options.url === undefined ? (options.client === undefined ? 'redis://127.0.0.1:6379' : 'the given client') : maskUrlPassword(options.url);
  const connectError = (cause: unknown) => new FaultlineError(`could not connect to Redis at ${where}: ${messageOf(cause)}`, { cause });
  // ioredis's connectTimeout (default 10 s; 0 turns it off) ends a TCP connect that hangs, not
  // the wait for the server's first answer (the ready check) or any later one.
  const answerTimeoutMs = (options.client === undefined ? connectionOptions.connectTimeout : options.client.options.connectTimeout) ?? 10_000;
  /** `work`, or a FaultlineError when it has not settled within the connect timeout. */
  const answered = <T>(work: Promise<T>): Promise<T> => withAnswerTimeout(work, answerTimeoutMs, where);
  // ioredis retries a first connection that failed (unless its retryStrategy says not), and
  // renews only subscriptions that were made: the one the first connection did not get to is
  // made when the client gets through, and the mirror reloaded after it.
  const late = new LateSubscription(client, subscriber, channel, {
    reload: () => load([...breakers.keys()]),
    mayTry: () => !closed && errors.select === undefined,
    onError: (error) => {
      if (!closed) onError(error);
    },
  });
  const subscribeLate = () => late.tryNow();
  client.on('ready', subscribeLate);
  // A server that never answers leaves the connections as they are: should it answer later, they
  // go on as a first connection that failed and was retried.
  const connecting = answered(firstConnection(client, subscriber, ownsClient, channel, errors).catch((error: unknown) => {
    throw connectError(error);
  }));
  connecting.catch(() => {
    late.firstConnectionFailed = true;
    subscribeLate();
    // Redis was not there: the reports waiting for it are dropped, as they are in an outage.
    if (queued === null || client.status === 'ready') return;
    dropped += queued.take().length;
    queued = null;
  });

  /** Waits for the first connection and the reports queued before it; then Redis must be there. */
  async function connected(): Promise<void> {
    try {
      await connecting;
    } catch (error) {
      // A first connection that failed and has been retried since, successfully, will do.
      if (errors.select !== undefined || client.status !== 'ready') throw error;
    }
    await answered(flushed);
    if (client.status !== 'ready') throw connectError(errors.last ?? 'the connection is closed');
  }

  /**
   * Runs `run` once Redis is there. Its errors become one FaultlineError: the connection's (lost
   * since) as the first connection's would, the server's answer (a ReplyError) naming `what`.
   */
  async function overRedis<T>(what: string, run: () => Promise<T>): Promise<T> {
    await connected();
    try {
      return await answered(run());
    } catch (error) {
      if (FaultlineError.isInstance(error)) throw error;
      if (!(error instanceof ReplyError)) throw connectError(errors.last ?? 'the connection is closed');
      throw new FaultlineError(`could not ${what} at ${where}: ${messageOf(error)}`, { cause: error });
    }
  }

  function report(kind: 'success' | 'failure', now: number, probe: boolean, breaker: SharedBreaker, tool: string): void {
    if (queued !== null && !closed) {
      if (!queued.add({ tool, kind, now, probe, breaker })) dropped++;
      return;
    }
    if (closed || client.status !== 'ready' || errors.select !== undefined) {
      dropped++;
      return;
    }
    if (pending >= MAX_PENDING_REPORTS) {
      dropped++;
      if (!unanswered) {
        unanswered = true;
        onError(new FaultlineError(`${MAX_PENDING_REPORTS} reports to Redis at ${where} are unanswered; more are dropped until it answers`));
      }
      return;
    }
    void send(tool, kind, now, probe, breaker);
  }
  const beforeFirstConnection = () => queued !== null;

  return {
    breakerFor(toolName, breakerOptions) {
      const breaker = new SharedBreaker(breakerOptions, (kind, now, probe, b) => report(kind, now, probe, b, toolName), beforeFirstConnection, probeClaim(client, prefix, toolName));
      breakers.set(toolName, breaker);
      if (client.status === 'ready') void load([toolName]).catch(onError);
      return breaker;
    },
    async ready() {
      try {
        await connecting;
      } catch (error) {
        if (late.pending === undefined) throw error;
        await answered(late.pending).catch((cause: unknown) => {
          throw FaultlineError.isInstance(cause) ? cause : connectError(cause);
        });
      }
      await overRedis('load the shared breakers from Redis', () => load([...breakers.keys()]));
    },
    get droppedReports() {
      return dropped;
    },
    sharedStates() {
      return overRedis('read the shared breakers from Redis', () => readSharedStates(client, prefix));
    },
    async reset(toolName) {
      const reply = await overRedis(`reset the shared circuit of ${toolName} in Redis`, () => outcome(toolName, 'reset', 0, breakers.get(toolName)?.options, false));
      breakers.get(toolName)?.adopt(parseState(reply));
    },
    async close() {
      if (closed) return;
      closed = true;
      // The reports made before the first connection still go, if it comes.
      await connecting.catch(() => undefined);
      await answered(flushed).catch(() => undefined);
      subscriber.disconnect();
      if (ownsClient) client.disconnect();
    },
  };
}
