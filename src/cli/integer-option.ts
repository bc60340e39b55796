/**
 * An integer flag with bounds (`--seed`, `--port`...), read alike by every command: one line,
 * `invalid --flag "text": expected an integer from MIN to MAX`, as `parseCount` and `parsePort` say it.
 * A module of its own, so the servers that need it load no store.
 */
import { CliError } from './cli-error.js';

/** An integer option value from `min` to `max`. */
export function parseInteger(text: string, flag: string, min: number, max: number): number {
  const value = /^-?\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected an integer from ${min} to ${max}`);
  return value;
}
