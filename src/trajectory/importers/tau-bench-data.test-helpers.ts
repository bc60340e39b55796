/**
 * Finds the real tau-bench file in `shared/` beside the repository (CI clones the repository
 * elsewhere with a copy of shared/ next to it, so the path is taken from the repository root,
 * not from this file). Missing data skips the tests with a printed reason, except under CI=true.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the test file');
    dir = parent;
  }
  return dir;
}

export function tauBenchAirlineFile(): string | undefined {
  const file = join(repositoryRoot(), '..', 'shared', 'data', 'tau-bench', 'gpt-4o-airline.json');
  if (existsSync(file)) return file;
  if (process.env['CI'] === 'true') throw new Error(`the tau-bench data is required when CI=true: ${file} is missing`);
  console.warn(`skipping the real tau-bench tests: ${file} is missing`);
  return undefined;
}
