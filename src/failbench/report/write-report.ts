/**
 * A bench run on disk: `results.json` (everything, for `bench compare` and later analysis),
 * `report.md` and `report.html`. The files are written to temporary names and renamed together,
 * all or nothing (see replaceFiles), so a failed write never leaves half a report behind.
 */
import { rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileErrorReason, replaceFiles } from '../../io/replace-files.js';
import { ConfigError, FaultlineError } from '../../core/errors.js';
import { makeDirectory } from '../../io/make-directory.js';
import { readInputText } from '../../io/read-input-file.js';
import { parseJsonText } from '../../io/yaml-text.js';
import type { SuiteResult } from '../runner.js';
import type { AgentScore } from '../score.js';
import { DIMENSIONS } from '../types.js';
import { changedStates } from './changed-state.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';

export const RESULTS_FORMAT = 'faultline.failbench.results';
export const RESULTS_FILE = 'results.json';

export interface ResultsFile {
  format: typeof RESULTS_FORMAT;
  format_version: 1;
  /**
   * `changed`: each result's `state` holds only the entities its run created or changed (see
   * changed-state.ts); the seeded rest follows from the snapshot's seed and anchor.
   */
  state_scope: 'changed';
  suite: SuiteResult;
  scores: AgentScore[];
}

export interface WrittenReport {
  dir: string;
  results: string;
  markdown: string;
  html: string;
}

/**
 * Writes results.json, report.md and report.html into `dir` (created if needed). `shownDir` is how
 * messages name `dir` (the `--out` the user typed); default `dir`.
 * @throws FaultlineError with one line naming the file when one cannot be written (a full disk, an
 * I/O error); the files that were there stay as they were, and no temporary file is left.
 */
export async function writeReport(dir: string, suite: SuiteResult, scores: AgentScore[], options: { shownDir?: string } = {}): Promise<WrittenReport> {
  await makeDirectory(dir);
  const states = changedStates(suite.results.map((r) => r.state));
  const saved: SuiteResult = { ...suite, results: suite.results.map((r, i) => ({ ...r, state: states[i]! })) };
  const file: ResultsFile = { format: RESULTS_FORMAT, format_version: 1, state_scope: 'changed', suite: saved, scores };
  const outputs: [string, string][] = [
    [join(dir, RESULTS_FILE), `${JSON.stringify(file, null, 2)}\n`],
    [join(dir, 'report.md'), renderMarkdown({ suite, scores })],
    [join(dir, 'report.html'), renderHtml({ suite, scores })],
  ];
  const suffix = `.tmp-${process.pid}`;
  // All three are written before any is renamed, and renamed all or nothing: a report is never
  // one run's results.json beside another run's report.html.
  try {
    for (const [path, text] of outputs) {
      try {
        await writeFile(`${path}${suffix}`, text);
      } catch (error) {
        const shown = options.shownDir === undefined ? path : join(options.shownDir, basename(path));
        throw new FaultlineError(`cannot write ${shown}: ${fileErrorReason(error)}`, { cause: error });
      }
    }
    replaceFiles(outputs.map(([path]) => [`${path}${suffix}`, path] as const));
  } finally {
    // Quietly: this runs while a failure is being reported, which a second one must not replace;
    // and what is not a file there (a directory) is not ours.
    await Promise.all(outputs.map(([path]) => rm(`${path}${suffix}`, { force: true }).catch(() => undefined)));
  }
  return { dir, results: outputs[0]![0], markdown: outputs[1]![0], html: outputs[2]![0] };
}

function looksLikeResults(value: unknown): value is ResultsFile {
  const v = value as Partial<ResultsFile> | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    v.format === RESULTS_FORMAT &&
    v.format_version === 1 &&
    typeof v.suite?.meta?.runId === 'string' &&
    Array.isArray(v.scores) &&
    v.scores.every((s) => typeof s?.agent === 'string' && DIMENSIONS.every((d) => typeof s.dimensions?.[d]?.n === 'number' && typeof s.dimensions[d].rate === 'number'))
  );
}

/**
 * Reads a saved run: a results.json path, or a directory holding one.
 * @throws ConfigError with one line when it is missing or not a FailBench results file.
 */
export async function readResults(path: string): Promise<ResultsFile> {
  let file = path;
  try {
    if ((await stat(path)).isDirectory()) file = join(path, RESULTS_FILE);
  } catch {
    throw new ConfigError(`no FailBench run at ${path}`, 'run');
  }
  const read = await readInputText(file);
  if (!read.ok) {
    const missing = (read.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    throw new ConfigError(missing ? `no ${RESULTS_FILE} in ${path}` : `cannot read ${file}: ${read.reason}`, 'run', { cause: read.cause });
  }
  const parsed = parseJsonText(read.value);
  if (!parsed.ok) throw new ConfigError(`${file} is not JSON: ${parsed.problem.replace(/^invalid JSON: /, '')}`, 'run', { cause: parsed.cause });
  if (!looksLikeResults(parsed.value)) throw new ConfigError(`${file} is not a FailBench results file`, 'run');
  return parsed.value;
}
