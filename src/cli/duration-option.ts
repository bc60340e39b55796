/**
 * Every duration flag reads the one syntax of core/duration-text.ts, a whole number and its unit
 * (`500ms`, `30s`, `5m`, `2h`, `30d`; a bare `0` where zero turns the thing off), with the bounds
 * of its flag, so `tail --interval 1s`, `dashboard --refresh 5s` and `proxy --hold-cap 30s` read
 * alike and as `--since 24h` does. A module of its own, so the servers that need it load no store.
 */
import { durationMsOf } from '../core/duration-text.js';
import { ConfigError } from '../core/errors.js';
import { CliError } from './cli-error.js';

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000 } as const;

/** `ms` in the largest unit up to hours that says it exactly: 30000 as `30s`, 300000 as `5m`, a day as `24h`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  for (const unit of ['h', 'm', 's'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}

export interface DurationBounds {
  minMs: number;
  maxMs: number;
  /** Whether `0` is taken (it turns the thing off). */
  zero?: boolean;
}

/**
 * A duration flag's value in milliseconds.
 * @throws CliError with one line: `invalid --flag "text": expected a duration from 1ms to 24h, like 500ms, 30s or 5m`.
 */
export function parseDuration(text: string, flag: string, bounds: DurationBounds): number {
  const trimmed = text.trim();
  if (bounds.zero === true && /^0+(?:ms|s|m|h|d)?$/.test(trimmed)) return 0;
  let ms: number | undefined;
  try {
    ms = durationMsOf(trimmed, flag);
  } catch (error) {
    // A zero duration: out of bounds like any other.
    if (!ConfigError.isInstance(error)) throw error;
  }
  if (ms === undefined || !(ms >= bounds.minMs && ms <= bounds.maxMs)) {
    const zero = bounds.zero === true ? ', or 0 for never' : '';
    throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected a duration from ${formatDuration(bounds.minMs)} to ${formatDuration(bounds.maxMs)}, like 500ms, 30s or 5m${zero}`);
  }
  return ms;
}
