import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapture } from '../../cli/run-cli.test-helpers.js';
import { fileJudgeCache } from './judge-cache.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-judge-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether this process can open `path` for reading (root with CAP_DAC_OVERRIDE can, whatever its mode). */
function readable(path: string): boolean {
  try {
    closeSync(openSync(path, 'r'));
    return true;
  } catch {
    return false;
  }
}

describe('fileJudgeCache', () => {
  it('a cache path that is a directory is one ConfigError line', () => {
    mkdirSync(join(dir, 'a-dir'));
    expect(() => fileJudgeCache(join(dir, 'a-dir'), 'm')).toThrow(expect.objectContaining({ name: 'ConfigError', message: `cannot read the judge cache ${join(dir, 'a-dir')}: is a directory` }));
    // The CLI refuses it before: it could not append to it either.
    return expect(runCapture(['annotate', '--judge', 'llm:judge-model', '--judge-cache', 'a-dir'], dir)).resolves.toEqual({ code: 2, stdout: '', stderr: 'faultline: cannot write a-dir: is a directory\n' });
  });

  it('a cache file it may not read is one ConfigError line saying why in words, and through the CLI exit 2 before any request', async (ctx) => {
    const locked = join(dir, 'locked.jsonl');
    writeFileSync(locked, '', { mode: 0o000 });
    if (readable(locked)) ctx.skip();
    expect(() => fileJudgeCache(locked, 'm')).toThrow(expect.objectContaining({ name: 'ConfigError', message: `cannot read the judge cache ${locked}: permission denied` }));
    const run = await runCapture(['annotate', '--judge', 'llm:judge-model', '--judge-cache', 'locked.jsonl'], dir);
    expect(run).toEqual({ code: 2, stdout: '', stderr: `faultline: cannot read the judge cache ${locked}: permission denied\n` });
  });
});
