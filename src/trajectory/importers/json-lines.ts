/**
 * JSONL input, line by line with node:readline: memory stays at one line whatever the file size.
 */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Trajectory } from '../types.js';
import type { ImportInput, ImportItem, ImportOptions, Importer } from './import-types.js';

export type JsonLine = { line: number; value: unknown } | { line: number; error: string };

function toReadable(input: ImportInput): NodeJS.ReadableStream {
  return 'pipe' in input ? input : Readable.from(input);
}

/** Each non-blank line, parsed; a line that is not JSON comes back as an error with its number. */
export async function* readJsonLines(input: ImportInput): AsyncGenerator<JsonLine> {
  const lines = createInterface({ input: toReadable(input), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line += 1;
    // A UTF-8 BOM on the first line is an editor artefact, not content.
    const body = line === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (body.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(body) as unknown };
    } catch (error) {
      yield { line, error: `not JSON: ${(error as Error).message}` };
    }
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An importer for formats with one trajectory per JSON line: `convert` turns a parsed line into a
 * trajectory, or returns the reason it cannot (the line is then reported as skipped).
 */
export function jsonLinesImporter(convert: (value: unknown, options: ImportOptions | undefined) => Trajectory | string): Importer {
  return async function* (input, options): AsyncGenerator<ImportItem> {
    for await (const item of readJsonLines(input)) {
      if ('error' in item) {
        yield { kind: 'skipped', line: item.line, reason: item.error };
        continue;
      }
      const result = convert(item.value, options);
      if (typeof result === 'string') yield { kind: 'skipped', line: item.line, reason: result };
      else yield { kind: 'trajectory', trajectory: result, line: item.line };
    }
  };
}
