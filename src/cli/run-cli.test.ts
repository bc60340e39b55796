import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapture } from './run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('faultline (the program)', () => {
  it('--help lists every command, the main one first', async () => {
    const run = await runCapture(['--help'], dir);
    expect(run.code).toBe(0);
    const listed = [...run.stdout.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]).filter((name) => name !== 'help');
    expect(listed).toEqual(['bench', 'demo', 'stats', 'alerts', 'tail', 'metrics', 'dashboard', 'mock-tools', 'proxy', 'mcp-proxy', 'import', 'annotate', 'corrections', 'breakers', 'review', 'export', 'augment', 'prune', 'predictor']);
  });

  it('an unknown command is one line with a suggestion, exit 2', async () => {
    const run = await runCapture(['stat'], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("faultline: unknown command 'stat' (Did you mean stats?) (see 'faultline --help')\n");
  });

  it("a usage error in a command points at that command's help, where its flags are", async () => {
    const cases: [string[], string][] = [
      [['stats', '--bogus'], "faultline: unknown option '--bogus' (see 'faultline stats --help')\n"],
      [['stats', '--since'], "faultline: option '--since <time>' argument missing (see 'faultline stats --help')\n"],
      [['alerts', '--db', 'x.db', '--top', '3'], "faultline: unknown option '--top' (Did you mean --tool?) (see 'faultline alerts --help')\n"],
      [['export', '--out', 'x.jsonl'], "faultline: required option '--format <format>' not specified (see 'faultline export --help')\n"],
      [['bench', 'compare', 'a'], "faultline: missing required argument 'runB' (see 'faultline bench compare --help')\n"],
      // A typo in a mandatory flag is named as the unknown option it is, not as the flag missing.
      [['export', '--fromat', 'sft', '--out', 'x.jsonl'], "faultline: unknown option '--fromat' (Did you mean --format?) (see 'faultline export --help')\n"],
      [['import', '--bogus', 'x.jsonl'], "faultline: unknown option '--bogus' (see 'faultline import --help')\n"],
      [['export', '--format', 'sft'], "faultline: required option '--out <file>' not specified (see 'faultline export --help')\n"],
      [['--bogus'], "faultline: unknown option '--bogus' (see 'faultline --help')\n"],
    ];
    for (const [argv, stderr] of cases) {
      const run = await runCapture(argv, dir);
      expect(run, argv.join(' ')).toEqual({ code: 2, stdout: '', stderr });
    }
  });

  it('a command loads and runs on its own', async () => {
    const run = await runCapture(['stats', '--db', join(dir, 'missing.db')], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^faultline: no faultline store at /);
  });

  it('--version prints the version', async () => {
    const run = await runCapture(['--version'], dir);
    expect(run).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });
});
