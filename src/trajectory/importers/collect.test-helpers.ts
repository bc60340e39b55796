/** Runs an importer over in-memory text, split into small chunks to exercise chunk boundaries. */
import type { Trajectory } from '../../core/trajectory-types.js';
import type { ImportOptions, Importer } from './import-types.js';

export const FIXED_NOW = Date.UTC(2026, 2, 29, 15, 0, 0);

export function chunks(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export async function collect(
  importer: Importer,
  text: string,
  options: ImportOptions = {},
): Promise<{ trajectories: Trajectory[]; skipped: { line: number; reason: string }[] }> {
  const trajectories: Trajectory[] = [];
  const skipped: { line: number; reason: string }[] = [];
  for await (const item of importer(chunks(text), { now: () => FIXED_NOW, ...options })) {
    if (item.kind === 'trajectory') trajectories.push(item.trajectory);
    else skipped.push({ line: item.line, reason: item.reason });
  }
  return { trajectories, skipped };
}

export const jsonl = (...values: unknown[]): string => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') + '\n';
