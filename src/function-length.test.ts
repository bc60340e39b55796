/**
 * No function in the runtime, the recorder, the fault injectors or FailBench runs past 200
 * lines: past that a closure holds state machines that want files (and tests) of their own.
 * The functions still awaiting their split are listed; they are exempt until they are short.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const FOLDERS = ['src/runtime', 'src/record', 'src/faults', 'src/failbench'];
const MAX_LINES = 200;

/** `path:function` of the functions still awaiting their split. */
const AWAITING_SPLIT = new Set<string>([]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.test-helpers.ts')) out.push(path);
  }
  return out;
}

function nameOf(node: ts.SignatureDeclaration, file: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(file);
  return `(anonymous at line ${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1})`;
}

/** Every function body longer than MAX_LINES, as `path:name` -> lines (the longest of a name). */
function longFunctions(): Map<string, number> {
  const found = new Map<string, number>();
  for (const folder of FOLDERS) {
    for (const path of sourceFiles(join(ROOT, folder))) {
      const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
          const last = file.getLineAndCharacterOfPosition(node.end).line;
          const lines = last - first + 1;
          if (lines > MAX_LINES) {
            const key = `${relative(ROOT, path)}:${nameOf(node, file)}`;
            found.set(key, Math.max(lines, found.get(key) ?? 0));
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
  }
  return found;
}

describe('function length', () => {
  const found = longFunctions();

  it(`finds no function over ${MAX_LINES} lines but those awaiting their split`, () => {
    const over = [...found].filter(([key]) => !AWAITING_SPLIT.has(key)).map(([key, lines]) => `${key} (${lines} lines)`);
    expect(over).toEqual([]);
  });

  it('lists no function as awaiting its split once it is short', () => {
    expect([...AWAITING_SPLIT].filter((key) => !found.has(key))).toEqual([]);
  });
});
