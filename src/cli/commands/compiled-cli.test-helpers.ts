/**
 * The CLI compiled into a temp dir that sees the repository's node_modules, for tests that run
 * `faultline` as a process, as users run it (worker threads and child processes need real `.js`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Compiles the project into `<dir>/dist` and returns the path of `dist/cli/main.js`. Type errors in
 * files other engineers are editing do not stop the emit; a missing output (`mustExist`, relative
 * to dist) does.
 */
export async function compileCli(dir: string, mustExist: readonly string[] = []): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = await run(process.execPath, [tsc, '-p', join(REPO, 'tsconfig.build.json'), '--outDir', join(dir, 'dist'), '--declaration', 'false', '--sourceMap', 'false'], {
    cwd: REPO,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const main = join(dir, 'dist', 'cli', 'main.js');
  for (const path of [main, ...mustExist.map((p) => join(dir, 'dist', p))]) {
    if (!existsSync(path)) throw new Error(`compiling the CLI failed (no ${path}):\n${compiled.stdout}`);
  }
  return main;
}
