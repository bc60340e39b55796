/**
 * A small file store: `write_file`, `read_file`, `list_files`. Paths are absolute and
 * slash-separated; directories exist implicitly, as in object stores. Writes carry a version
 * so an agent can write conditionally (if_version) the way HTTP does with If-Match.
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { AuthError, BusinessError, ParameterError } from '../runtime/tool-errors.js';
import type { CatalogContext } from './catalog-state.js';
import { dailySales } from './sales.js';
import { DAY_MS, addDays, formatIsoDate } from './zoned-time.js';

export interface StoredFile {
  path: string;
  content: string;
  /** UTF-8 bytes. */
  size: number;
  /** 1 for a new file; +1 for every write that changed the content. */
  version: number;
  created_at: string;
  updated_at: string;
}

/** Writable by administrators only; the agent's token may read. */
export const READ_ONLY_PREFIX = '/system/';
export const MAX_FILE_BYTES = 256 * 1024;

const PATH_PATTERN = '^/(?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+$';

function file(path: string, content: string, atMs: number): StoredFile {
  const at = new Date(atMs).toISOString();
  return { path, content, size: Buffer.byteLength(content, 'utf8'), version: 1, created_at: at, updated_at: at };
}

export function seedFiles(seed: number, anchorMs: number): StoredFile[] {
  const lastMonthEnd = formatIsoDate(Date.UTC(new Date(anchorMs).getUTCFullYear(), new Date(anchorMs).getUTCMonth(), 0));
  const month = lastMonthEnd.slice(0, 7);
  const rows = ['date,region,revenue,orders,units'];
  for (let date = `${month}-01`; date <= lastMonthEnd; date = addDays(date, 1)) {
    const f = dailySales(seed, 'south', date);
    rows.push(`${date},south,${f.revenue.toFixed(2)},${f.orders},${f.units}`);
  }
  return [
    file(`/reports/sales-south-${month}.csv`, `${rows.join('\n')}\n`, anchorMs - 20 * DAY_MS),
    file('/notes/project-x.md', '# Project X\n\n- Launch readiness review on Thursday\n- Owner: Li Wei\n- 项目X 周会记录见文档库\n', anchorMs - 6 * DAY_MS),
    file('/notes/todo.txt', 'renew certificates\nsend the March sales summary\n', anchorMs - 2 * DAY_MS),
    file('/system/config.json', `${JSON.stringify({ region: 'cn-east', retention_days: 30, seed }, null, 2)}\n`, anchorMs - 90 * DAY_MS),
  ];
}

function checkPath(path: string): void {
  const segments = path.split('/').slice(1);
  if (segments.some((s) => s === '.' || s === '..')) {
    throw new ParameterError('boundary_violation', `path "${path}" contains "." or ".." segments; use a plain absolute path`, {
      code: 'INVALID_PATH',
      details: { parameter: 'path', received: path },
    });
  }
}

interface WriteArgs {
  path: string;
  content: string;
  if_version?: number;
}

interface ListArgs {
  prefix: string;
  limit: number;
}

export function fileTools(catalog: CatalogContext): ToolSpec<any, unknown>[] {
  const { state } = catalog;
  const meta = (f: StoredFile) => ({ path: f.path, size: f.size, version: f.version, created_at: f.created_at, updated_at: f.updated_at });

  const write: ToolSpec<WriteArgs, ReturnType<typeof meta> & { created: boolean; changed: boolean }> = {
    name: 'write_file',
    description:
      'Creates or replaces a text file (absolute path such as "/notes/plan.md", up to 256 KiB). Writing the same content again changes nothing (same version): idempotent, safe to retry. ' +
      'if_version makes the write conditional: 0 means "only if the file does not exist", n means "only if it is still at version n". ' +
      `Errors: 412 precondition_failed when if_version does not match (details give the current version); 403 forbidden under ${READ_ONLY_PREFIX} (read-only); ` +
      '400 boundary_violation for "." or ".." segments or content over the size limit.',
    input: {
      type: 'object',
      properties: {
        path: { type: 'string', pattern: PATH_PATTERN, maxLength: 256 },
        content: { type: 'string', maxLength: MAX_FILE_BYTES },
        if_version: { type: 'integer', minimum: 0 },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'Write file', readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
    execute(args, ctx) {
      checkPath(args.path);
      if (args.path.startsWith(READ_ONLY_PREFIX)) {
        throw new AuthError('forbidden', `${READ_ONLY_PREFIX} is read-only for this token`, { code: 'READ_ONLY_PATH', status: 403, details: { path: args.path } });
      }
      const size = Buffer.byteLength(args.content, 'utf8');
      if (size > MAX_FILE_BYTES) {
        throw new ParameterError('boundary_violation', `content is ${size} bytes; the limit is ${MAX_FILE_BYTES}`, { code: 'FILE_TOO_LARGE', details: { parameter: 'content', size, max: MAX_FILE_BYTES } });
      }
      const existing = state.files.get(args.path);
      const current = existing?.version ?? 0;
      if (args.if_version !== undefined && args.if_version !== current) {
        throw new BusinessError('precondition_failed', existing === undefined ? `${args.path} does not exist (if_version ${args.if_version})` : `${args.path} is at version ${current}, not ${args.if_version}`, {
          code: 'VERSION_MISMATCH',
          details: { path: args.path, current_version: current, expected_version: args.if_version },
        });
      }
      const at = new Date(ctx.clock.now()).toISOString();
      if (existing === undefined) {
        const created: StoredFile = { path: args.path, content: args.content, size, version: 1, created_at: at, updated_at: at };
        state.files.set(args.path, created);
        return { ...meta(created), created: true, changed: true };
      }
      if (existing.content === args.content) return { ...meta(existing), created: false, changed: false };
      Object.assign(existing, { content: args.content, size, version: existing.version + 1, updated_at: at });
      return { ...meta(existing), created: false, changed: true };
    },
  };

  const read: ToolSpec<{ path: string }, StoredFile> = {
    name: 'read_file',
    description:
      'Reads a text file with its version and timestamps. Errors: 404 not_found when no file has that path (details list files in the same directory, or say it is a directory: use list_files). ' +
      'Read-only and idempotent: safe to retry.',
    input: { type: 'object', properties: { path: { type: 'string', pattern: PATH_PATTERN, maxLength: 256 } }, required: ['path'], additionalProperties: false },
    idempotent: true,
    annotations: { title: 'Read file', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args) {
      checkPath(args.path);
      const found = state.files.get(args.path);
      if (found !== undefined) return { ...found };
      const asDirectory = `${args.path}/`;
      const isDirectory = [...state.files.keys()].some((p) => p.startsWith(asDirectory));
      const parent = args.path.slice(0, args.path.lastIndexOf('/') + 1);
      const siblings = [...state.files.keys()].filter((p) => p.startsWith(parent) && !p.slice(parent.length).includes('/')).sort();
      throw new BusinessError('not_found', isDirectory ? `${args.path} is a directory, not a file; use list_files` : `no file at ${args.path}`, {
        code: isDirectory ? 'IS_A_DIRECTORY' : 'FILE_NOT_FOUND',
        details: { path: args.path, is_directory: isDirectory, files_in_directory: siblings },
      });
    },
  };

  const list: ToolSpec<ListArgs, { prefix: string; total: number; files: ReturnType<typeof meta>[] }> = {
    name: 'list_files',
    description:
      'Lists files whose path starts with prefix (default "/", everything), sorted by path, without their content. An empty list means nothing is stored there. ' +
      'Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        prefix: { type: 'string', pattern: '^/', maxLength: 256, default: '/' },
        limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
      },
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'List files', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args) {
      const all = [...state.files.values()].filter((f) => f.path.startsWith(args.prefix)).sort((a, b) => a.path.localeCompare(b.path));
      return { prefix: args.prefix, total: all.length, files: all.slice(0, args.limit).map(meta) };
    },
  };

  return [write, read, list];
}
