// faultline/bench, as an evaluator uses it: every subpath the package exports is built from a
// source file, and the entry's API runs a suite with an agent written against its types.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRobustAgent, loadSuite, MEASURES, runSuite, SCORING_RULES, scoreSuite, type Agent, type AgentTask } from './bench.js';

describe('the package exports', () => {
  it('builds every subpath it exports from a source file, ./bench included', () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { exports: Record<string, string | { import: string; types: string }> };
    expect(Object.keys(pkg.exports)).toContain('./bench');
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      const source = target.import.replace(/^\.\/dist\//, '../src/').replace(/\.js$/, '.ts');
      expect(existsSync(fileURLToPath(new URL(source, import.meta.url))), `${subpath} -> ${source}`).toBe(true);
      expect(target.types).toBe(target.import.replace(/\.js$/, '.d.ts'));
    }
  });
});

describe('faultline/bench', () => {
  it('loads the bundled suite, runs a custom agent beside the robust one, and scores both', async () => {
    const scenarios = await loadSuite('default', { filter: 'weather/*-en' });
    expect(scenarios.length).toBeGreaterThan(10);
    const robust = createRobustAgent();
    // An evaluator's agent: the robust one, told to stop after 2 calls of any one tool.
    const capped: Agent = {
      name: 'capped',
      run(task: AgentTask) {
        const calls = new Map<string, number>();
        return robust.run({
          ...task,
          callTool: (name, args) => {
            calls.set(name, (calls.get(name) ?? 0) + 1);
            return (calls.get(name) ?? 0) > 2 ? Promise.resolve({ ok: false, error: { code: 'CAPPED', message: 'no more calls' } }) : task.callTool(name, args);
          },
        });
      },
    };
    const suite = await runSuite({ scenarios, agents: [createRobustAgent(), capped], feedback: 'raw', seed: 1 });
    const [a, b] = scoreSuite(suite);
    expect(a!.agent).toBe('robust');
    for (const m of MEASURES) expect(a!.coverage[m].failable).toBe(a!.coverage[m].scored);
    expect(a!.score).toBeGreaterThanOrEqual(0.95);
    // The cap stops it before it can wait out a rate limit or a longer outage.
    expect(b!.score).toBeLessThan(a!.score);
    expect(SCORING_RULES.map((r) => r.measure)).toEqual([...MEASURES, 'needless_calls']);
  });
});
