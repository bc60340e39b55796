import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replaceFiles } from '../io/replace-files.js';
import { assertWritableDirectory, assertWritableFile, openOutputStream } from './output-paths.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-output-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('output paths', () => {
  it('replaceFiles: a rename failing midway puts back the files already replaced and removes the new ones', () => {
    const at = join(dir, 'midway');
    mkdirSync(at);
    writeFileSync(join(at, 'a'), 'old a');
    writeFileSync(join(at, 'b'), 'old b');
    writeFileSync(join(at, 'a.tmp'), 'new a');
    writeFileSync(join(at, 'b.tmp'), 'new b');
    writeFileSync(join(at, 'c.tmp'), 'new c');
    // d.tmp is missing: the fourth rename fails after a, b and c are in place.
    const moves = ['a', 'b', 'c', 'd'].map((name) => [join(at, `${name}.tmp`), join(at, name)] as const);
    expect(() => replaceFiles(moves)).toThrow(`cannot write ${join(at, 'd')}: no such file or directory`);
    expect(readFileSync(join(at, 'a'), 'utf8')).toBe('old a');
    expect(readFileSync(join(at, 'b'), 'utf8')).toBe('old b');
    // c had no old file: its new one is gone again, and so are the backups.
    expect(readdirSync(at).sort()).toEqual(['a', 'b']);

    for (const name of ['a', 'b', 'c', 'd']) writeFileSync(join(at, `${name}.tmp`), `new ${name}`);
    replaceFiles(moves);
    expect(['a', 'b', 'c', 'd'].map((name) => readFileSync(join(at, name), 'utf8'))).toEqual(['new a', 'new b', 'new c', 'new d']);
    expect(readdirSync(at).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('replaceFiles: a directory at any target replaces nothing', () => {
    const at = join(dir, 'directory');
    mkdirSync(join(at, 'b'), { recursive: true });
    writeFileSync(join(at, 'a'), 'old a');
    writeFileSync(join(at, 'a.tmp'), 'new a');
    writeFileSync(join(at, 'b.tmp'), 'new b');
    expect(() => replaceFiles(['a', 'b'].map((name) => [join(at, `${name}.tmp`), join(at, name)] as const))).toThrow(`cannot write ${join(at, 'b')}: is a directory`);
    expect(readFileSync(join(at, 'a'), 'utf8')).toBe('old a');
    expect(readdirSync(join(at, 'b'))).toEqual([]);
  });

  it('the checks name the path as given', () => {
    writeFileSync(join(dir, 'a-file'), '');
    expect(() => assertWritableFile(dir, 'given')).toThrow('cannot write given: is a directory');
    expect(() => assertWritableFile(join(dir, 'no', 'x'), 'no/x')).toThrow('cannot write no/x: its directory does not exist');
    expect(() => assertWritableFile(join(dir, 'a-file', 'x', 'y'), 'a-file/x/y', { createDirectory: true })).toThrow('cannot write a-file/x/y: a-file is not a directory');
    expect(() => assertWritableFile(join(dir, 'no', 'x'), 'no/x', { createDirectory: true })).not.toThrow();
    expect(() => assertWritableDirectory(join(dir, 'a-file'), 'a-file')).toThrow('cannot write a-file: not a directory');
    expect(() => assertWritableDirectory(join(dir, 'new', 'deeper'), 'new/deeper')).not.toThrow();
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('openOutputStream: a file that cannot be opened rejects the write or the close with one line', async () => {
    const early = openOutputStream(dir, 'given');
    await expect(early.close()).rejects.toThrow('cannot write given: is a directory');
    const late = openOutputStream(dir, 'given');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(late.write('x\n')).rejects.toThrow('cannot write given: is a directory');
    await expect(late.close()).rejects.toThrow('cannot write given: is a directory');
  });
});
