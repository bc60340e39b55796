/**
 * The file encodings of an export besides JSONL: `--out x.csv` writes the predictor rows as CSV
 * and `--out x.md` writes the few-shot snippets as Markdown. The exporters always produce JSON
 * lines; these are transcoded from a JSONL file once the export is complete, because a CSV
 * header has to name every column (the predictor's per-argument columns are known only at the
 * end) and the Markdown groups snippets by tool.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ExportFormat } from './exporter.js';
import { renderFewShotMarkdown, type FewShotRow } from './few-shot-exporter.js';
import { PREDICTOR_FIXED_COLUMNS, PREDICTOR_PARAM_FEATURES } from './predictor-exporter.js';

export type OutputEncoding = 'jsonl' | 'csv' | 'md';

/** Which encoding `--out` asks for (by its extension), or why `format` cannot be written so. */
export function outputEncodingFor(format: ExportFormat, out: string): { encoding: OutputEncoding } | { error: string } {
  const lower = out.toLowerCase();
  if (lower.endsWith('.csv')) return format === 'predictor' ? { encoding: 'csv' } : { error: `only --format predictor writes CSV; use a .jsonl name for ${format}` };
  if (lower.endsWith('.md')) return format === 'few-shot' ? { encoding: 'md' } : { error: `only --format few-shot writes Markdown; use a .jsonl name for ${format}` };
  return { encoding: 'jsonl' };
}

const PARAM_PREFIX = 'p.';
const PRESENT_SUFFIX = '.present';

/** The CSV header of predictor rows: the fixed columns, then each argument's columns, arguments sorted by name. */
export class PredictorColumns {
  private readonly params = new Set<string>();

  /** Notes the arguments of one row (its JSON line). */
  add(line: string): void {
    for (const key of Object.keys(JSON.parse(line) as object)) {
      if (key.startsWith(PARAM_PREFIX) && key.endsWith(PRESENT_SUFFIX)) this.params.add(key.slice(PARAM_PREFIX.length, -PRESENT_SUFFIX.length));
    }
  }

  header(): string[] {
    const perParam = [...this.params].sort().flatMap((name) => PREDICTOR_PARAM_FEATURES.map((f) => `${PARAM_PREFIX}${name}.${f}`));
    return [...PREDICTOR_FIXED_COLUMNS, ...perParam];
  }
}

/**
 * One CSV field (RFC 4180): null and absent are empty, booleans `true`/`false`, and text with a
 * comma, quote, line break or edge space is quoted with quotes doubled. Hand-written: no CSV
 * library is a dependency, and this is the whole of what writing (not parsing) needs.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Writes `chunks` to `path`. Through pipeline, which listens for the file's errors: a write that
 * fails (the disk is full) rejects here, with the file closed, instead of being an unheard
 * 'error' event that crashes the process; a chunk source that throws closes the file as well.
 */
async function writeAll(path: string, chunks: AsyncIterable<string> | Iterable<string>): Promise<void> {
  await pipeline(Readable.from(chunks), createWriteStream(path));
}

async function* jsonLines(path: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') yield JSON.parse(line) as Record<string, unknown>;
}

async function* csvLines(path: string, header: readonly string[]): AsyncGenerator<string> {
  yield `${header.map(csvField).join(',')}\n`;
  for await (const row of jsonLines(path)) {
    // A call that did not send an argument has none of its columns: `present` is false, the rest empty.
    yield `${header.map((column) => (column in row ? csvField(row[column]) : column.endsWith(PRESENT_SUFFIX) ? 'false' : '')).join(',')}\n`;
  }
}

/**
 * Writes `to` from the JSONL file `from` in `encoding`: CSV under `header` (predictor rows,
 * streamed), or Markdown (few-shot rows, a handful per tool, read whole).
 */
export async function transcodeJsonl(encoding: Exclude<OutputEncoding, 'jsonl'>, from: string, to: string, header: readonly string[] = []): Promise<void> {
  if (encoding === 'csv') {
    await writeAll(to, csvLines(from, header));
    return;
  }
  const rows: FewShotRow[] = [];
  for await (const row of jsonLines(from)) rows.push(row as unknown as FewShotRow);
  await writeAll(to, [renderFewShotMarkdown(rows)]);
}
