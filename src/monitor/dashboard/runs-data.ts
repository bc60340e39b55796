/**
 * The saved FailBench runs the dashboard shows: the directories `faultline bench` writes under
 * `.faultline/bench/` (or the directory the dashboard is given), found and read with the code
 * `bench compare` uses (stored-runs.ts, compare.ts), so the page and the command agree.
 *
 * A results.json holds every call of every scenario run and can be large; what the pages need
 * (the metadata, the scenario list, the scores) is kept per file until its size or modification
 * time changes, so a list of many runs is not re-parsed on every request.
 */
import { join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { compareRuns, runDifferences, type RunComparison } from '../../failbench/compare.js';
import type { ResultsFile } from '../../failbench/report/write-report.js';
import type { SuiteMeta } from '../../failbench/runner.js';
import type { AgentScore } from '../../failbench/score.js';
import { isRunId, listStoredRuns, loadStoredRun, type StoredRunEntry } from '../../failbench/stored-runs.js';

/** A run as the pages use it: the results file without its per-run results. */
export type RunSummary = ResultsFile;

/** `/api/runs`: the runs found, newest first, and those that could not be read. */
export interface RunsList {
  dir: string;
  runs: { id: string; meta: SuiteMeta; scenarios: number; scores: Pick<AgentScore, 'agent' | 'score' | 'runs'>[] }[];
  unreadable: { id: string; error: string }[];
}

/** `/api/runs/compare`: what `bench compare --json` prints, and the differences it notes. */
export interface RunsComparison {
  a: string;
  b: string;
  comparisons: RunComparison[];
  differences: string[];
}

const CACHE_LIMIT = 256;

export interface RunsReader {
  list(): Promise<RunsList>;
  /** The run `id` under the directory; null when there is none. */
  get(id: string): Promise<RunSummary | null>;
  compare(a: string, b: string): Promise<RunsComparison>;
}

const slim = (file: ResultsFile): RunSummary => ({ ...file, suite: { ...file.suite, results: [] } });

export function createRunsReader(dir: string): RunsReader {
  const cache = new Map<string, { mtimeMs: number; size: number; run: RunSummary }>();

  async function read(entry: StoredRunEntry): Promise<RunSummary> {
    const hit = cache.get(entry.path);
    if (hit !== undefined && hit.mtimeMs === entry.mtimeMs && hit.size === entry.size) return hit.run;
    const run = slim(await loadStoredRun(entry.path, dir));
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(entry.path, { mtimeMs: entry.mtimeMs, size: entry.size, run });
    return run;
  }

  async function entryOf(id: string): Promise<StoredRunEntry | null> {
    if (!isRunId(id)) return null;
    return (await listStoredRuns(dir)).find((e) => e.id === id) ?? null;
  }

  async function get(id: string): Promise<RunSummary | null> {
    const entry = await entryOf(id);
    return entry === null ? null : read(entry);
  }

  return {
    async list() {
      const out: RunsList = { dir, runs: [], unreadable: [] };
      for (const entry of await listStoredRuns(dir)) {
        try {
          const run = await read(entry);
          out.runs.push({ id: entry.id, meta: run.suite.meta, scenarios: run.suite.scenarios.length, scores: run.scores.map((s) => ({ agent: s.agent, score: s.score, runs: s.runs })) });
        } catch (error) {
          if (!ConfigError.isInstance(error)) throw error;
          out.unreadable.push({ id: entry.id, error: error.message });
        }
      }
      return out;
    },
    get,
    async compare(a, b) {
      const [ra, rb] = [await get(a), await get(b)];
      for (const [ref, run] of [[a, ra], [b, rb]] as const) {
        if (run === null) throw new ConfigError(`no saved FailBench run ${JSON.stringify(ref)} in ${join(dir)}`, 'run');
      }
      return { a, b, comparisons: compareRuns(ra!, rb!), differences: runDifferences(ra!, rb!) };
    },
  };
}
