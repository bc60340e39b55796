/**
 * What the reporting commands (stats, alerts, tail, metrics) share: opening the store named by
 * `--db` without ever creating or writing it, and reading `--since` / `--until`.
 */
import { existsSync } from 'node:fs';
import { openStore, sqlitePathOf } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './io.js';

export const DB_OPTION_HELP = 'store to read: a SQLite path (default .faultline/faultline.db) or a postgres:// URL (?schema=NAME)';

/**
 * Opens the store read-only. A SQLite file that does not exist is a user mistake, reported
 * before SQLite would create an empty database in its place.
 * @throws CliError / ConfigError with one line when the store is missing or cannot be opened.
 */
export async function openReportStore(spec: string | undefined, io: CliIo): Promise<Store> {
  const path = sqlitePathOf(spec, io.cwd);
  if (path !== undefined && !existsSync(path)) {
    throw new CliError(`no faultline store at ${path} (run \`faultline demo\` or point --db at one)`);
  }
  return openStore(spec, { cwd: io.cwd, readonly: true });
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const RELATIVE = /^(\d{1,6})([mhd])$/;
// A date, optionally with a time and an offset; without an offset the time is taken as UTC,
// like every timestamp faultline stores.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

function parseIsoDate(text: string): number {
  const match = ISO_DATE.exec(text);
  if (match === null) return NaN;
  const hasTime = text.length > 10;
  return Date.parse(hasTime && match[1] === undefined ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T'));
}

/**
 * `--until`: an ISO date, or now when absent.
 * @throws CliError for anything else.
 */
export function parseUntil(text: string | undefined, nowMs: number): number {
  if (text === undefined) return nowMs;
  const ms = parseIsoDate(text.trim());
  if (Number.isNaN(ms)) throw new CliError(`invalid --until ${JSON.stringify(text)}: expected an ISO date like 2026-03-29T14:00Z`);
  return ms;
}

/**
 * `--since`: a duration back from `untilMs` (`90m`, `24h`, `7d`) or an ISO date before it.
 * @throws CliError for anything else.
 */
export function parseSince(text: string, untilMs: number): number {
  const trimmed = text.trim();
  const relative = RELATIVE.exec(trimmed);
  let since: number;
  if (relative !== null) {
    const amount = Number(relative[1]);
    if (amount === 0) throw new CliError(`invalid --since ${JSON.stringify(text)}: the duration must be positive`);
    since = untilMs - amount * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  } else {
    since = parseIsoDate(trimmed);
    if (Number.isNaN(since)) {
      throw new CliError(`invalid --since ${JSON.stringify(text)}: expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z`);
    }
  }
  if (since >= untilMs) throw new CliError(`invalid --since ${JSON.stringify(text)}: it is not before the end of the window (${new Date(untilMs).toISOString()})`);
  return since;
}

/** A positive integer option value. */
export function parseCount(text: string, flag: string, min = 1): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected an integer >= ${min}`);
  return Number(text);
}

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '-';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}

export function isoWindow(since: number, until: number): { since: string; until: string } {
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
}
