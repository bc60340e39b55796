/**
 * What every importer yields: trajectories, and lines it had to skip, each with the 1-based line
 * number of the input where the problem is.
 */
import type { Trajectory } from '../../core/trajectory-types.js';

export const IMPORT_FORMATS = ['openai', 'anthropic', 'tau-bench', 'step-log', 'otel'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export type ImportItem =
  | { kind: 'trajectory'; trajectory: Trajectory; line: number }
  | { kind: 'skipped'; line: number; reason: string };

export interface ImportOptions {
  /** Clock for `created_at` when the source has no times. Default `Date.now`. */
  now?: () => number;
  /** Overrides the domain an importer infers (tau-bench reads it from the policy). */
  domain?: string;
  /**
   * Chat formats (OpenAI, Anthropic): leave the JSON inside strings (tool arguments, tool results
   * that cannot hold a structured failure) unparsed until read, as `DeferredJson` values, for code
   * that reads steps through `jsonValue` (the annotators). Default false: plain values.
   */
  deferJson?: boolean;
}

/** Text to import: a file stream, or any (async) iterable of chunks. */
export type ImportInput = AsyncIterable<string | Buffer> | Iterable<string | Buffer> | NodeJS.ReadableStream;

/** An importer reads text (a file stream) and yields items as it goes. */
export type Importer = (input: ImportInput, options?: ImportOptions) => AsyncIterable<ImportItem>;

// Every trajectory of a file is stamped with the clock: format each millisecond once.
let lastMs = Number.NaN;
let lastIso = '';

export function nowIso(options: ImportOptions | undefined): string {
  const ms = (options?.now ?? Date.now)();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
