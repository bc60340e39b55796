/**
 * Reads what a dashboard request asks for from its query string: `since` and `until` (the same
 * text as `stats --since` / `--until`: `1h`, `24h`, `7d` or an ISO date; an ISO date), `tool`,
 * `agent`, `run` (a FailBench run id), and `limit` (records listed).
 */
import { ConfigError } from '../../core/errors.js';
import { parseSince, parseUntil } from '../time-window.js';
import type { DashboardView, ViewParams } from './dashboard-data.js';

export const DEFAULT_RECORD_LIMIT = 50;
export const MAX_RECORD_LIMIT = 1000;
const MAX_NAME = 512;

/** A parameter's text; an empty one (a form's blank field) is absent. */
function param(params: URLSearchParams, name: string): string | null {
  const value = params.get(name);
  return value === null || value.trim() === '' ? null : value;
}

/** A name-like parameter (`tool`, `agent`, `run`): absent, or up to 512 characters. */
export function nameParam(params: URLSearchParams, name: string): string | null {
  const value = param(params, name);
  if (value !== null && value.length > MAX_NAME) {
    throw new ConfigError(`invalid ${name}: expected a name of at most ${MAX_NAME} characters`, name);
  }
  return value;
}

/** A count parameter: `fallback` when absent, else an integer from 1 to `max`. */
export function countParam(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const text = params.get(name);
  if (text === null) return fallback;
  const n = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= max)) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: expected an integer from 1 to ${max}`, name);
  return n;
}

/** The view's defaults: the command's `--since` and `--until`. */
export interface ViewDefaults {
  since: string;
  until: string | null;
}

/**
 * @throws ConfigError with one line for a bad value; the server answers it with 400.
 */
export function parseView(params: URLSearchParams, defaults: ViewDefaults, nowMs: number): DashboardView {
  const since = param(params, 'since') ?? defaults.since;
  const untilText = param(params, 'until') ?? defaults.until;
  const until = untilText === null ? nowMs : parseUntil(untilText, nowMs, 'until');
  const window = { since: parseSince(since, until, 'since'), until };
  const viewParams: ViewParams = { since, until: untilText, tool: nameParam(params, 'tool'), agent: nameParam(params, 'agent'), run: nameParam(params, 'run') };
  return { ...viewParams, window, limit: countParam(params, 'limit', DEFAULT_RECORD_LIMIT, MAX_RECORD_LIMIT) };
}
