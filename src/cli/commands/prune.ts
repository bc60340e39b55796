/**
 * `faultline prune --older-than 30d`: retention for a store that would otherwise grow without
 * bound. Deletes the records created before the cutoff, and what they added to the hourly rollups
 * with them, so `stats`, `alerts` and the dashboard afterwards describe exactly the records that
 * remain (see `Store.prune`). Stored trajectories and the correction memory are kept.
 */
import { Command } from 'commander';
import { parseSince } from '../../monitor/time-window.js';
import { displayStoreSpec, DEFAULT_SQLITE_PATH } from '../../store/open-store.js';
import { canPrune, pruneBefore } from '../../store/retention.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';
import { openExistingStore } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface PruneCommandOptions {
  db?: string;
  olderThan?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function pruneCommand(ctx: CliContext): Command {
  return new Command('prune')
    .description('Delete records older than an age (and their share of the rollups), e.g. prune --older-than 30d')
    .addOption(storeOption('store to read'))
    .option('--older-than <age>', 'delete records created before this: a duration back from now (90m, 24h, 30d) or an ISO date (required)')
    .option('--dry-run', 'only count the records that would be deleted')
    .option('--json', 'print the result as one JSON line')
    .addHelpText(
      'after',
      [
        '',
        'Stats afterwards equal stats computed from the records that remain; a failure signature that',
        'still has records keeps the time it was first seen. Stored trajectories and the correction',
        'memory are kept. A SQLite file does not shrink (SQLite reuses the freed pages for new records).',
        'A runtime or proxy can prune by itself: createRuntime({ retention: "30d" }), proxy --retention 30d.',
      ].join('\n'),
    )
    .action(async (opts: PruneCommandOptions) => {
      const { io } = ctx;
      if (opts.olderThan === undefined) throw new CliError('--older-than is required, e.g. --older-than 30d');
      const now = Date.now();
      const cutoff = parseSince(opts.olderThan, now, '--older-than');
      const shown = displayStoreSpec(opts.db ?? DEFAULT_SQLITE_PATH);
      const store = await openExistingStore(opts.db, io, { boundReads: true });
      let deleted: number;
      let remaining: number;
      try {
        if (!canPrune(store)) throw new CliError(`the ${store.kind} store cannot prune`);
        deleted = opts.dryRun === true ? await store.count({ until: cutoff }) : await pruneBefore(store, cutoff);
        remaining = (await store.count()) - (opts.dryRun === true ? deleted : 0);
      } finally {
        await store.close();
      }
      const cutoffIso = new Date(cutoff).toISOString();
      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify({ store: shown, older_than: opts.olderThan, cutoff: cutoffIso, dry_run: opts.dryRun === true, deleted, remaining }));
        return;
      }
      const verb = opts.dryRun === true ? 'would delete' : 'deleted';
      writeLine(io.stdout, `faultline prune: ${verb} ${deleted} record${deleted === 1 ? '' : 's'} created before ${cutoffIso} from ${shown}; ${remaining} remain`);
    });
}
