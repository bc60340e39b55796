/**
 * `faultline annotate`: runs the rule annotators, the heuristic semantic judge and the outcome
 * backtrace over the stored trajectories, stores them back with their labels and filled-in
 * decisions (re-annotating replaces the earlier labels), and reports the labels; `--out` also
 * writes the annotated trajectories as JSONL.
 */
import { createWriteStream } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { once } from 'node:events';
import { Command, Option } from 'commander';
import { annotateTrajectory } from '../../annotate/annotate-trajectory.js';
import { LABEL_NAMES, type LabelName } from '../../annotate/label.js';
import { openStore } from '../../store/open-store.js';
import { hasTrajectoryStore } from '../../trajectory/trajectory-row.js';
import { TRAJECTORY_SOURCES, type Trajectory, type TrajectorySource } from '../../trajectory/types.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';

interface AnnotateCommandOptions {
  db?: string;
  json?: boolean;
  source?: TrajectorySource;
  out?: string;
}

/** One `--json` line. */
export interface AnnotateJsonLine {
  trajectory_id: string;
  source_id: string | null;
  labels: { name: LabelName; step_index: number; confidence: number }[];
}

const PAGE = 500;

export function annotateCommand(ctx: CliContext): Command {
  return new Command('annotate')
    .description('Label stored trajectories: rule annotators, the heuristic semantic judge, and the outcome backtrace')
    .option('--db <store>', 'store to read: a SQLite path (default .faultline/faultline.db) or a postgres:// URL (?schema=NAME)')
    .addOption(new Option('--source <source>', 'only trajectories from this source').choices(TRAJECTORY_SOURCES))
    .option('--json', 'print one JSON object per trajectory per line: { trajectory_id, source_id, labels }')
    .option('--out <file>', 'also write the annotated trajectories (decisions filled in, labels alongside) as JSONL')
    .action(async (opts: AnnotateCommandOptions) => {
      const { io } = ctx;
      const store = await openStore(opts.db, { cwd: io.cwd });
      const counts = new Map<LabelName, number>(LABEL_NAMES.map((n) => [n, 0]));
      let trajectories = 0;
      let labelled = 0;
      let marks = 0;
      const out = opts.out === undefined ? undefined : createWriteStream(isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out));
      try {
        if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
        for (let afterId: string | undefined; ; ) {
          const page = await store.queryTrajectories({ limit: PAGE, ...(opts.source === undefined ? {} : { source: opts.source }), ...(afterId === undefined ? {} : { afterId }) });
          const annotated: Trajectory[] = [];
          for (const stored of page) {
            // Labels from an earlier run are replaced, never stacked.
            const { labels: _previous, ...unlabelled } = stored;
            const result = annotateTrajectory(unlabelled);
            annotated.push({ ...result.trajectory, labels: result.labels.map((l) => ({ name: l.name, step_index: l.step_index, confidence: l.confidence, reason: l.reason })) });
            trajectories++;
            marks += result.marks.length;
            if (result.labels.length > 0) labelled++;
            for (const label of result.labels) counts.set(label.name, (counts.get(label.name) ?? 0) + 1);
            if (opts.json === true) {
              const line: AnnotateJsonLine = {
                trajectory_id: stored.trajectory_id,
                source_id: stored.source_id,
                labels: result.labels.map((l) => ({ name: l.name, step_index: l.step_index, confidence: l.confidence })),
              };
              writeLine(io.stdout, JSON.stringify(line));
            }
            if (out !== undefined && !out.write(`${JSON.stringify({ ...result.trajectory, labels: result.labels })}\n`)) await once(out, 'drain');
          }
          await store.updateTrajectories(annotated);
          if (page.length < PAGE) break;
          afterId = page[page.length - 1]!.trajectory_id;
        }
      } finally {
        await store.close();
        if (out !== undefined) {
          out.end();
          await once(out, 'close');
        }
      }
      if (opts.json === true) return;
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      writeLine(io.stdout, `faultline annotate: ${trajectories} trajectories, ${labelled} with labels, ${total} labels, ${marks} decisions marked by the backtrace`);
      for (const [name, count] of counts) writeLine(io.stdout, `  ${name.padEnd(18)} ${count}`);
      writeLine(io.stdout, `labels stored with the trajectories${opts.out === undefined ? '' : `; annotated trajectories also written to ${opts.out}`}`);
    });
}
