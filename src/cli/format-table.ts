/**
 * Aligned plain-text tables for terminal output. Kept tiny on purpose: the commands only need
 * left/right alignment and width capping, and plain text pipes cleanly into grep and less.
 */
import { printable } from './io.js';

export interface Column<Row> {
  header: string;
  value: (row: Row) => string | number | null | undefined;
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis. */
  maxWidth?: number;
}

function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  return printable(String(value).replace(/\s+/g, ' '));
}

export function formatTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const cells = rows.map((row) =>
    columns.map((c) => {
      const text = cell(c.value(row));
      return c.maxWidth !== undefined && text.length > c.maxWidth ? `${text.slice(0, c.maxWidth - 1)}…` : text;
    }),
  );
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
