/**
 * Annotators' labels as a table (the trace and trajectory pages): who gave each label (a rule, a
 * judge), the judge's kind of mismatch and reason, and what a reviewer decided about it.
 */
import type { LabelReview, TrajectoryLabel } from '../../core/trajectory-types.js';
import type { Column } from './data-table.js';
import { html, type SafeHtml } from './safe-html.js';

/** A reviewer's decision in words, as `faultline review` asks it. */
export function reviewText(review: LabelReview | undefined): SafeHtml {
  if (review === undefined) return html`<span class="empty">not reviewed</span>`;
  if (review.decision === 'accepted') return html`<span class="ok">accepted</span>`;
  if (review.decision === 'rejected') return html`<span class="bad">not a failure</span>`;
  return html`<span class="warning">corrected to ${review.corrected_to ?? '?'}</span>`;
}

export const LABEL_COLUMNS: readonly Column<TrajectoryLabel>[] = [
  { header: 'label', cell: (l) => l.name },
  { header: 'step', kind: 'num', cell: (l) => l.step_index },
  { header: 'confidence', kind: 'num', cell: (l) => l.confidence.toFixed(2) },
  { header: 'by', cell: (l) => l.source ?? 'rules' },
  { header: 'mismatch', cell: (l) => l.mismatch_kind ?? '' },
  { header: 'reason', kind: 'msg', cell: (l) => l.reason },
  { header: 'review', cell: (l) => html`${reviewText(l.review)}${l.review === undefined ? '' : html` <small>${l.review.reviewed_at.slice(0, 10)}</small>`}` },
];
