import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInputFile, nonFileProblem, readInputText, readInputTextSync } from './read-input-file.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-read-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const reasonOf = (result: { ok: boolean; reason?: string }) => (result.ok ? 'ok' : result.reason);

describe('readInputText / readInputTextSync / checkInputFile', () => {
  it('reads UTF-8 text, without a byte order mark', async () => {
    const path = file('bom.yaml', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a: ü\n')]));
    expect(await readInputText(path)).toEqual({ ok: true, value: 'a: ü\n' });
    expect(readInputTextSync(path)).toEqual({ ok: true, value: 'a: ü\n' });
  });

  it('refuses a FIFO at once, on every path, without waiting for a writer', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const reason = 'is a FIFO (named pipe), not a regular file';
    expect(reasonOf(await readInputText(fifo))).toBe(reason);
    expect(reasonOf(readInputTextSync(fifo))).toBe(reason);
    expect(reasonOf(checkInputFile(fifo))).toBe(reason);
    expect(nonFileProblem(fifo)).toBe(reason);
  });

  it('refuses a socket and a directory, and names a missing file', async () => {
    const socketPath = join(dir, 'sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect(reasonOf(await readInputText(socketPath))).toBe('is a socket, not a regular file');
      expect(nonFileProblem(socketPath)).toBe('is a socket, not a regular file');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(reasonOf(await readInputText(dir))).toBe('is a directory');
    expect(reasonOf(checkInputFile(join(dir, 'missing')))).toBe('no such file or directory');
    expect(nonFileProblem(join(dir, 'missing'))).toBeUndefined();
  });

  it('refuses an empty or blank file unless the caller allows it', async () => {
    for (const [name, bytes] of [['empty', ''], ['blank', ' \n\t\r\n'], ['bom-only', '\uFEFF\n']] as const) {
      const path = file(name, bytes);
      expect(reasonOf(await readInputText(path)), name).toBe('the file is empty');
      expect(reasonOf(checkInputFile(path)), name).toBe('the file is empty');
      expect((await readInputText(path, { allowEmpty: true })).ok).toBe(true);
    }
    expect(checkInputFile(file('later', `${' '.repeat(100_000)}x`))).toEqual({ ok: true, value: { size: 100_001 } });
  });

  it('refuses bytes that are not UTF-8, naming the line, unless told to replace them', async () => {
    const path = file('latin1.yaml', Buffer.from('version: 1\nrules:\n  - tool: caf\xe9\n', 'latin1'));
    expect(reasonOf(await readInputText(path))).toBe('not valid UTF-8 (line 3)');
    expect(await readInputText(path, { utf8: 'replace' })).toEqual({ ok: true, value: 'version: 1\nrules:\n  - tool: caf\uFFFD\n' });
  });

  it('refuses a file over the size cap', async () => {
    expect(reasonOf(await readInputText(file('big', 'x'.repeat(3 * 1024 * 1024)), { maxBytes: 2 * 1024 * 1024 }))).toBe('larger than 2 MiB');
  });
});
