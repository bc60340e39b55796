/**
 * Where saved bench runs are and how they are named: each run is a directory of report files
 * (results.json, report.md, report.html) under `.faultline/bench/<run id>/` unless `--out` put it
 * elsewhere. `bench compare` and the dashboard find runs the same way.
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { readResults, RESULTS_FILE, type ResultsFile } from './report/write-report.js';

/** The directory runs are saved under, relative to the working directory. */
export const BENCH_RUNS_DIR = join('.faultline', 'bench');

/** A run id as `bench` makes them (a UUIDv7) or a user names a directory: no path separators. */
const RUN_ID = /^[\w.-]+$/;

export const isRunId = (text: string): boolean => RUN_ID.test(text) && text !== '.' && text !== '..';

/**
 * A saved run: a results.json path, a directory holding one, or a run id under `.faultline/bench/`
 * of `cwd`.
 * @throws ConfigError with one line when there is no run there or it is not a results file.
 */
export async function loadStoredRun(ref: string, cwd: string): Promise<ResultsFile> {
  const direct = resolve(cwd, ref);
  if (existsSync(direct)) return readResults(direct);
  const byId = join(cwd, BENCH_RUNS_DIR, ref);
  if (isRunId(ref) && existsSync(byId)) return readResults(byId);
  throw new ConfigError(`no FailBench run at ${ref} (give a results.json, its directory, or a run id under ${BENCH_RUNS_DIR}/)`, 'run');
}

/** A run directory found under the runs directory, before its results are read. */
export interface StoredRunEntry {
  /** The directory's name: the run id `bench` gave it. */
  id: string;
  /** Its results.json. */
  path: string;
  /** The file's modification time and size, so a reader can keep what it parsed until they change. */
  mtimeMs: number;
  size: number;
}

/**
 * The runs saved under `dir` (default: `.faultline/bench/`), newest first: every directory there
 * holding a results.json. A missing `dir` holds none.
 */
export async function listStoredRuns(dir: string): Promise<StoredRunEntry[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory() && isRunId(d.name)).map((d) => d.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const entries: StoredRunEntry[] = [];
  for (const id of names) {
    const path = join(dir, id, RESULTS_FILE);
    try {
      const s = await stat(path);
      if (s.isFile()) entries.push({ id, path, mtimeMs: s.mtimeMs, size: s.size });
    } catch {
      // A directory without results.json is not a run (an interrupted one, or something else).
    }
  }
  return entries.sort((a, b) => b.mtimeMs - a.mtimeMs || b.id.localeCompare(a.id));
}
