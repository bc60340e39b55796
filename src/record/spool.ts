/**
 * The recorder's spool: an append-only JSON-lines file where records wait while the store is
 * failing, so an outage costs disk, not memory and not data.
 *
 * Layout, for a spool path `<dir>/<stem>.jsonl`:
 * - `<stem>.jsonl` is the active file; batches are appended to it and fsync'd one by one.
 * - `<stem>.<n>.jsonl` are sealed segments: files waiting to be replayed into the store. Sealing
 *   (a rename) lets replay read a file nobody appends to any more, and delete it once all of it
 *   is stored.
 * - `rejected-<stem>.jsonl` keeps records the store refused while accepting others. They are never
 *   replayed automatically (the name does not start with a pid), only kept for inspection.
 * - The default stem is `<pid>-<random>`, so a later process can tell whose files are left over:
 *   files named `<pid>-….jsonl` whose pid is no longer alive are claimed (renamed into the
 *   claimer's own segment names, which is atomic, so two claimers never replay the same file
 *   twice at once) and replayed. Limitation: pids are only meaningful inside one pid namespace,
 *   so one spool directory must not be shared by processes in different containers.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { makeDirectory, makeDirectorySync } from '../make-directory.js';
import type { ToolExecutionRecord } from './types.js';

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
 * Appends batches durably, seals the active file into segments for replay, and claims files left
 * over by earlier processes. All file operations are serialized, so an append never races a seal.
 */
export class Spool {
  /** The absolute path of the active file. */
  readonly path: string;
  private readonly pid: number;
  private readonly isAlive: (pid: number) => boolean;
  private readonly stem: string;
  private handle: FileHandle | null = null;
  private unsealedBytes = 0;
  /** A failed append may have left half a line behind; the next append starts on a fresh line. */
  private needsLineBreak = false;
  private nextSeq = 1;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(options: SpoolOptions) {
    this.path = resolve(options.path);
    this.pid = options.pid ?? process.pid;
    this.isAlive = options.isAlive ?? isProcessAlive;
    this.stem = this.path.endsWith('.jsonl') ? this.path.slice(0, -'.jsonl'.length) : this.path;
  }

  /** Whether the active file holds records that are not in a sealed segment yet. */
  get hasUnsealedData(): boolean {
    return this.unsealedBytes > 0;
  }

  /** Appends one line per record and fsyncs before resolving. Creates the directory on first use. */
  append(records: readonly ToolExecutionRecord[]): Promise<void> {
    return this.serialize(async () => {
      if (records.length === 0) return;
      let text = this.needsLineBreak ? '\n' : '';
      for (const record of records) text += `${JSON.stringify(record)}\n`;
      try {
        if (this.handle === null) {
          await makeDirectory(dirname(this.path));
          this.handle = await open(this.path, 'a');
        }
        await this.handle.appendFile(text);
        await this.handle.sync();
        this.needsLineBreak = false;
        this.unsealedBytes += Buffer.byteLength(text);
      } catch (error) {
        this.needsLineBreak = true;
        await this.closeHandle();
        throw error;
      }
    });
  }

  /**
   * {@link Spool.append}, synchronously: for the process's `exit` event, where nothing
   * asynchronous runs any more (see recorder.ts, "records left at exit"). An append of this spool
   * that was in flight may have left half a line: the records start on a fresh line either way,
   * and replay counts the broken line as malformed. It bypasses the operation chain on purpose,
   * since the chain will never run again.
   */
  appendSync(records: readonly ToolExecutionRecord[]): void {
    if (records.length === 0) return;
    let text = '';
    for (const record of records) text += `${JSON.stringify(record)}\n`;
    makeDirectorySync(dirname(this.path));
    const fd = openSync(this.path, 'a+');
    try {
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) text = `\n${text}`;
      }
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.unsealedBytes += Buffer.byteLength(text);
  }

  /**
   * Closes the active file and renames it to the next segment name, returning that path, or null
   * when there was nothing to seal. The next append starts a new active file.
   */
  seal(): Promise<string | null> {
    return this.serialize(async () => {
      await this.closeHandle();
      this.unsealedBytes = 0;
      this.needsLineBreak = false;
      const size = await fileSize(this.path);
      if (size === null) return null;
      if (size === 0) {
        await unlinkIfPresent(this.path);
        return null;
      }
      const segment = this.segmentPath(this.nextSeq++);
      await rename(this.path, segment);
      return segment;
    });
  }

  /**
   * Finds files that earlier runs left in the spool directory: this spool's own segments and active
   * file (a restart with the same path), and files of processes that are no longer alive. Returns
   * them as this spool's segments, oldest first. Another process's file that vanishes mid-claim was
   * claimed by someone else and is skipped.
   */
  claimLeftovers(): Promise<string[]> {
    return this.serialize(async () => {
      const dir = dirname(this.path);
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return [];
        throw error;
      }
      const ownBase = basename(this.path);
      const ownSegment = new RegExp(`^${escapeRegExp(basename(this.stem))}\\.(\\d+)\\.jsonl$`);
      const ownSegments: Array<{ seq: number; path: string }> = [];
      for (const name of names) {
        const match = ownSegment.exec(name);
        if (match?.[1] !== undefined) ownSegments.push({ seq: Number(match[1]), path: join(dir, name) });
      }
      ownSegments.sort((a, b) => a.seq - b.seq);
      this.nextSeq = Math.max(this.nextSeq, (ownSegments.at(-1)?.seq ?? 0) + 1);
      const claimed = ownSegments.map((segment) => segment.path);

      if (names.includes(ownBase) && this.handle === null && this.unsealedBytes === 0) {
        const sealed = await this.sealLeftover(this.path);
        if (sealed !== null) claimed.push(sealed);
      }

      for (const name of [...names].sort()) {
        if (name === ownBase || ownSegment.test(name)) continue;
        const match = LEFTOVER_NAME.exec(name);
        if (match?.[1] === undefined) continue;
        const owner = Number(match[1]);
        if (owner === this.pid || this.isAlive(owner)) continue;
        const sealed = await this.sealLeftover(join(dir, name));
        if (sealed !== null) claimed.push(sealed);
      }
      return claimed;
    });
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

  /** Closes the active file. Its records stay on disk for a later replay. */
  close(): Promise<void> {
    return this.serialize(() => this.closeHandle());
  }

  private async sealLeftover(path: string): Promise<string | null> {
    const size = await fileSize(path);
    if (size === null) return null;
    if (size === 0) {
      await unlinkIfPresent(path);
      return null;
    }
    const segment = this.segmentPath(this.nextSeq++);
    try {
      await rename(path, segment);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw error;
    }
    return segment;
  }

  private segmentPath(seq: number): string {
    return `${this.stem}.${seq}.jsonl`;
  }

  private async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close().catch(() => undefined);
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
