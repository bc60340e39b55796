/**
 * `faultline corrections`: shows the correction memory, newest first, and
 * with `--learn` first fills it from the stored trajectories: every failed step whose decision is
 * marked correct (`faultline annotate`'s outcome backtrace, a log's grading, a reviewer) and
 * names a recovery. Learning twice adds nothing: a recovery already remembered at the same time
 * or later is skipped.
 */
import { Command, Option } from 'commander';
import { correctionsFromTrajectory } from '../../annotate/corrections-from-trajectory.js';
import { describeRecovery } from '../../runtime/feedback.js';
import { correctionLimits, hasCorrectionMemory, recoveryKey } from '../../store/corrections.js';
import type { CorrectionMemoryStore, NewCorrection, Store } from '../../core/store-types.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { TRAJECTORY_SOURCES, type TrajectorySource } from '../../core/trajectory-types.js';
import { CliError } from '../cli-error.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import { openExistingStore, openReportStore, parseCount } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface CorrectionsOptions {
  db?: string;
  learn?: boolean;
  source?: TrajectorySource;
  signature?: string;
  limit: string;
  json?: boolean;
}

const PAGE = 500;

/**
 * Pushes what the stored trajectories teach. Only the newest occurrence of each (signature,
 * recovery) is pushed, oldest first and at most the memory's capacity, since older ones would be
 * evicted at once; one the memory already holds at the same time or later is skipped.
 * @returns how many were pushed, and how many trajectories were read
 */
async function learnFromTrajectories(store: Store & CorrectionMemoryStore, source: TrajectorySource | undefined): Promise<{ learned: number; read: number }> {
  if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
  const newest = new Map<string, NewCorrection>();
  let read = 0;
  for (let afterId: string | undefined; ; ) {
    const page = await store.queryTrajectories({ limit: PAGE, ...(source === undefined ? {} : { source }), ...(afterId === undefined ? {} : { afterId }) });
    for (const trajectory of page) {
      read++;
      for (const c of correctionsFromTrajectory(trajectory)) {
        const key = `${c.signature}\u001f${recoveryKey(c)}`;
        const seen = newest.get(key);
        if (seen === undefined || Date.parse(c.recovered_at) >= Date.parse(seen.recovered_at)) newest.set(key, c);
      }
    }
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.trajectory_id;
  }
  const { capacity } = correctionLimits();
  const candidates = [...newest.values()].sort((a, b) => Date.parse(a.recovered_at) - Date.parse(b.recovered_at)).slice(-capacity);
  let learned = 0;
  for (const c of candidates) {
    const stored = await store.listCorrections({ signature: c.signature, limit: Infinity });
    const key = recoveryKey(c);
    if (stored.some((e) => recoveryKey(e) === key && Date.parse(e.recovered_at) >= Date.parse(c.recovered_at))) continue;
    await store.pushCorrection(c);
    learned++;
  }
  return { learned, read };
}

export function correctionsCommand(ctx: CliContext): Command {
  return new Command('corrections')
    .description('Show the correction memory (recoveries that worked, per failure signature); --learn fills it from annotated trajectories')
    .addOption(storeOption('store to read'))
    .option('--learn', 'first add the recoveries that stored trajectories mark as correct (run `npx faultline annotate` before)')
    .addOption(new Option('--source <source>', 'with --learn: only trajectories from this source').choices(TRAJECTORY_SOURCES))
    .option('--signature <signature>', 'only this failure signature')
    .option('--limit <n>', 'entries to show', '20')
    .option('--json', 'print one correction per line as JSON')
    .action(async (opts: CorrectionsOptions) => {
      const { io } = ctx;
      const limit = parseCount(opts.limit, '--limit');
      if (opts.source !== undefined && opts.learn !== true) throw new CliError('--source applies only with --learn');
      const store = opts.learn === true ? await openExistingStore(opts.db, io, { boundReads: true }) : await openReportStore(opts.db, io);
      try {
        if (!hasCorrectionMemory(store)) throw new CliError(`the ${store.kind} store has no correction memory`);
        const learning = opts.learn === true ? await learnFromTrajectories(store, opts.source) : undefined;
        const entries = await store.listCorrections({ limit, ...(opts.signature === undefined ? {} : { signature: opts.signature }) });
        if (opts.json === true) {
          for (const entry of entries) writeLine(io.stdout, JSON.stringify(entry));
          return;
        }
        if (learning !== undefined) writeLine(io.stdout, `faultline corrections: learned ${learning.learned} from ${learning.read} trajectories`);
        if (entries.length === 0) {
          writeLine(io.stdout, 'the correction memory is empty');
          return;
        }
        writeLine(
          io.stdout,
          formatTable(entries, [
            { header: 'tool', value: (e) => e.tool_name, maxWidth: 28 },
            { header: 'failure', value: (e) => e.failure_type },
            { header: 'code', value: (e) => e.error_code },
            { header: 'what worked', value: (e) => describeRecovery(e.recovery), maxWidth: 60 },
            { header: 'recovered at', value: (e) => e.recovered_at },
            { header: 'uses', value: (e) => e.uses, align: 'right' },
            { header: 'signature', value: (e) => e.signature },
          ]),
        );
      } finally {
        await store.close();
      }
    });
}
