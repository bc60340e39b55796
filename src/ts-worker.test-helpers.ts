/**
 * Starts a TypeScript worker entry under vitest. Node 20 cannot run `.ts` in a worker thread and
 * vitest does not transform code there, so the worker boots through module hooks that map
 * `./x.js` to `./x.ts` when only the source exists and transpile it with the project's
 * TypeScript. `dist/` needs
 * none of this: there the `.js` entry sits beside its caller.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HOOKS = (cacheDir: string, typescriptUrl: string) => `import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
let ts;
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:'))) return next(specifier.slice(0, -3) + '.ts', context);
    throw error;
  }
}
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  // Shared on disk by every worker's hooks thread, so TypeScript is loaded once.
  const cached = ${JSON.stringify(cacheDir)} + '/ts-' + fileName.replace(/[^A-Za-z0-9.]/g, '_') + '.mjs';
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  ts ??= (await import(${JSON.stringify(typescriptUrl)})).default;
  const { outputText } = ts.transpileModule(readFileSync(fileName, 'utf8'), {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  const tmp = cached + '.' + process.pid + '-' + Math.random().toString(36).slice(2);
  writeFileSync(tmp, outputText);
  renameSync(tmp, cached);
  return { format: 'module', source: outputText, shortCircuit: true };
}
`;

/** A worker URL that runs the TypeScript module `entry` (a file: URL), with scratch files in `dir`. */
export function typeScriptWorkerUrl(entry: URL, dir: string): URL {
  mkdirSync(dir, { recursive: true });
  const typescriptUrl = pathToFileURL(createRequire(import.meta.url).resolve('typescript')).href;
  const hooks = join(dir, 'ts-hooks.mjs');
  writeFileSync(hooks, HOOKS(dir, typescriptUrl));
  const boot = join(dir, 'boot-worker.mjs');
  writeFileSync(boot, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\nawait import(${JSON.stringify(entry.href)});\n`);
  return pathToFileURL(boot);
}

/**
 * Runs the TypeScript file `script` in a child Node process (booted as above, scratch files in
 * `dir`); resolves with its stdout when it exits 0, rejects with its stderr otherwise.
 */
export function runTypeScriptProcess(script: string, dir: string): Promise<string> {
  const boot = fileURLToPath(typeScriptWorkerUrl(pathToFileURL(script), dir));
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [boot], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
}
