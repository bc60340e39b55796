/**
 * `faultline review`: the human spot-check of the semantic judges. Samples a share
 * (default 5 %) of the judge labels nobody has reviewed yet, shows each one in the terminal
 * (instruction, step, arguments, output excerpt, the judge's verdict and reason) and asks to
 * accept it, correct it to another label or to "not a failure", skip it, or quit. Each decision
 * is written to the label on its trajectory as soon as it is made. `--report` prints the judges'
 * precision from the decisions so far (`--json` for machines).
 *
 * Answers are read line by line with node:readline, so a terminal and piped text both work.
 */
import { HEURISTIC_JUDGE_QUALITY } from '../../annotate/judge/heuristic-judge-quality.js';
import { HEURISTIC_JUDGE_SOURCE } from '../../annotate/judge/judged-annotation.js';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import { LABEL_NAMES } from '../../annotate/label.js';
import { readJudgeLabels, saveLabelReview } from '../../annotate/review-store.js';
import {
  DEFAULT_REVIEW_SHARE,
  precisionReport,
  sampleForReview,
  type LabelRef,
  type PrecisionReport,
  type PrecisionRow,
} from '../../annotate/review.js';
import { formatPercent } from '../../monitor/format-figures.js';
import { truncateText } from '../../record/truncate.js';
import type { Store, TrajectoryStore } from '../../core/store-types.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import type { LabelReview, Trajectory, TrajectoryLabel } from '../../core/trajectory-types.js';
import { CliError } from '../cli-error.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext, type CliIo } from '../io.js';
import { openExistingStore, openReportStore, parseCount } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface ReviewCommandOptions {
  db?: string;
  share: string;
  seed: string;
  report?: boolean;
  json?: boolean;
}

const EXCERPT_CHARS = 400;

export function parseShare(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 1) throw new CliError(`--share must be a number in (0, 1], got ${JSON.stringify(text)}`);
  return value;
}

const percentOrDash = (p: number | null): string => (p === null ? '-' : formatPercent(p));

const rate = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(2));

/**
 * The heuristic judge's figures measured on the repository's labelled calls, beside the
 * reviewers': reviews see only the labels a judge gave, so they give its precision; its recall
 * needs the misses it did not flag, which only a labelled set has.
 */
function printMeasured(io: CliIo): void {
  const s = HEURISTIC_JUDGE_QUALITY.semantic_error;
  const sets = Object.entries(s.by_set).map(([set, c]) => `${set} ${rate(c.precision)} / ${rate(c.recall)} (${c.calls} calls)`).join('; ');
  writeLine(io.stdout, `judge:heuristic on the labelled calls in the repository: precision ${rate(s.precision)}, recall ${rate(s.recall)} (${s.calls} calls, ${s.misses} misses; ${sets})`);
  writeLine(io.stdout, '  reviews give a judge\'s precision; recall needs the misses it did not flag, which only a labelled set has');
}

function printReport(io: CliIo, report: PrecisionReport): void {
  printMeasured(io);
  writeLine(io.stdout, `judge precision from reviews: ${report.reviewed} of ${report.judge_labels} judge labels reviewed (precision = accepted / reviewed; corrected and rejected count against)`);
  if (report.reviewed === 0) {
    writeLine(io.stdout, "nothing reviewed yet: run 'npx faultline review' to review a sample");
    return;
  }
  const table = (title: string, rows: readonly PrecisionRow[]) =>
    formatTable(rows, [
      { header: title, value: (r) => r.key },
      { header: 'reviewed', value: (r) => r.reviewed, align: 'right' },
      { header: 'accepted', value: (r) => r.accepted, align: 'right' },
      { header: 'corrected', value: (r) => r.corrected, align: 'right' },
      { header: 'rejected', value: (r) => r.rejected, align: 'right' },
      { header: 'precision', value: (r) => percentOrDash(r.precision), align: 'right' },
      { header: '95% CI (Wilson)', value: (r) => `${formatPercent(r.ci95[0])} - ${formatPercent(r.ci95[1])}`, align: 'right' },
    ]);
  writeLine(io.stdout, table('judge', [...report.by_judge, report.overall]));
  writeLine(io.stdout);
  writeLine(io.stdout, table('label', report.by_label));
}

const excerpt = (value: unknown): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return text.length > EXCERPT_CHARS ? `${truncateText(text, EXCERPT_CHARS)}… (${text.length} characters)` : text;
};

function show(io: CliIo, n: number, of: number, trajectory: Trajectory, label: TrajectoryLabel): void {
  const step = trajectory.steps.find((s) => s.step_index === label.step_index);
  const out = (line = '') => writeLine(io.stdout, line);
  out();
  out(`[${n}/${of}] trajectory ${trajectory.trajectory_id}${trajectory.source_id === null ? '' : ` (${trajectory.metadata.source} ${trajectory.source_id})`}, step ${label.step_index} of ${trajectory.steps.length}`);
  out(`  instruction: ${trajectory.task_description ?? '(none recorded)'}`);
  if (step !== undefined) {
    out(`  call:        ${step.tool_name} ${excerpt(step.input_params)}`);
    out(`  status:      ${step.status ?? 'no result'}${step.failure_kind === null ? '' : ` (${step.failure_kind})`}`);
    out(`  output:      ${excerpt(step.response.body ?? step.response.message ?? null)}`);
  }
  const kind = label.mismatch_kind === undefined ? '' : `, ${label.mismatch_kind}`;
  out(`  judge:       ${label.source ?? 'unknown'} says ${label.name} (confidence ${label.confidence}${kind})`);
  out(`  reason:      ${label.reason}`);
}

/** Reads answers line by line; undefined once the input ends. */
type Ask = (prompt: string) => Promise<string | undefined>;

function asker(io: CliIo, input: NodeJS.ReadableStream & { isTTY?: boolean }): { ask: Ask; close: () => void } {
  const tty = input.isTTY === true;
  const rl = createInterface({ input, ...(tty ? { output: io.stdout, terminal: true } : { terminal: false }) });
  // Ctrl-C ends the session like `q`: every decision made so far is already stored.
  rl.on('SIGINT', () => rl.close());
  const lines = rl[Symbol.asyncIterator]();
  return {
    ask: async (prompt) => {
      // In a terminal readline redraws the line (editing, history) with its own prompt, so it must be that one.
      if (tty) {
        rl.setPrompt(prompt);
        rl.prompt();
      } else io.stdout.write(prompt);
      const next = await lines.next();
      return next.done === true ? undefined : String(next.value).trim();
    },
    close: () => rl.close(),
  };
}

type Answer = { decision: LabelReview['decision']; corrected_to?: string } | 'skip' | 'quit' | 'end of input';

/**
 * Asks for a decision on one label until one is given. An answer it does not know is told what
 * it takes; in the correction menu, an empty answer goes back to the first question (a `c` typed
 * by mistake) and `q` quits, as it does there.
 */
async function askDecision(ask: Ask, label: TrajectoryLabel): Promise<Answer> {
  let prompt = 'accept [a] / correct the label [c] / not a failure [n] / skip [s] / quit [q]? ';
  for (;;) {
    const answer = (await ask(prompt))?.toLowerCase();
    if (answer === undefined) return 'end of input';
    if (answer === 'q' || answer === 'quit') return 'quit';
    if (answer === 'a' || answer === 'accept') return { decision: 'accepted' };
    if (answer === 'n' || answer === 'not a failure') return { decision: 'rejected' };
    if (answer === 's' || answer === 'skip') return 'skip';
    if (answer !== 'c' && answer !== 'correct') {
      prompt = 'please answer a, c, n, s or q: ';
      continue;
    }
    const choices = [...LABEL_NAMES.filter((n) => n !== label.name), 'none'];
    const menu = choices.map((c, i) => `${i + 1}) ${c === 'none' ? 'none (not a failure)' : c}`).join('  ');
    let pickPrompt = `correct to: ${menu} (Enter: back)? `;
    let pick: string | undefined;
    for (;;) {
      pick = (await ask(pickPrompt))?.toLowerCase();
      if (pick === undefined) return 'end of input';
      if (pick === '' || pick === 'q' || pick === 'quit') break;
      const chosen = /^\d+$/.test(pick) ? choices[Number(pick) - 1] : choices.find((c) => c === pick);
      if (chosen !== undefined) return chosen === 'none' ? { decision: 'rejected' } : { decision: 'corrected', corrected_to: chosen };
      pickPrompt = `please answer 1-${choices.length}, or Enter to go back: `;
    }
    if (pick !== '') return 'quit';
    prompt = 'accept [a] / correct the label [c] / not a failure [n] / skip [s] / quit [q]? ';
  }
}

async function session(io: CliIo, store: Store & TrajectoryStore, sample: readonly LabelRef[]): Promise<Record<'accepted' | 'corrected' | 'rejected' | 'skipped', number>> {
  const counts = { accepted: 0, corrected: 0, rejected: 0, skipped: 0 };
  if (io.stdin === undefined) throw new CliError("review needs answers on stdin: run it in a terminal or pipe answers in (or use --report)");
  const { ask, close } = asker(io, io.stdin);
  try {
    for (const [i, ref] of sample.entries()) {
      const trajectory = await store.getTrajectory(ref.trajectory_id);
      const label = trajectory?.labels?.find((l) => l.name === ref.name && l.step_index === ref.step_index && (l.source ?? '') === ref.source);
      if (trajectory === null || label === undefined) continue;
      show(io, i + 1, sample.length, trajectory, label);
      const answer = await askDecision(ask, label);
      if (answer === 'end of input') {
        writeLine(io.stdout);
        const answered = counts.accepted + counts.corrected + counts.rejected + counts.skipped;
        writeLine(io.stdout, answered === 0 && io.stdin.isTTY !== true
          ? "stdin is not a terminal and gave no answers: nothing reviewed (pipe answers in, or use --report)"
          : `input ended: ${sample.length - i} sampled labels left unreviewed`);
        break;
      }
      if (answer === 'quit') break;
      if (answer === 'skip') {
        counts.skipped++;
        continue;
      }
      const review: LabelReview = { decision: answer.decision, ...(answer.corrected_to === undefined ? {} : { corrected_to: answer.corrected_to }), reviewed_at: new Date().toISOString() };
      if (await saveLabelReview(store, ref, review)) counts[answer.decision]++;
    }
  } finally {
    close();
  }
  return counts;
}

export function reviewCommand(ctx: CliContext): Command {
  return new Command('review')
    .description('Spot-check the semantic judges: review a sample of judge labels (accept / correct / not a failure) and report their precision')
    .addOption(storeOption('store to read'))
    .option('--share <fraction>', 'share of the unreviewed judge labels to review, in (0, 1]; at least one', String(DEFAULT_REVIEW_SHARE))
    .option('--seed <n>', 'seed of the sample (a non-negative integer): the same seed picks the same labels', String(DEFAULT_SEED))
    .option('--report', "print the judges' precision from the decisions so far instead of reviewing")
    .option('--json', 'print the precision report as JSON (implies --report)')
    .action(async (opts: ReviewCommandOptions) => {
      const { io } = ctx;
      const share = parseShare(opts.share);
      const seed = parseCount(opts.seed, '--seed', 0);
      const store = opts.report === true || opts.json === true ? await openReportStore(opts.db, io) : await openExistingStore(opts.db, io, { boundReads: true });
      try {
        if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
        const all = await readJudgeLabels(store);
        if (opts.report === true || opts.json === true) {
          const report = precisionReport(all.map((a) => a.label));
          if (opts.json === true) writeLine(io.stdout, JSON.stringify({ ...report, measured: { [HEURISTIC_JUDGE_SOURCE]: HEURISTIC_JUDGE_QUALITY.semantic_error } }));
          else printReport(io, report);
          return;
        }
        if (all.length === 0) {
          writeLine(io.stdout, "nothing to review: no judge labels in the store (run 'npx faultline annotate' first)");
          return;
        }
        const unreviewed = all.filter((a) => a.label.review === undefined).map((a) => a.ref);
        if (unreviewed.length === 0) {
          writeLine(io.stdout, `nothing to review: all ${all.length} judge labels are reviewed (see 'npx faultline review --report')`);
          return;
        }
        const sample = sampleForReview(unreviewed, share, seed);
        writeLine(io.stdout, `reviewing ${sample.length} of ${unreviewed.length} unreviewed judge labels (share ${share}, seed ${seed}); each decision is saved as it is made`);
        const counts = await session(io, store, sample);
        writeLine(io.stdout);
        writeLine(io.stdout, `reviewed ${counts.accepted + counts.corrected + counts.rejected}: ${counts.accepted} accepted, ${counts.corrected} corrected, ${counts.rejected} not a failure, ${counts.skipped} skipped`);
        const overall = precisionReport((await readJudgeLabels(store)).map((a) => a.label)).overall;
        writeLine(io.stdout, `judge precision so far: ${percentOrDash(overall.precision)} of ${overall.reviewed} reviewed (95% CI ${formatPercent(overall.ci95[0])} - ${formatPercent(overall.ci95[1])})`);
      } finally {
        await store.close();
      }
    });
}
