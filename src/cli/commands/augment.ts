/**
 * `faultline augment`: stores deterministic variants of every stored failure trajectory
 * (renamed tools and fields, another domain, perturbed values; see src/dataset/augment) as new
 * trajectories with `source: augmented`, each tagged with the trajectory it was made from.
 * Idempotent: variants already stored (same trajectory, kind, seed and variant number) are
 * skipped. `--llm <model>` stores LLM-reworded variants instead (an OpenAI-compatible endpoint:
 * `--base-url`, else OPENAI_BASE_URL; the key from OPENAI_API_KEY).
 */
import { Command, Option } from 'commander';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import { AUGMENT_KINDS, isAugmentable, variantsOf, type AugmentKind } from '../../dataset/augment/augment.js';
import { createLlmRewriter, type LlmRewriter } from '../../dataset/augment/llm-rewrite.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { TRAJECTORY_SOURCES, type Trajectory, type TrajectorySource } from '../../core/trajectory-types.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';
import { openExistingStore } from '../report-options.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface AugmentCommandOptions {
  db?: string;
  source?: TrajectorySource;
  variants: string;
  seed: string;
  kinds: string;
  llm?: string;
  baseUrl?: string;
  json?: boolean;
}

/** The `--json` summary. */
export interface AugmentSummary {
  trajectories_read: number;
  failure_trajectories: number;
  variants: number;
  by_kind: Record<string, number>;
  stored: number;
  already_stored: number;
  llm?: { model: string; requests: number; rewritten: number; failed: number; nothing_to_rewrite: number };
}

const PAGE = 200;
const MAX_VARIANTS = 100;

function parseCount(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_VARIANTS) throw new CliError(`--variants must be an integer from 1 to ${MAX_VARIANTS}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new CliError(`--seed must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

function parseKinds(text: string): AugmentKind[] {
  const kinds = [...new Set(text.split(',').map((k) => k.trim()))];
  const bad = kinds.find((k) => !(AUGMENT_KINDS as readonly string[]).includes(k));
  if (bad !== undefined) throw new CliError(`--kinds takes a comma-separated list of ${AUGMENT_KINDS.join(', ')}; got ${JSON.stringify(bad)}`);
  return kinds as AugmentKind[];
}

/** The variants to store for one page, LLM-rewritten when asked (skipping rewrites already stored). */
async function variantsFor(page: readonly Trajectory[], make: (t: Trajectory) => Trajectory[], rewriter: LlmRewriter | undefined, has: (id: string) => Promise<boolean>, summary: AugmentSummary): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const original of page) {
    if (!isAugmentable(original)) continue;
    summary.failure_trajectories++;
    for (const variant of make(original)) {
      summary.variants++;
      const kind = variant.metadata.augmentation!.kind;
      summary.by_kind[kind] = (summary.by_kind[kind] ?? 0) + 1;
      if (rewriter === undefined) {
        out.push(variant);
        continue;
      }
      if (await has(rewriter.idFor(variant, original))) {
        summary.already_stored++;
        continue;
      }
      const rewritten = await rewriter.rewrite(variant, original);
      if (rewritten !== undefined) out.push(rewritten);
    }
  }
  return out;
}

export function augmentCommand(ctx: CliContext): Command {
  return new Command('augment')
    .description('Store deterministic variants of failure trajectories: renamed tools and fields, another domain, perturbed values (source "augmented")')
    .addOption(storeOption('store to read and write'))
    .addOption(new Option('--source <source>', 'only augment trajectories from this source').choices(TRAJECTORY_SOURCES))
    .option('--variants <n>', 'variants per kind and trajectory', '1')
    .option('--seed <n>', 'seed of the variants (a non-negative integer); the same seed gives the same variants', String(DEFAULT_SEED))
    .option('--kinds <list>', `comma-separated kinds: ${AUGMENT_KINDS.join(', ')}`, AUGMENT_KINDS.join(','))
    .option('--llm <model>', 'reword each variant\'s instruction and error messages with this model (OpenAI-compatible chat.completions; key from OPENAI_API_KEY)')
    .addOption(optionDefaultShown('--base-url <url>', 'with --llm: the endpoint, including /v1', 'OPENAI_BASE_URL, then https://api.openai.com/v1'))
    .option('--json', 'print the summary as JSON')
    .action(async (opts: AugmentCommandOptions) => {
      const { io } = ctx;
      const variants = parseCount(opts.variants);
      const seed = parseSeed(opts.seed);
      const kinds = parseKinds(opts.kinds);
      if (opts.baseUrl !== undefined && opts.llm === undefined) throw new CliError('--base-url only applies with --llm <model>');
      const rewriter = opts.llm === undefined ? undefined : createLlmRewriter({ model: opts.llm, env: io.env, ...(opts.baseUrl === undefined ? {} : { baseUrl: opts.baseUrl }) });
      const summary: AugmentSummary = { trajectories_read: 0, failure_trajectories: 0, variants: 0, by_kind: {}, stored: 0, already_stored: 0 };

      const store = await openExistingStore(opts.db, io, { boundReads: true });
      try {
        if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
        const has = async (id: string) => (await store.getTrajectory(id)) !== null;
        for (let afterId: string | undefined; ; ) {
          const page = await store.queryTrajectories({ limit: PAGE, ...(opts.source === undefined ? {} : { source: opts.source }), ...(afterId === undefined ? {} : { afterId }) });
          summary.trajectories_read += page.length;
          const batch = await variantsFor(page, (t) => variantsOf(t, { kinds, variants, seed }), rewriter, has, summary);
          const stored = batch.length === 0 ? 0 : await store.insertTrajectories(batch);
          summary.stored += stored;
          summary.already_stored += batch.length - stored;
          if (page.length < PAGE) break;
          afterId = page[page.length - 1]!.trajectory_id;
        }
      } finally {
        await store.close();
      }
      if (rewriter !== undefined) summary.llm = { model: rewriter.model, ...rewriter.stats };

      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify(summary, null, 2));
        return;
      }
      const byKind = Object.entries(summary.by_kind).map(([k, n]) => `${k} ${n}`).join(', ');
      writeLine(
        io.stdout,
        `faultline augment: ${summary.failure_trajectories} failure trajectories of ${summary.trajectories_read} read: ${summary.variants} variants${byKind === '' ? '' : ` (${byKind})`}, ${summary.stored} stored, ${summary.already_stored} already stored`,
      );
      if (summary.llm !== undefined) writeLine(io.stdout, `llm ${summary.llm.model}: ${summary.llm.rewritten} rewritten, ${summary.llm.failed} given up, ${summary.llm.requests} requests`);
    });
}
