import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { makeTask } from './model-agent-contract.test-helpers.js';
import { loadModuleAgent } from './module-agent.js';

describe('loadModuleAgent', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'faultline-module-agent-'));
    const files: Record<string, string> = {
      'object.mjs': `export default { name: 'mine', async run(task) { return { status: 'completed', answer: task.instruction, diagnoses: [] }; } };`,
      'factory.mjs': `export default async (options) => ({
        name: 'factory:' + options.flavor,
        closed: false,
        async run() { return { status: 'gave_up', answer: String(this.closed), diagnoses: [] }; },
        async close() { this.closed = true; },
      });`,
      'nameless.mjs': `export default { calls: 0, async run() { this.calls++; return { status: 'completed', answer: 'calls=' + this.calls, diagnoses: [] }; } };`,
      'no-default.mjs': `export const agent = { name: 'x', run() {} };`,
      'bad-shape.mjs': `export default { name: 'x', run: 'not a function' };`,
      'number.mjs': `export default 42;`,
      'throwing-factory.mjs': `export default () => { throw new Error('missing FOO_TOKEN\\nsecond line'); };`,
      'syntax-error.mjs': `export default {`,
      // TypeScript, as an evaluator writes it: an ES module (see esm/package.json), and one CommonJS to tsx.
      'esm/package.json': '{ "type": "module" }',
      'esm/typed.ts': `import type { AgentTask } from '../../types.js';\nconst greeting: string = 'typed';\nexport default { name: greeting, async run(task: AgentTask) { return { status: 'completed' as const, answer: task.instruction, diagnoses: [] }; } };`,
      'cjs-typed.ts': `export default (options: { flavor: string }) => ({ name: 'cjs:' + options.flavor, async run() { return { status: 'gave_up' as const, answer: '', diagnoses: [] }; } });`,
    };
    await mkdir(join(dir, 'esm'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a default-exported agent object, relative to cwd', async () => {
    const agent = await loadModuleAgent('./object.mjs', { cwd: dir });
    expect(agent.name).toBe('mine');
    await expect(agent.run(makeTask({ instruction: 'hello' }))).resolves.toEqual({ status: 'completed', answer: 'hello', diagnoses: [] });
  });

  it('calls a factory with the options and keeps the agent as its own `this`', async () => {
    const agent = await loadModuleAgent(join(dir, 'factory.mjs'), { options: { flavor: 'vanilla' } });
    expect(agent.name).toBe('factory:vanilla');
    await agent.close?.();
    await expect(agent.run(makeTask())).resolves.toMatchObject({ answer: 'true' });
  });

  it('names an agent that has no name after its file', async () => {
    const agent = await loadModuleAgent('nameless.mjs', { cwd: dir });
    expect(agent.name).toBe('module:nameless.mjs');
    await agent.run(makeTask());
    await expect(agent.run(makeTask())).resolves.toMatchObject({ answer: 'calls=2' });
  });

  it('loads a TypeScript agent (through tsx where Node cannot strip types), ES module or CommonJS', async () => {
    const typed = await loadModuleAgent('./esm/typed.ts', { cwd: dir });
    expect(typed.name).toBe('typed');
    await expect(typed.run(makeTask({ instruction: 'hi' }))).resolves.toEqual({ status: 'completed', answer: 'hi', diagnoses: [] });
    const cjs = await loadModuleAgent('cjs-typed.ts', { cwd: dir, options: { flavor: 'x' } });
    expect(cjs.name).toBe('cjs:x');
  });

  it('without tsx on a Node that cannot strip types, says in one line how to load a .ts agent', async () => {
    const support = (process.features as unknown as Record<string, unknown>)['typescript'];
    const error = await loadModuleAgent('./esm/typed.ts', { cwd: dir, typeScriptImporter: async () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (support === 'strip' || support === 'transform') expect(error).toBeUndefined();
    else expect((error as Error).message).toBe(`module agent ./esm/typed.ts: Node ${process.version} cannot load TypeScript by itself; install tsx (npm install -D tsx) and faultline loads the agent through it, or compile the agent to .js`);
  });

  it.each([
    ['missing.mjs', /^module agent missing\.mjs: file not found/],
    ['no-default.mjs', /^module agent no-default\.mjs: no default export/],
    ['bad-shape.mjs', /^module agent bad-shape\.mjs: the default export must be an Agent .*; got an object whose run is string$/],
    ['number.mjs', /got number$/],
    ['throwing-factory.mjs', /^module agent throwing-factory\.mjs: the factory threw: missing FOO_TOKEN$/],
    ['syntax-error.mjs', /^module agent syntax-error\.mjs: failed to load: /],
    ['', /a path is required/],
  ])('explains %s in one line', async (path, message) => {
    const error = await loadModuleAgent(path, { cwd: dir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
