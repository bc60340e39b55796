/**
 * `faultline annotate`: runs the rule annotators, a semantic judge (`--judge heuristic`, the
 * default, or `--judge llm:<model>` over an OpenAI-compatible endpoint, verdicts cached in
 * `--judge-cache`) and the outcome backtrace over the stored trajectories, flags first-seen
 * failure signatures (`rare_failure`), stores them back with their labels and filled-in
 * decisions (re-annotating replaces the earlier labels but keeps reviewers' decisions), and
 * reports the labels; `--out` also writes the annotated trajectories as JSONL.
 */
import { isAbsolute, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { annotateJudged, DEFAULT_JUDGE_CACHE_PATH, heuristicSemanticJudge, parseJudgeSpec, type SemanticJudge } from '../../annotate/judge/judged-annotation.js';
import { jsonLineOf } from '../../annotate/annotated-lines.js';
import { JUDGE_ERROR, LABEL_NAMES } from '../../annotate/label.js';
import { RARE_FAILURE, RareFailureIndex } from '../../annotate/rare-failure.js';
import type { LlmJudgeStats } from '../../annotate/judge/llm.js';
import type { Store, TrajectoryStore } from '../../core/store-types.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { TRAJECTORY_SOURCES, type Trajectory, type TrajectorySource } from '../../core/trajectory-types.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';
import { assertWritableFile, openReplacingOutput } from '../output-paths.js';
import { openExistingStore } from '../report-options.js';
import { IMPORT_FORMATS, type ImportFormat } from '../../trajectory/importers/import-types.js';
import { annotateInput } from './annotate-input.js';
import { NO_SEMANTIC_JUDGE } from '../../annotate/annotate-file.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface AnnotateCommandOptions {
  db?: string;
  json?: boolean;
  source?: TrajectorySource;
  out?: string;
  judge: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  judgeCache?: string;
  input?: string;
  format?: ImportFormat;
  threads?: string;
}

/** The most worker threads `--threads` takes. */
const MAX_THREADS = 64;

function parseThreads(text: string): number {
  const n = Number(text.trim());
  if (!/^\d{1,2}$/.test(text.trim()) || n < 1 || n > MAX_THREADS) throw new CliError(`invalid --threads ${JSON.stringify(text)}: expected an integer from 1 to ${MAX_THREADS}`);
  return n;
}

export type { AnnotateJsonLine } from '../../annotate/annotated-lines.js';

const PAGE = 500;

export function annotateCommand(ctx: CliContext): Command {
  return new Command('annotate')
    .description('Label stored trajectories (or a log file, --input): rule annotators, a semantic judge (heuristic or an LLM), rare failures, and the outcome backtrace')
    .addOption(storeOption('store to read'))
    .addOption(new Option('--source <source>', 'only trajectories from this source').choices(TRAJECTORY_SOURCES))
    .option('--json', 'print one JSON object per trajectory per line: { trajectory_id, source_id, outcome, outcome_source, labels }')
    .option('--out <file>', 'also write the annotated trajectories (decisions filled in, labels alongside) as JSONL')
    .option('--judge <judge>', "semantic judge: 'heuristic' (offline), 'llm:<model>' (an OpenAI-compatible endpoint) or 'none' (rules and backtrace only)", 'heuristic')
    .addOption(optionDefaultShown('--base-url <url>', "the LLM judge's endpoint, including /v1", "$OPENAI_BASE_URL, then https://api.openai.com/v1"))
    .option('--api-key-env <name>', "environment variable holding the LLM judge's API key", 'OPENAI_API_KEY')
    .option('--judge-cache <file>', "the LLM judge's verdict cache (JSONL)", DEFAULT_JUDGE_CACHE_PATH)
    .option('--input <file>', 'annotate a log file instead of the store, streaming (needs --format; nothing is stored)')
    .addOption(new Option('--format <format>', 'the --input file\'s format').choices(IMPORT_FORMATS))
    .addOption(optionDefaultShown('--threads <n>', 'worker threads for an --input file in the openai or anthropic format', 'one per core for a file of 16 MB or more; 1 keeps one thread'))
    .action(async (opts: AnnotateCommandOptions) => {
      const { io } = ctx;
      if ((opts.input === undefined) !== (opts.format === undefined)) throw new CliError('--input and --format go together: --input <file> --format <format>');
      if (opts.input !== undefined && (opts.db !== undefined || opts.source !== undefined)) throw new CliError('--input annotates a file without a store: --db and --source do not apply');
      if (opts.threads !== undefined && opts.input === undefined) throw new CliError('--threads applies to --input only');
      const threads = opts.threads === undefined ? undefined : parseThreads(opts.threads);
      const judge = await semanticJudge(opts, io.env, io.cwd);
      if (opts.input !== undefined && opts.format !== undefined) {
        const inputOptions = { input: opts.input, format: opts.format, ...(opts.json === true ? { json: true } : {}), ...(opts.out === undefined ? {} : { out: opts.out }), ...(threads === undefined ? {} : { threads }) };
        await annotateInput(io, inputOptions, judge);
        return;
      }
      const outFile = opts.out === undefined ? undefined : { path: isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out), shown: opts.out };
      // Checked before the store is opened: labels stored by a run that then cannot write --out would be half the job.
      if (outFile !== undefined) assertWritableFile(outFile.path, outFile.shown);
      const store = await openExistingStore(opts.db, io, { boundReads: true });
      const counts = new Map<string, number>([...LABEL_NAMES, JUDGE_ERROR, RARE_FAILURE].map((n) => [n, 0]));
      let trajectories = 0;
      let labelled = 0;
      let marks = 0;
      const inferredBy = new Map<string, number>();
      // Replaced only once every trajectory is annotated: a store that fails midway leaves the file as it was.
      const out = outFile === undefined ? undefined : openReplacingOutput(outFile.path, outFile.shown);
      let done = false;
      try {
        if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
        const rare = await rareFailureIndex(store);
        for (let afterId: string | undefined; ; ) {
          const page = await store.queryTrajectories({ limit: PAGE, ...(opts.source === undefined ? {} : { source: opts.source }), ...(afterId === undefined ? {} : { afterId }) });
          const annotated: Trajectory[] = [];
          for (const stored of page) {
            // Labels from an earlier run are replaced, never stacked; reviewers' decisions on them are kept.
            const result = await annotateJudged(stored, judge, rare);
            const labels = result.stored;
            annotated.push({ ...result.trajectory, labels });
            trajectories++;
            marks += result.marks.length;
            const basis = result.trajectory.outcome_basis;
            if (basis?.source === 'inferred') inferredBy.set(basis.by ?? 'a judge', (inferredBy.get(basis.by ?? 'a judge') ?? 0) + 1);
            if (labels.length > 0) labelled++;
            for (const label of labels) counts.set(label.name, (counts.get(label.name) ?? 0) + 1);
            if (opts.json === true) io.stdout.write(jsonLineOf(result.trajectory, labels));
            await out?.write(`${JSON.stringify({ ...result.trajectory, labels })}\n`);
          }
          await store.updateTrajectories(annotated);
          if (page.length < PAGE) break;
          afterId = page[page.length - 1]!.trajectory_id;
        }
        await out?.commit();
        done = true;
      } finally {
        await store.close();
        if (!done) await out?.discard();
      }
      if (opts.json === true) return;
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      writeLine(io.stdout, `faultline annotate: ${trajectories} trajectories, ${labelled} with labels, ${total} labels, ${marks} decisions marked by the backtrace`);
      for (const [name, count] of counts) writeLine(io.stdout, `  ${name.padEnd(18)} ${count}`);
      if (inferredBy.size > 0) {
        const by = [...inferredBy].map(([who, n]) => `${n} by ${who}`).join(', ');
        writeLine(io.stdout, `outcomes inferred from the final answers (the logs stated none): ${by}; export --exclude-inferred-outcomes leaves them out`);
      }
      if (judge.stats !== undefined) {
        const { requests, cache_hits, errors } = judge.stats;
        writeLine(io.stdout, `judge ${judge.source}: ${requests} requests, ${cache_hits} verdicts from the cache (${opts.judgeCache}), ${errors} steps without a verdict`);
      }
      if (trajectories === 0) {
        // A store of records only (a bench run, a runtime) holds no trajectories: say where they come from.
        writeLine(io.stdout, `no trajectories${opts.source === undefined ? '' : ` from ${opts.source}`} in the store: \`npx faultline import\` a log or run \`npx faultline bench --fission K\` to store some`);
        return;
      }
      writeLine(io.stdout, `labels stored with the trajectories${opts.out === undefined ? '' : `; annotated trajectories also written to ${opts.out}`}`);
    });
}

/** The judge `--judge` names; the LLM one (and the SDK it loads) only when asked for. */
async function semanticJudge(opts: AnnotateCommandOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<SemanticJudge & { stats?: LlmJudgeStats }> {
  if (opts.judge.trim() === 'none') return NO_SEMANTIC_JUDGE;
  const spec = parseJudgeSpec(opts.judge);
  if (spec === undefined) throw new CliError(`--judge must be 'heuristic', 'llm:<model>' or 'none', got ${JSON.stringify(opts.judge)}`);
  if (spec.kind === 'heuristic') return heuristicSemanticJudge();
  const [{ createLlmJudge }, { fileJudgeCache }] = await Promise.all([import('../../annotate/judge/llm.js'), import('../../annotate/judge/judge-cache.js')]);
  const cacheShown = opts.judgeCache ?? DEFAULT_JUDGE_CACHE_PATH;
  const cachePath = resolve(cwd, cacheShown);
  // The cache is appended to as verdicts arrive (its directory made at the first): a path it cannot take is one line now, not a failure after paid-for requests.
  assertWritableFile(cachePath, cacheShown, { createDirectory: true });
  return createLlmJudge({
    model: spec.model,
    env,
    cache: fileJudgeCache(cachePath, spec.model),
    ...(opts.baseUrl === undefined ? {} : { baseUrl: opts.baseUrl }),
    ...(opts.apiKeyEnv === undefined ? {} : { apiKeyEnv: opts.apiKeyEnv }),
  });
}

/** Where every failure signature was first seen: all stored trajectories (not just `--source`) and the record store's signatures. */
async function rareFailureIndex(store: Store & TrajectoryStore): Promise<RareFailureIndex> {
  const index = new RareFailureIndex();
  for (let afterId: string | undefined; ; ) {
    const page = await store.queryTrajectories({ limit: PAGE, ...(afterId === undefined ? {} : { afterId }) });
    for (const trajectory of page) index.observe(trajectory);
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.trajectory_id;
  }
  index.observeRecordSignatures(await store.signatures({ since: 0, until: Date.now() + 366 * 86_400_000 }));
  return index;
}
