/**
 * Argument checks shared by every store's read methods. The types say "epoch ms", but a caller in
 * plain JavaScript may pass a Date, an ISO string or nothing; a store would then answer with an
 * empty result or a driver error that names no field. These turn that into one ConfigError.
 */
import { ConfigError } from '../core/errors.js';
import type { RecordQuery, StatsFilter } from '../core/store-types.js';

function describe(value: unknown): string {
  if (value instanceof Date) return `a Date (${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

function checkInstant(value: unknown, method: string, field: string, required: boolean): void {
  if (value === undefined && !required) return;
  // ±Infinity is an open bound.
  if (typeof value === 'number' && !Number.isNaN(value)) return;
  const hint = value instanceof Date ? ` (use ${field}: date.getTime())` : '';
  throw new ConfigError(`${method}: ${field} must be epoch milliseconds (a number; ±Infinity for an open bound), got ${describe(value)}${hint}`, field);
}

/** `since` and `until` of a stats window: both required. */
export function checkStatsFilter(filter: StatsFilter, method: string): void {
  if (typeof filter !== 'object' || filter === null) {
    throw new ConfigError(`${method}: expected a window { since, until } in epoch milliseconds, got ${describe(filter)}`, 'filter');
  }
  checkInstant(filter.since, method, 'since', true);
  checkInstant(filter.until, method, 'until', true);
}

/** The optional bounds and page size of a record query. */
export function checkRecordQuery(query: Omit<RecordQuery, 'afterId' | 'order'>, method: string): void {
  checkInstant(query.since, method, 'since', false);
  checkInstant(query.until, method, 'until', false);
  const limit = query.limit;
  // Fractions round down and Infinity means no limit, as the stores have always taken them.
  if (limit !== undefined && (typeof limit !== 'number' || Number.isNaN(limit))) {
    throw new ConfigError(`${method}: limit must be a number of records, got ${describe(limit)}`, 'limit');
  }
}
