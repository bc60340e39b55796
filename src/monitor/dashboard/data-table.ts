/**
 * Every dashboard table goes through here: a header row, each cell labelled with its column's
 * header (`data-label`), and a box around the table. Cells may break anywhere (ids, hashes and
 * codes have no spaces), so a table fits its box at any width; on a narrow screen the stylesheet
 * turns each row into a card of "header: value" lines, which is why every cell carries its label.
 */
import { html, type HtmlValue, type SafeHtml } from './safe-html.js';

/** How a column's cells are set: figures right-aligned, times unbroken, messages given room, ids and codes monospaced (ids break anywhere, codes at their separators). */
export type ColumnKind = 'num' | 'time' | 'msg' | 'id' | 'code' | 'head';

export interface Column<Row> {
  header: string;
  kind?: ColumnKind;
  cell(row: Row): HtmlValue;
  /** More classes for one cell (a severity, a heat level, good or bad). */
  cellClass?(row: Row): string;
}

export interface TableOptions<Row> {
  /** Attributes of a row's `<tr>` (`data-id`, `data-tool`), for links and tests. */
  rowAttributes?(row: Row): Readonly<Record<string, string>>;
  /** Rows after the body's (totals), as cells in column order. */
  footer?: readonly HtmlValue[];
}

const BREAK_AFTER = /([_/.:@-]+)/;

/**
 * Text with a line-break opportunity after each `_`, `/`, `.`, `:`, `@` and `-`, so that
 * identifiers (`execution/network/connection_refused`, `retry_with_fixed_params`) wrap where a
 * reader would cut them instead of mid-word. Table cells' plain text goes through it.
 */
export function breakable(text: string): SafeHtml {
  const parts = text.split(BREAK_AFTER);
  return html`${parts.map((part, i) => (i % 2 === 1 ? html`${part}<wbr>` : part))}`;
}

function attributes(values: Readonly<Record<string, string>> | undefined): SafeHtml {
  if (values === undefined) return html``;
  return html`${Object.entries(values).map(([name, value]) => html` ${name}="${value}"`)}`;
}

function classOf(kind: ColumnKind | undefined, extra: string | undefined): string {
  return [kind ?? '', extra ?? ''].filter((c) => c !== '').join(' ');
}

function cell<Row>(column: Column<Row>, value: HtmlValue, extra?: string): SafeHtml {
  const cls = classOf(column.kind, extra);
  // Names, types and codes break at their separators; messages and ids break anywhere already
  // (CSS), and figures and times not at all.
  const content = typeof value === 'string' && (column.kind === undefined || column.kind === 'code' || column.kind === 'head') ? breakable(value) : value;
  // One element around the content: as a card, the cell is a grid of the label and this.
  return cls === ''
    ? html`<td data-label="${column.header}"><span>${content}</span></td>`
    : html`<td class="${cls}" data-label="${column.header}"><span>${content}</span></td>`;
}

/** The table, in its box, with `id` on the `<table>`. */
export function dataTable<Row>(id: string, columns: readonly Column<Row>[], rows: readonly Row[], options: TableOptions<Row> = {}): SafeHtml {
  const head = columns.map((c) => (c.kind === 'num' ? html`<th class="num">${breakable(c.header)}</th>` : html`<th>${breakable(c.header)}</th>`));
  const body = rows.map((row) => html`<tr${attributes(options.rowAttributes?.(row))}>${columns.map((c) => cell(c, c.cell(row), c.cellClass?.(row)))}</tr>`);
  const footer = options.footer === undefined ? html`` : html`<tr class="total">${columns.map((c, i) => cell(c, options.footer![i]))}</tr>`;
  return html`<div class="table-box"><table id="${id}" class="cards"><thead><tr>${head}</tr></thead><tbody>${body}${footer}</tbody></table></div>`;
}
