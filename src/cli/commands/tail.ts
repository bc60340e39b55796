/**
 * `faultline tail`: prints the latest failures, then follows new ones as they are stored, one
 * line per record, until Ctrl-C (or `--limit` / `--once`).
 *
 * Following pages forward along execution_id (UUIDv7, time-ordered). Records are not stored in id
 * order: several agent processes flush their batches at different moments, and a recorder
 * replays its spool after an outage. So each poll reads again from {@link LATE_MS} before the
 * newest record seen (or before now, when that one is dated in the future) and skips the ids it
 * has already handled; a record stored later than that after it was made (or by a host whose
 * clock runs far behind) is not shown.
 *
 * A store that stops answering (PostgreSQL restarted, connections terminated, a locked SQLite
 * file) does not end the command: one line says so, polls back off up to {@link MAX_RETRY_MS},
 * and one line says when it answers again. A PostgreSQL statement that hangs (a table locked by
 * another session, a network partition) fails after {@link readBound} and counts the same; Ctrl-C
 * does not wait for it. A SQLite file is followed by its name, as `tail -F` does: while no file is
 * there (deleted, being replaced) the store counts as unreachable, and a new file at the path is
 * opened and followed. Reading on from the deleted file would show nothing more, silently. A WAL
 * store in a read-only directory, read from a copy in memory, is copied again by the store itself
 * when another process changes the file (`store/sqlite/wal-snapshot.ts`).
 */
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { FaultlineError } from '../../core/errors.js';
import { formatMs } from '../../monitor/format-figures.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uuidv7LowerBound, uuidv7Time } from '../../record/uuid-v7.js';
import { sqlitePathOf } from '../../store/open-store.js';
import type { RecordQuery, RecordReader, Store } from '../../core/store-types.js';
import type { CallStatus } from '../../core/taxonomy.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import { printable, writeLine, type CliContext } from '../io.js';
import { openReportStore, parseCount } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface TailOptions {
  db?: string;
  json?: boolean;
  tool?: string;
  all?: boolean;
  interval: string;
  lines: string;
  limit?: string;
  once?: boolean;
}

const FAILED: readonly CallStatus[] = ['failure', 'timeout', 'rejected'];
const PAGE = 500;
const MESSAGE_WIDTH = 160;
/** How long after it was made a record may be stored and still be followed. */
export const LATE_MS = 10_000;
/** Polls of a store that stopped answering back off to at most this (or the interval, if longer). */
const MAX_RETRY_MS = 30_000;
/** The shortest a PostgreSQL read may hang before the store counts as unreachable. */
const MIN_READ_BOUND_MS = 10_000;

/** How long one read may take: a few intervals, and never so short that a slow server looks down. */
export function readBound(intervalMs: number): number {
  return Math.max(MIN_READ_BOUND_MS, 3 * intervalMs);
}

/**
 * Where each poll starts reading: {@link LATE_MS} before the newest record seen, or before now
 * when that record is dated in the future (a host whose clock runs ahead), so that one skewed
 * record does not move the window past everything stored after it.
 */
function windowStart(newest: string): number {
  return Math.min(uuidv7Time(newest), Date.now()) - LATE_MS;
}

/** `--interval`: `500ms`, `1s`, `2m`, from 10ms to an hour. */
export function parseInterval(text: string): number {
  return parseDuration(text, '--interval', { minMs: 10, maxMs: 3_600_000 });
}

/** One record as one line: when, tool, status, what failed, how long, and the message. */
export function formatTailLine(r: ToolExecutionRecord): string {
  const parts = [r.created_at, r.tool_name, r.status];
  if (r.status !== 'success') {
    parts.push(`${r.failure_stage ?? '?'}/${r.failure_category ?? '?'}/${r.failure_type ?? '?'}`);
    if (r.error_code !== null) parts.push(r.error_code);
  }
  parts.push(formatMs(r.duration_ms));
  if (r.retry_count > 0) parts.push(`retries=${r.retry_count}`);
  if (r.breaker_state !== 'closed') parts.push(`breaker=${r.breaker_state}`);
  if (r.error_message !== null && r.error_message !== '') {
    const message = r.error_message.replace(/\s+/g, ' ').trim();
    parts.push(message.length > MESSAGE_WIDTH ? `${message.slice(0, MESSAGE_WIDTH - 1)}…` : message);
  }
  return printable(parts.join('  '));
}

export function tailCommand(ctx: CliContext): Command {
  return new Command('tail')
    .description('Print the latest failures and follow new ones as they are recorded (Ctrl-C stops)')
    .addOption(storeOption('store to read'))
    .option('--tool <name>', 'only this tool')
    .option('--all', 'include successful calls')
    .option('--interval <duration>', 'how often to poll the store: 500ms, 1s, 2m', '1s')
    .option('-n, --lines <n>', 'how many existing records to print first (0: only new ones)', '10')
    .option('--limit <n>', 'exit after printing this many records')
    .option('--once', 'print the existing records and exit, without following')
    .option('--json', 'print records as JSON lines')
    .action(async (opts: TailOptions) => {
      const { io } = ctx;
      const intervalMs = parseInterval(opts.interval);
      const lines = parseCount(opts.lines, '--lines', 0);
      const limit = opts.limit === undefined ? Infinity : parseCount(opts.limit, '--limit');
      const open = () => openReportStore(opts.db, io, { statementTimeoutMs: readBound(intervalMs) });
      const path = sqlitePathOf(opts.db, io.cwd);
      let store = await open();
      let file = path === undefined ? undefined : fileIdentity(path);
      /** The store to read now: for a SQLite file, the file at the path, reopened if it was replaced. */
      const current = async (): Promise<Store> => {
        if (path === undefined) return store;
        const now = fileIdentity(path);
        if (now === undefined) throw new Error(`${path} was removed`);
        if (now !== file) {
          // Opened first: a file that is not (yet) a store leaves the old one to close in the end.
          const next = await open();
          await store.close();
          store = next;
          file = now;
        }
        return store;
      };
      try {
        await follow(ctx, store, current, { ...opts, intervalMs, lines, limit });
      } finally {
        await store.close();
      }
    });
}

/** Which file is at `path` (device and inode), or undefined when none is. */
function fileIdentity(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat === undefined ? undefined : `${stat.dev}:${stat.ino}`;
}

async function follow(
  ctx: CliContext,
  first: RecordReader,
  current: () => Promise<RecordReader>,
  opts: { tool?: string; all?: boolean; json?: boolean; once?: boolean; intervalMs: number; lines: number; limit: number },
): Promise<void> {
  const { io } = ctx;
  let store = first;
  const filter: Pick<RecordQuery, 'toolName' | 'statuses'> = {
    ...(opts.tool === undefined ? {} : { toolName: opts.tool }),
    ...(opts.all === true ? {} : { statuses: FAILED }),
  };
  let printed = 0;
  const print = (record: ToolExecutionRecord): boolean => {
    writeLine(io.stdout, opts.json === true ? JSON.stringify(record) : formatTailLine(record));
    printed += 1;
    return printed < opts.limit;
  };

  // Before following there is nothing to keep going for: a store that does not answer the first
  // reads (a lock held past the read bound, a server gone since the open) is one line, exit 2.
  const startRead = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (error) {
      // faultline's own errors (a damaged file, a foreign store) already say what is wrong.
      if (FaultlineError.isInstance(error)) throw error;
      throw new CliError(`cannot read the store: ${oneLine(error)}`, 2, { cause: error });
    }
  };
  const backlog = opts.lines === 0 ? [] : await startRead(() => store.query({ ...filter, order: 'desc', limit: opts.lines }));
  for (const record of backlog.reverse()) if (!print(record)) return;
  if (opts.once === true) return;

  // Follow from the newest record of any kind, so a quiet filter does not replay old history.
  let newest = backlog.at(-1)?.execution_id ?? (await startRead(() => store.query({ order: 'desc', limit: 1 })))[0]?.execution_id;
  /** Ids handled within LATE_MS of `newest`: printed, or already there when following started. */
  const seen = new Map<string, number>();
  /** Every matching record from LATE_MS before `newest` on, page by page. */
  async function* recent(): AsyncGenerator<ToolExecutionRecord> {
    let cursor = newest === undefined ? undefined : uuidv7LowerBound(windowStart(newest));
    for (;;) {
      const page = await store.query({ ...filter, ...(cursor === undefined ? {} : { afterId: cursor }), order: 'asc', limit: PAGE });
      yield* page;
      if (page.length < PAGE) return;
      cursor = page.at(-1)!.execution_id;
    }
  }
  for await (const record of recent()) seen.set(record.execution_id, uuidv7Time(record.execution_id));

  let stopped = false;
  const stop = new AbortController();
  const interrupted = new Promise<'interrupted'>((resolve) => stop.signal.addEventListener('abort', () => resolve('interrupted')));
  void io.interrupted?.then(() => {
    stopped = true;
    stop.abort();
  });
  /** Polls in a row that the store did not answer; the first one says so, the first answer after says it is back. */
  let failedPolls = 0;
  while (!stopped) {
    try {
      await sleep(failedPolls === 0 ? opts.intervalMs : retryDelay(opts.intervalMs, failedPolls), undefined, { signal: stop.signal });
    } catch {
      // Aborted by Ctrl-C: stop without printing anything more.
      return;
    }
    let finished: boolean | 'interrupted';
    const polling = poll();
    // Ctrl-C does not wait for a read the server leaves hanging; closing the store ends it.
    polling.catch(() => undefined);
    try {
      finished = await Promise.race([polling, interrupted]);
      if (finished === 'interrupted') return;
    } catch (error) {
      if (stopped) return;
      // A restarted PostgreSQL, terminated connections, a locked or briefly unreadable SQLite
      // file: following is what the user asked for, so wait and read again. `newest` moves only
      // with what was read, so the next window still starts before whatever was stored meanwhile.
      if (failedPolls === 0) {
        writeLine(io.stderr, `faultline: store unreachable, retrying (backing off up to ${maxRetryDelay(opts.intervalMs) / 1000}s): ${oneLine(error)}`);
      }
      failedPolls += 1;
      continue;
    }
    if (failedPolls > 0) {
      writeLine(io.stderr, 'faultline: store reachable again, following');
      failedPolls = 0;
    }
    if (finished) return;
  }

  /** One poll: prints what is new; true once `--limit` records were printed. */
  async function poll(): Promise<boolean> {
    store = await current();
    // Read before the filtered pages: every matching record up to `head` is then among them, so
    // the window can move past the non-matching records after the last match.
    const head = (await store.query({ order: 'desc', limit: 1 }))[0]?.execution_id;
    for await (const record of recent()) {
      if (stopped) break;
      const id = record.execution_id;
      if (seen.has(id)) continue;
      seen.set(id, uuidv7Time(id));
      if (newest === undefined || id > newest) newest = id;
      if (!print(record)) return true;
    }
    if (head !== undefined && (newest === undefined || head > newest)) newest = head;
    if (newest !== undefined) {
      const oldest = windowStart(newest);
      for (const [id, ms] of seen) if (ms < oldest) seen.delete(id);
    }
    return false;
  }
}

/** The longest wait between polls of a store that does not answer. */
function maxRetryDelay(intervalMs: number): number {
  return Math.max(intervalMs, MAX_RETRY_MS);
}

/** The wait after `failures` polls in a row failed: the interval, doubling, up to {@link maxRetryDelay}. */
function retryDelay(intervalMs: number, failures: number): number {
  return Math.min(intervalMs * 2 ** Math.min(failures, 20), maxRetryDelay(intervalMs));
}

/** The reason on one line; a refused connection to a dual-stack host has only its code. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return printable((text.trim() === '' && typeof code === 'string' ? code : text).replace(/\s+/g, ' ').trim());
}
