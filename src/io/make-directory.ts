/**
 * `mkdir -p`, one level at a time. Node 20's recursive mkdir spins forever under
 * pseudo-filesystems such as /proc (mkdir answers ENOENT for a parent that exists), which would
 * hang the CLI on a mistyped --db or spool path instead of failing with a clear line.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export function makeDirectorySync(dir: string): void {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeDirectorySync(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

export async function makeDirectory(dir: string): Promise<void> {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) await makeDirectory(parent);
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
