/**
 * What to tell someone whose export wrote no example: why, from the card's skip reasons, and
 * what would change it. The CLI prints it on stderr and exits {@link EMPTY_EXPORT_EXIT_CODE}.
 */
import type { DatasetCard } from './dataset-card.js';
import { INFERRED_EXCLUDED } from './export-dataset.js';

/** `faultline export`'s exit code when it wrote no example (the files and the card are still written). */
export const EMPTY_EXPORT_EXIT_CODE = 3;

const ANNOTATE = '`faultline annotate` (its judge infers outcomes from the final answers, and the backtrace judges the decisions after failures)';

/** One line per reason, most frequent first, each saying what to do. */
export function emptyExportAdvice(card: DatasetCard, source?: string): string[] {
  if (card.trajectories_read === 0) return [`no trajectories${source === undefined ? '' : ` from ${source}`} in the store: \`npx faultline import\` a log or run \`npx faultline bench --fission K\` to store some`];
  const lines: string[] = [];
  for (const [reason, count] of Object.entries(card.skipped)) {
    const n = `${count} of ${card.trajectories_read} trajectories`;
    if (reason === 'outcome is unknown') lines.push(`${n}: outcome is unknown (the log states none, and nothing has inferred one): run ${ANNOTATE}, then export again`);
    else if (reason === INFERRED_EXCLUDED) lines.push(`${n}: outcome inferred by a judge, left out by --exclude-inferred-outcomes: drop the flag to include them (the card gives their confidence)`);
    else if (reason === 'outcome is failure' || reason === 'outcome is partial') lines.push(`${n}: ${reason}; ${card.format} takes successful trajectories only: --format dpo-openai, dpo-trl or kto take pairs from failures`);
    else if (reason === 'no preference pair' || reason === 'no judged failure point')
      lines.push(`${n}: ${reason} (a failure whose decision was judged, with a better turn for a wrong one): run ${ANNOTATE} first; a log whose failures were all handled well has none`);
    else if (reason === 'not a fission continuation') lines.push(`${n}: not a fission continuation: --format grpo takes groups from \`npx faultline bench --fission K\``);
    else lines.push(`${n}: ${reason}`);
  }
  return lines;
}
