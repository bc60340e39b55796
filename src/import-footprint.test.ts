/**
 * What `import 'faultline'` loads, watched from a child process: every module the child resolves
 * is written down by a resolve hook, and the CommonJS cache is read after the import. The root
 * entry must leave the storage drivers, prom-client and the MCP SDK alone until they are used.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runTypeScriptProcess } from './ts-worker.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-import-footprint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOOK = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(out, resolved.url + '\\n');
  return resolved;
}
`;

interface Footprint {
  /** Every module URL the child resolved. */
  resolved: string[];
  /** The CommonJS modules loaded, by file name. */
  required: string[];
}

/** Imports `entry` (a file under src/) in a child process, then runs `after` there (JS text). */
async function footprint(name: string, entry: string, after = ''): Promise<Footprint> {
  const hook = join(dir, 'record-resolve.mjs');
  writeFileSync(hook, HOOK);
  const out = join(dir, `${name}.resolved`);
  const script = join(dir, `${name}.ts`);
  writeFileSync(
    script,
    `import { createRequire, register } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(out)}, '');
register(${JSON.stringify(pathToFileURL(hook).href)}, { data: { out: ${JSON.stringify(out)} } });
const mod = await import(${JSON.stringify(new URL(entry, import.meta.url).href)});
${after}
const resolved = readFileSync(${JSON.stringify(out)}, 'utf8').split('\\n').filter(Boolean);
const required = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(JSON.stringify({ resolved, required }));
`,
  );
  return JSON.parse(await runTypeScriptProcess(script, join(dir, 'boot'))) as Footprint;
}

const HEAVY = /node_modules\/(better-sqlite3|pg|pg-pool|prom-client|ioredis|@modelcontextprotocol\/sdk)\//;
const heavyOf = (f: Footprint): string[] => [...new Set([...f.resolved, ...f.required].map((u) => HEAVY.exec(u)?.[1]).filter((p) => p !== undefined))].sort();

describe("import 'faultline'", () => {
  it('loads no storage driver, metrics client or MCP SDK', { timeout: 120_000 }, async () => {
    const root = await footprint('root', './index.ts');
    expect(root.resolved.some((u) => u.endsWith('/src/runtime/runtime.ts'))).toBe(true);
    expect(heavyOf(root)).toEqual([]);
  });

  it('still opens a SQLite store through the runtime, loading the driver then', { timeout: 120_000 }, async () => {
    const used = await footprint(
      'root-used',
      './index.ts',
      `const rt = mod.createRuntime({ tools: [], store: ':memory:' });
await rt.close();
const { openStore } = await import(${JSON.stringify(new URL('./store.ts', import.meta.url).href)});
await (await openStore('sqlite::memory:')).close();`,
    );
    expect(heavyOf(used)).toEqual(['better-sqlite3']);
  });

  it('is told apart from an entry that does load them (faultline/faults: the MCP proxy)', { timeout: 120_000 }, async () => {
    expect(heavyOf(await footprint('faults', './faults.ts'))).toContain('@modelcontextprotocol/sdk');
  });
});
