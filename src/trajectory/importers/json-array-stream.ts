/**
 * The elements of a top-level JSON array, one at a time, from a stream of text chunks.
 *
 * Why not JSON.parse on the whole file: tau-bench result files are one array of trajectories,
 * 4 MB for 200 tasks here but growing linearly with tasks x trials; holding the text and the
 * parsed tree of all of it at once costs several times the file size. This scanner keeps only
 * the element being read, tracks the line each element starts on (for error messages), and
 * hands each element's text to JSON.parse, which stays the one JSON parser.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ImportInput } from './import-types.js';

export type ArrayElement = { index: number; line: number; value: unknown } | { index: number; line: number; error: string };

/** Thrown when the input is not an array at all or ends inside one; per-element errors are yielded instead. */
export class JsonArrayShapeError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'JsonArrayShapeError';
  }
}

const OPEN = new Set(['{', '[']);
const CLOSE = new Set(['}', ']']);

export async function* readJsonArray(input: ImportInput): AsyncGenerator<ArrayElement> {
  const decoder = new StringDecoder('utf8');
  let line = 1;
  let started = false;
  let ended = false;
  let depth = 0; // nesting inside the current element
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let elementStart = -1; // offset in the current chunk where the element began, or -1
  let elementLine = 0;
  let index = 0;
  let inElement = false;

  const finish = (text: string): ArrayElement => {
    const at = { index: index++, line: elementLine };
    try {
      return { ...at, value: JSON.parse(text) as unknown };
    } catch (error) {
      return { ...at, error: `element ${at.index} is not valid JSON: ${(error as Error).message}` };
    }
  };

  for await (const raw of input as AsyncIterable<string | Buffer>) {
    const chunk = typeof raw === 'string' ? raw : decoder.write(raw);
    elementStart = inElement ? 0 : -1;
    const out: ArrayElement[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      if (ch === '\n') line += 1;
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') continue;
      if (!started) {
        if (ch === '\uFEFF') continue;
        if (ch !== '[') throw new JsonArrayShapeError(`expected a JSON array, found ${JSON.stringify(ch)}`, line);
        started = true;
        continue;
      }
      if (ended) throw new JsonArrayShapeError(`unexpected ${JSON.stringify(ch)} after the end of the array`, line);
      if (!inElement) {
        if (ch === ',') continue;
        if (ch === ']') {
          ended = true;
          continue;
        }
        inElement = true;
        elementStart = i;
        elementLine = line;
        depth = 0;
        parts = [];
      }
      if (ch === '"') inString = true;
      else if (OPEN.has(ch)) depth += 1;
      else if (CLOSE.has(ch) && depth > 0) depth -= 1;
      else if (depth === 0 && (ch === ',' || ch === ']')) {
        // A scalar element ends at the separator.
        parts.push(chunk.slice(elementStart, i));
        out.push(finish(parts.join('')));
        inElement = false;
        if (ch === ']') ended = true;
        continue;
      }
      if (depth === 0 && (ch === '}' || ch === ']')) {
        parts.push(chunk.slice(elementStart, i + 1));
        out.push(finish(parts.join('')));
        inElement = false;
      }
    }
    if (inElement) parts.push(chunk.slice(elementStart));
    yield* out;
  }
  if (!started) throw new JsonArrayShapeError('expected a JSON array, found an empty input', line);
  if (!ended) throw new JsonArrayShapeError('the input ends inside the array (truncated file?)', line);
}
