/**
 * The recorder's spool: append-only JSON-lines files where records wait that the store cannot take
 * yet (an outage, a burst beyond memory, records held too long), so these cost disk, not memory
 * and not data.
 *
 * Layout, for a spool path `<dir>/<stem>.jsonl`:
 * - `<stem>.<n>.jsonl` are segments: files waiting to be replayed into the store. Records are
 *   written into the newest one synchronously ({@link Spool.spillSync}: a batch the store failed,
 *   the oldest records once memory is full, records held too long, what is left at exit), so a
 *   caller that never yields to the event loop is covered as well as one that does; the recorder
 *   takes the segment for replay ({@link Spool.takeSpilled}), and the next spill opens another.
 *   Replay deletes a segment once all of it is stored.
 * - `<stem>.jsonl` itself is claimed like a segment when found (a file older versions wrote).
 * - `rejected-<stem>.jsonl` keeps records the store refused while accepting others. They are never
 *   replayed automatically (the name does not start with a pid), only kept for inspection.
 * - The default stem is `<pid>-<random>`, so a later process can tell whose files are left over:
 *   files named `<pid>-….jsonl` whose pid is no longer alive are claimed (renamed into the
 *   claimer's own segment names, which is atomic, so two claimers never replay the same file
 *   twice at once) and replayed. Limitation: pids are only meaningful inside one pid namespace,
 *   so one spool directory must not be shared by processes in different containers.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { open, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { makeDirectory, makeDirectorySync } from '../io/make-directory.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

/** `.faultline/spool/<pid>-<random>.jsonl` under `cwd`, as an absolute path. */
export function defaultSpoolPath(cwd: string = process.cwd(), pid: number = process.pid): string {
  return resolve(cwd, '.faultline', 'spool', `${pid}-${randomBytes(6).toString('hex')}.jsonl`);
}

/** True when a process with this pid exists (EPERM means it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

export interface SpoolOptions {
  /** The active file. Relative paths are resolved against the current directory once, here. */
  path: string;
  /** The owning process id; default `process.pid`. */
  pid?: number;
  /** Liveness check for the owners of leftover files; default {@link isProcessAlive}. */
  isAlive?: (pid: number) => boolean;
}

const LEFTOVER_NAME = /^(\d+)-.+\.jsonl$/;

/**
 * Writes records into segments synchronously, hands them to replay, and claims files left over by
 * earlier processes. The asynchronous operations (claims, rejected records, close) are serialized.
 */
export class Spool {
  /** The path the segment names derive from (absolute). */
  readonly path: string;
  private readonly pid: number;
  private readonly isAlive: (pid: number) => boolean;
  private readonly stem: string;
  private nextSeq = 1;
  private chain: Promise<unknown> = Promise.resolve();
  /** The segment {@link Spool.spillSync} appends to, until {@link Spool.takeSpilled}. */
  private spill: { path: string; fd: number } | null = null;

  constructor(options: SpoolOptions) {
    this.path = resolve(options.path);
    this.pid = options.pid ?? process.pid;
    this.isAlive = options.isAlive ?? isProcessAlive;
    this.stem = this.path.endsWith('.jsonl') ? this.path.slice(0, -'.jsonl'.length) : this.path;
  }

  /** Whether {@link Spool.spillSync} wrote a segment that has not been taken for replay yet. */
  get hasSpilled(): boolean {
    return this.spill !== null;
  }

  /**
   * Appends one line per record to the current segment, synchronously, creating the directory and
   * the segment on first use: for records that must leave memory now, whether or not the event
   * loop will turn again. Once `writeSync` returns, the records survive the process being killed;
   * `fsync` also makes them (and everything spilled before) survive the machine. Throws on
   * failure; a failed write may leave half a line, which replay skips as malformed, and the next
   * spill starts a new segment.
   */
  spillSync(records: readonly ToolExecutionRecord[], fsync: boolean): void {
    if (records.length === 0) {
      if (fsync) this.syncSpilled();
      return;
    }
    let text = '';
    for (const record of records) text += `${JSON.stringify(record)}\n`;
    if (this.spill === null) {
      makeDirectorySync(dirname(this.path));
      const path = this.segmentPath(this.nextSeq++);
      this.spill = { path, fd: openSync(path, 'a') };
    }
    try {
      writeSync(this.spill.fd, text);
      if (fsync) fsyncSync(this.spill.fd);
    } catch (error) {
      // Whatever reached the file is replayed with the segment; the next spill starts afresh.
      this.takeSpilled();
      throw error;
    }
  }

  /** fsyncs the current segment, if there is one. */
  syncSpilled(): void {
    if (this.spill !== null) fsyncSync(this.spill.fd);
  }

  /** Closes the current segment and returns its path for replay, or null when nothing was spilled since the last call. */
  takeSpilled(): string | null {
    const spill = this.spill;
    if (spill === null) return null;
    this.spill = null;
    try {
      closeSync(spill.fd);
    } catch {
      // Every write already returned; a failing close loses nothing written.
    }
    return spill.path;
  }

  /**
   * Finds files that earlier runs left in the spool directory: this spool's own segments and active
   * file (a restart with the same path), and files of processes that are no longer alive. Returns
   * them as this spool's segments, oldest first. Another process's file that vanishes mid-claim was
   * claimed by someone else and is skipped.
   */
  claimLeftovers(): Promise<string[]> {
    return this.serialize(async () => this.claimLeftoversSync());
  }

  /**
   * {@link Spool.claimLeftovers}, synchronously: a recorder claims before its first spill, which
   * may come before the event loop ever turns (a caller that never yields), and a spill segment
   * takes the next segment number, which the claim must have settled first. A few directory
   * operations, once per recorder.
   */
  claimLeftoversSync(): string[] {
    const dir = dirname(this.path);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw error;
    }
    const ownBase = basename(this.path);
    const ownSegment = new RegExp(`^${escapeRegExp(basename(this.stem))}\\.(\\d+)\\.jsonl$`);
    const ownSegments: Array<{ seq: number; path: string }> = [];
    for (const name of names) {
      const match = ownSegment.exec(name);
      const path = join(dir, name);
      // The segment this spool is spilling into is not a leftover.
      if (match?.[1] !== undefined && path !== this.spill?.path) ownSegments.push({ seq: Number(match[1]), path });
    }
    ownSegments.sort((a, b) => a.seq - b.seq);
    this.nextSeq = Math.max(this.nextSeq, (ownSegments.at(-1)?.seq ?? 0) + 1);
    const claimed = ownSegments.map((segment) => segment.path);

    if (names.includes(ownBase)) {
      const sealed = this.sealLeftover(this.path);
      if (sealed !== null) claimed.push(sealed);
    }

    for (const name of [...names].sort()) {
      if (name === ownBase || ownSegment.test(name)) continue;
      const match = LEFTOVER_NAME.exec(name);
      if (match?.[1] === undefined) continue;
      const owner = Number(match[1]);
      if (owner === this.pid || this.isAlive(owner)) continue;
      const sealed = this.sealLeftover(join(dir, name));
      if (sealed !== null) claimed.push(sealed);
    }
    return claimed;
  }

  /** Where {@link Spool.reject} keeps refused records. */
  get rejectedPath(): string {
    return join(dirname(this.path), `rejected-${basename(this.stem)}.jsonl`);
  }

  /** Appends records the store refused to {@link Spool.rejectedPath}, fsync'd, and returns that path. */
  reject(records: readonly ToolExecutionRecord[]): Promise<string> {
    return this.serialize(async () => {
      const path = this.rejectedPath;
      await makeDirectory(dirname(path));
      const handle = await open(path, 'a');
      try {
        await handle.appendFile(records.map((record) => `${JSON.stringify(record)}\n`).join(''));
        await handle.sync();
      } finally {
        await handle.close();
      }
      return path;
    });
  }

  /** Closes the current segment. Its records stay on disk for a later replay. */
  close(): Promise<void> {
    this.takeSpilled();
    return this.serialize(async () => undefined);
  }

  /** Renames another file into this spool's next segment; null when it is empty or gone (another claimer took it). */
  private sealLeftover(path: string): string | null {
    let size: number;
    try {
      size = statSync(path).size;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw error;
    }
    if (size === 0) {
      try {
        unlinkSync(path);
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
      }
      return null;
    }
    const segment = this.segmentPath(this.nextSeq++);
    try {
      renameSync(path, segment);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw error;
    }
    return segment;
  }

  private segmentPath(seq: number): string {
    return `${this.stem}.${seq}.jsonl`;
  }

  private serialize<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.chain.then(operation, operation);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/** Creates a {@link Spool}. Nothing touches the disk until the first append or claim. */
export function createSpool(options: SpoolOptions): Spool {
  return new Spool(options);
}

/** One batch read back from a spool file. Line numbers are 0-based. */
export interface SpoolBatch {
  records: ToolExecutionRecord[];
  /** Lines in this batch that were not a record (truncated by a crash, or corrupted). */
  malformedLines: number[];
  /** The line number after the last line of this batch: resume from here. */
  nextLine: number;
}

/**
 * Streams a spool file in batches of at most `batchSize` records, never holding the whole file.
 * Lines before `fromLine` are skipped unparsed. A missing file yields nothing. Blank lines are
 * ignored; any other line that is not a record is reported in `malformedLines`, never thrown.
 */
export async function* readSpoolBatches(
  path: string,
  options: { batchSize: number; fromLine?: number },
): AsyncGenerator<SpoolBatch> {
  if ((await fileSize(path)) === null) return;
  const fromLine = options.fromLine ?? 0;
  const stream = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let lineNo = -1;
  let batch: SpoolBatch = { records: [], malformedLines: [], nextLine: fromLine };
  try {
    for await (const line of lines) {
      lineNo++;
      if (lineNo < fromLine) continue;
      batch.nextLine = lineNo + 1;
      if (line.trim() === '') continue;
      const record = parseSpoolLine(line);
      if (record === null) batch.malformedLines.push(lineNo);
      else batch.records.push(record);
      if (batch.records.length >= options.batchSize) {
        yield batch;
        batch = { records: [], malformedLines: [], nextLine: lineNo + 1 };
      }
    }
    if (batch.records.length > 0 || batch.malformedLines.length > 0) yield batch;
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** Parses one spool line, or returns null when it is not a record with an execution_id. */
export function parseSpoolLine(line: string): ToolExecutionRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { execution_id?: unknown }).execution_id;
  if (typeof id !== 'string' || id === '') return null;
  return value as ToolExecutionRecord;
}

/** Removes a replayed segment; a file already gone is fine. */
export async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

async function fileSize(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
