/**
 * Reads what a dashboard request asks for from its query string: `since` (the same text as
 * `--since`: `1h`, `24h`, `7d`, or an ISO date), `tool`, and `limit` (records listed).
 */
import { ConfigError } from '../../errors.js';
import { parseSince } from '../time-window.js';
import type { DashboardView } from './dashboard-data.js';

export const DEFAULT_RECORD_LIMIT = 50;
export const MAX_RECORD_LIMIT = 1000;
const MAX_TOOL_NAME = 512;

/**
 * @param defaultSince The window when the query names none (the command's `--since`).
 * @throws ConfigError with one line for a bad value; the server answers it with 400.
 */
export function parseView(params: URLSearchParams, defaultSince: string, nowMs: number): DashboardView {
  const since = params.get('since') ?? defaultSince;
  const window = { since: parseSince(since, nowMs, 'since'), until: nowMs };
  const tool = params.get('tool');
  if (tool !== null && (tool === '' || tool.length > MAX_TOOL_NAME)) {
    throw new ConfigError(`invalid tool: expected a tool name of 1 to ${MAX_TOOL_NAME} characters`, 'tool');
  }
  const limitText = params.get('limit');
  let limit = DEFAULT_RECORD_LIMIT;
  if (limitText !== null) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit >= 1 && limit <= MAX_RECORD_LIMIT)) {
      throw new ConfigError(`invalid limit ${JSON.stringify(limitText)}: expected an integer from 1 to ${MAX_RECORD_LIMIT}`, 'limit');
    }
  }
  return { window, since, tool, limit };
}
