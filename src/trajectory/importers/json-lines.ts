/**
 * JSONL input, line by line with node:readline: memory stays at one line whatever the file size.
 */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Trajectory } from '../../core/trajectory-types.js';
import type { ImportInput, ImportItem, ImportOptions, Importer } from './import-types.js';

export type JsonLine = { line: number; value: unknown } | { line: number; error: string };

function toReadable(input: ImportInput): NodeJS.ReadableStream {
  return 'pipe' in input ? input : Readable.from(input);
}

/**
 * Line `line` (1-based) parsed; undefined for a blank line. `firstOfFile` (default: line 1) says
 * whether a BOM may start it: the parallel annotator numbers lines within a block of the file.
 */
export function parseLine(text: string, line: number, firstOfFile = line === 1): JsonLine | undefined {
  // A UTF-8 BOM on the first line is an editor artefact, not content.
  const body = firstOfFile ? text.replace(/^\uFEFF/, '') : text;
  // Trimming copies the line: only a line that starts with white space can be blank.
  if (body.length === 0 || (body.charCodeAt(0) <= 32 && body.trim() === '')) return undefined;
  try {
    return { line, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { line, error: `not JSON: ${(error as Error).message}` };
  }
}

const linesOf = (input: ImportInput) => createInterface({ input: toReadable(input), crlfDelay: Infinity });

/** Each non-blank line, parsed; a line that is not JSON comes back as an error with its number. */
export async function* readJsonLines(input: ImportInput): AsyncGenerator<JsonLine> {
  let line = 0;
  for await (const text of linesOf(input)) {
    const parsed = parseLine(text, ++line);
    if (parsed !== undefined) yield parsed;
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The converters of the formats with one trajectory per JSON line, for code that splits lines itself. */
export type JsonLineConverter = (value: unknown, options: ImportOptions | undefined) => Trajectory | string;

/** One line as the importer yields it: undefined for a blank line. */
export function importLine(text: string, line: number, convert: JsonLineConverter, options: ImportOptions | undefined, firstOfFile = line === 1): ImportItem | undefined {
  const item = parseLine(text, line, firstOfFile);
  if (item === undefined) return undefined;
  if ('error' in item) return { kind: 'skipped', line, reason: item.error };
  const result = convert(item.value, options);
  return typeof result === 'string' ? { kind: 'skipped', line, reason: result } : { kind: 'trajectory', trajectory: result, line };
}

/**
 * An importer for formats with one trajectory per JSON line: `convert` turns a parsed line into a
 * trajectory, or returns the reason it cannot (the line is then reported as skipped).
 */
export function jsonLinesImporter(convert: JsonLineConverter): Importer {
  return async function* (input, options): AsyncGenerator<ImportItem> {
    // readline directly rather than through readJsonLines: one async step less per line.
    let line = 0;
    for await (const text of linesOf(input)) {
      const item = importLine(text, ++line, convert, options);
      if (item !== undefined) yield item;
    }
  };
}

/** How node:readline (crlfDelay Infinity) ends lines: CRLF, LF, or a CR not followed by LF. */
export const LINE_END = /\r?\n|\r(?!\n)/;
