/**
 * The real tau-bench airline results (MIT, `corpora/tau-bench/LICENSE`), vendored so that a fresh
 * clone runs every test. The path is taken from the repository root, not from this file, so that
 * the compiled and the source layouts agree.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding package.json, above the running file. */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the test file');
    dir = parent;
  }
  return dir;
}

export function tauBenchAirlineFile(): string {
  const file = join(repositoryRoot(), 'corpora', 'tau-bench', 'gpt-4o-airline.json');
  if (!existsSync(file)) throw new Error(`the vendored tau-bench data is missing: ${file}`);
  return file;
}
