/**
 * Durations as faultline's command line writes them, a whole number and its unit (`500ms`, `30s`,
 * `90m`, `24h`, `30d`): one syntax for report windows (`--since 24h`), retention
 * (`prune --older-than 30d`, `--retention 30d`) and waits and caps (`tail --interval 1s`,
 * `proxy --hold-cap 30s`; bounds per flag in cli/duration-option.ts).
 */
import { ConfigError } from './errors.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

/**
 * A duration in milliseconds, or undefined when the text is not one. `name` is how messages call it.
 * @throws ConfigError for a zero duration.
 */
export function durationMsOf(text: string, name: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null) return undefined;
  const amount = Number(match[1]);
  if (amount === 0) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: the duration must be positive`, name);
  return amount * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/**
 * A duration given as text in that syntax or as a number of milliseconds (the library's options
 * take both). `name` is how messages call it.
 * @throws ConfigError for anything else.
 */
export function parseDurationMs(value: string | number, name: string): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) return value;
    throw new ConfigError(`invalid ${name} ${String(value)}: expected a positive number of milliseconds or a duration like 30d`, name);
  }
  const ms = typeof value === 'string' ? durationMsOf(value, name) : undefined;
  if (ms === undefined) throw new ConfigError(`invalid ${name} ${JSON.stringify(value)}: expected a duration like 90m, 24h or 30d`, name);
  return ms;
}
