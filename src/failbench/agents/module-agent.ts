/**
 * `module:<path>`: loads an agent written by the user. The module's default export is either an
 * Agent (an object with `run(task)`) or a factory `(options) => Agent | Promise<Agent>`. A `.ts`
 * module loads as it is where Node strips types, and through tsx (an optional peer) on Node 20.
 */
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../core/errors.js';
import { checkInputFile } from '../../io/read-input-file.js';
import type { Agent } from '../types.js';

/** Imports a TypeScript module by file URL: tsx's `tsImport`, bound to where it resolves from. */
export type TypeScriptImporter = () => Promise<((url: string) => Promise<unknown>) | undefined>;

/** File names Node 20 cannot import without a transpiler. */
const TYPESCRIPT_FILE = /\.(?:[cm]?ts|tsx)$/i;

/** Node strips types itself from 22.18 and 23.6 on (`process.features.typescript`); Node 20 does not. */
function nodeRunsTypeScript(): boolean {
  const support = (process.features as unknown as Record<string, unknown>)['typescript'];
  return support === 'strip' || support === 'transform';
}

/** tsx, when the user's install has it (an optional peer): it loads TypeScript through its own scoped loader hook. */
const tsxImporter: TypeScriptImporter = async () => {
  let api: typeof import('tsx/esm/api');
  try {
    api = await import('tsx/esm/api');
  } catch {
    return undefined;
  }
  return (url) => api.tsImport(url, import.meta.url);
};

async function importModule(file: string, path: string, typeScript: TypeScriptImporter): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!TYPESCRIPT_FILE.test(file) || nodeRunsTypeScript()) return (await import(url)) as Record<string, unknown>;
  const load = await typeScript();
  if (load === undefined) {
    throw new ConfigError(
      `module agent ${path}: Node ${process.version} cannot load TypeScript by itself; install tsx (npm install -D tsx) and faultline loads the agent through it, or compile the agent to .js`,
      'agent',
    );
  }
  return (await load(url)) as Record<string, unknown>;
}

function isWrappedDefault(value: unknown): value is { default: unknown } {
  if (typeof value !== 'object' || value === null || typeof (value as { run?: unknown }).run === 'function') return false;
  const inner = (value as { default?: unknown }).default;
  return typeof inner === 'function' || (typeof inner === 'object' && inner !== null);
}

export interface ModuleAgentOptions {
  /** Relative paths resolve against this. Default: process.cwd(). */
  cwd?: string;
  /** Handed to a factory default export. */
  options?: Record<string, unknown>;
  /** How a .ts module is imported where Node cannot; default: tsx, when installed. */
  typeScriptImporter?: TypeScriptImporter;
}

/**
 * Imports the module and returns its agent. Every problem (missing file, import failure, no
 * default export, wrong shape) is a {@link ConfigError} with a one-line message naming the path.
 *
 * @example
 * const agent = await loadModuleAgent('./agents/my-agent.js', { options: { temperature: 0 } });
 */
export async function loadModuleAgent(path: string, options: ModuleAgentOptions = {}): Promise<Agent> {
  if (path.trim() === '') throw new ConfigError('module agent: a path is required, e.g. module:./my-agent.js', 'agent');
  const file = resolve(options.cwd ?? process.cwd(), path);
  // Before import(): node would wait for ever on a FIFO there.
  const checked = checkInputFile(file);
  if (!checked.ok) {
    const missing = (checked.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    throw new ConfigError(missing ? `module agent ${path}: file not found (${file})` : `module agent ${path}: ${checked.reason}`, 'agent', { cause: checked.cause });
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = await importModule(file, path, options.typeScriptImporter ?? tsxImporter);
  } catch (error) {
    if (ConfigError.isInstance(error)) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ConfigError(`module agent ${path}: failed to load: ${reason}`, 'agent', { cause: error });
  }
  if (!('default' in namespace) || namespace['default'] === undefined) {
    throw new ConfigError(`module agent ${path}: no default export; export default an Agent or a factory (options) => Agent`, 'agent');
  }
  let candidate: unknown = namespace['default'];
  // A .ts file in a package without "type": "module" is CommonJS to tsx: its default export
  // arrives wrapped as `{ default: ... }`.
  if (isWrappedDefault(candidate)) candidate = candidate.default;
  if (typeof candidate === 'function') {
    try {
      candidate = await (candidate as (options: Record<string, unknown>) => unknown)(options.options ?? {});
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new ConfigError(`module agent ${path}: the factory threw: ${reason}`, 'agent', { cause: error });
    }
  }
  if (!isAgentShaped(candidate)) {
    throw new ConfigError(`module agent ${path}: the default export must be an Agent (an object with run(task)) or a factory returning one; got ${describe(candidate)}`, 'agent');
  }
  return withName(candidate, `module:${basename(path)}`);
}

interface AgentShape {
  name?: unknown;
  run: Agent['run'];
  close?: unknown;
  canSample?: unknown;
}

function isAgentShaped(value: unknown): value is AgentShape {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { run?: unknown; close?: unknown };
  return typeof v.run === 'function' && (v.close === undefined || typeof v.close === 'function');
}

/** Keeps the module's own object (its `this`) and only fills in a missing name. */
function withName(agent: AgentShape, fallback: string): Agent {
  if (typeof agent.name === 'string' && agent.name !== '') return agent as Agent;
  const close = agent.close as Agent['close'];
  // `canSample: true` on the module's agent declares that it honors task.sampling (bench --fission).
  const named: Agent = { name: fallback, run: (task) => agent.run(task), ...(agent.canSample === true ? { canSample: true } : {}) };
  if (close !== undefined) named.close = () => close.call(agent);
  return named;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const run = (value as { run?: unknown }).run;
    if (run !== undefined && typeof run !== 'function') return `an object whose run is ${typeof run}`;
    const close = (value as { close?: unknown }).close;
    if (close !== undefined && typeof close !== 'function') return `an object whose close is ${typeof close}`;
    return 'an object without run()';
  }
  return typeof value;
}
