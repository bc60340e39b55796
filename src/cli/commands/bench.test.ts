import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunComparison } from '../../failbench/compare.js';
import type { ResultsFile } from '../../failbench/report/write-report.js';
import type { AgentReport } from '../../failbench/types.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OUTAGE = `
title: Weather service down
language: en
kind: single_step
taxonomy: { category: system, subtype: 5xx }
dimensions: [identification, loop_avoidance]
recoverable: false
instruction: What will the weather be in Paris on 2026-03-30?
tools: [get_weather]
faults:
  - { id: down, tool: get_weather, trigger: always, fault: http_status, params: { status: 503 } }
oracle:
  status: [gave_up, escalated]
  diagnosis: { tool: get_weather, category: system }
`;

const RATE_LIMIT = `
title: Weather rate limited once
language: en
kind: single_step
taxonomy: { category: rate_limit, subtype: rate_limit }
dimensions: [recovery, loop_avoidance]
recoverable: true
instruction: What will the weather be in Paris on 2026-03-30?
tools: [get_weather]
faults:
  - { id: limited, tool: get_weather, trigger: { nth: [1] }, fault: http_status, params: { status: 429, retry_after: 30 } }
oracle:
  status: [completed]
  answer_contains: [paris]
`;

/** A module agent that calls get_weather up to 5 times, waiting out Retry-After, and gives up on anything else. */
const MODULE_AGENT = `
export default {
  name: 'waiter',
  async run(task) {
    for (let i = 0; i < 5; i++) {
      const r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      if (r.ok) return { status: 'completed', answer: 'Paris: ' + r.output.condition, diagnoses: [] };
      const wait = r.error.headers?.['retry-after'];
      if (wait === undefined) return { status: 'gave_up', answer: 'weather is down', diagnoses: [{ tool: 'get_weather', category: 'system' }] };
      await task.sleep(Number(wait) * 1000);
    }
    return { status: 'gave_up', answer: 'still limited', diagnoses: [] };
  },
};
`;

/** Calls get_weather 6 times no matter what. */
const HAMMER_AGENT = `
export default () => ({
  name: 'hammer',
  async run(task) {
    let last;
    for (let i = 0; i < 6; i++) last = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
    return { status: 'completed', answer: last.ok ? 'Paris is fine' : 'sunny', diagnoses: [] };
  },
});
`;

let suite: string;
beforeAll(() => {
  suite = join(dir, 'suite');
  mkdirSync(join(suite, 'weather'), { recursive: true });
  writeFileSync(join(suite, 'weather', 'outage.yaml'), OUTAGE);
  writeFileSync(join(suite, 'weather', 'rate-limit.yaml'), RATE_LIMIT);
  writeFileSync(join(dir, 'waiter.mjs'), MODULE_AGENT);
  writeFileSync(join(dir, 'hammer.mjs'), HAMMER_AGENT);
  writeFileSync(join(dir, 'crasher.mjs'), `export default { name: 'crasher', async run(task) { await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' }); throw new Error('model output did not parse\\nat line 3'); } };`);
  writeFileSync(join(dir, 'flaky.mjs'), `let n = 0; export default { name: 'flaky', async run() { if (n++ === 0) throw new Error('once'); return { status: 'gave_up', answer: '', diagnoses: [] }; } };`);
});

async function bench(args: readonly string[]) {
  return runCapture(['bench', '--suite', suite, '--db', join(dir, 'bench.db'), ...args], dir);
}

describe('faultline bench', () => {
  it('--json prints exactly the per-agent report, and writes the report and the records', async () => {
    const out = join(dir, 'out-waiter');
    const run = await bench(['--agent', 'module:./waiter.mjs', '--out', out, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AgentReport;
    expect(Object.keys(report)).toEqual(['run_id', 'agent', 'scenarios', 'dimensions', 'retry_after_compliance', 'needless_call_rate', 'invented_diagnoses', 'score']);
    expect(report).toMatchObject({ agent: 'waiter', scenarios: 2, retry_after_compliance: 1, needless_call_rate: 0, invented_diagnoses: 0, score: 1 });
    expect(report.dimensions.identification).toEqual({ rate: 1, n: 1, ci95: [0.2065, 1] });
    expect(report.dimensions.loop_avoidance).toEqual({ rate: 1, n: 2, ci95: [0.3424, 1] });
    expect(report.dimensions.semantic_verification).toEqual({ rate: 0, n: 0, ci95: [0, 1] });

    expect(readdirSync(out).sort()).toEqual(['report.html', 'report.md', 'results.json']);
    const saved = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsFile;
    expect(saved.suite.meta).toMatchObject({ runId: report.run_id, version: '0.1.0', seed: 1, feedback: 'raw', transport: 'inprocess', agents: ['waiter'] });

    const store = createSqliteStore({ path: join(dir, 'bench.db') });
    const records = await store.query({ traceId: `failbench:${report.run_id}:waiter:weather/rate-limit:0` });
    await store.close();
    expect(records.map((r) => [r.status, r.fault?.kind ?? null])).toEqual([
      ['failure', 'http_status'],
      ['success', null],
    ]);
  });

  it('--concurrency above 10 runs without a MaxListenersExceededWarning on stderr', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      // 16 runs in flight at once, each listening to the suite's stop signal.
      const run = await bench(['--agent', 'robust', '--repeat', '8', '--concurrency', '16', '--out', join(dir, 'out-c16'), '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });

  it.each(['http', 'mcp'])('--transport %s --agent robust --json: the same scores, and records from the proxy with the fault', async (transport) => {
    const out = join(dir, `out-${transport}`);
    const db = join(dir, `${transport}.db`);
    const run = await runCapture(['bench', '--suite', suite, '--db', db, '--agent', 'robust', '--transport', transport, '--out', out, '--json'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AgentReport;
    expect(report).toMatchObject({ agent: 'robust', scenarios: 2, retry_after_compliance: 1, score: 1 });
    const saved = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsFile;
    expect(saved.suite.meta.transport).toBe(transport);

    const store = createSqliteStore({ path: db });
    const records = await store.query({ traceId: `failbench:${report.run_id}:robust:weather/rate-limit:0` });
    await store.close();
    expect(records.map((r) => [r.status, r.fault?.kind ?? null, r.fault?.transport ?? null, r.context_snapshot['transport']])).toEqual([
      ['failure', 'http_status', transport, transport],
      ['success', null, null, transport],
    ]);
  });

  it('several agents: an array in --json, a dimensions x agents table otherwise', async () => {
    const json = await bench(['--agent', 'module:./waiter.mjs', '--agent', 'module:./hammer.mjs', '--out', join(dir, 'out-two'), '--json']);
    expect(json.code).toBe(0);
    const reports = JSON.parse(json.stdout) as AgentReport[];
    expect(reports.map((r) => [r.agent, r.dimensions.loop_avoidance.rate])).toEqual([
      ['waiter', 1],
      ['hammer', 0.5],
    ]);
    expect(new Set(reports.map((r) => r.run_id)).size).toBe(1);

    const text = await bench(['--agent', 'module:./waiter.mjs', '--agent', 'module:./hammer.mjs', '--out', join(dir, 'out-two-text')]);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^FailBench \S+: 2 scenarios x 2 agent\(s\) x 1 repeat\(s\), feedback raw, transport inprocess, seed 1$/);
    expect(lines.find((l) => l.startsWith('measure'))).toMatch(/^measure\s+waiter\s+hammer$/);
    // The overall score comes first.
    expect(lines.findIndex((l) => l.startsWith('Overall score'))).toBe(lines.findIndex((l) => l.startsWith('measure')) + 2);
    expect(lines.find((l) => l.startsWith('Loop avoidance'))).toMatch(/100\.0% \[34\.2-100\.0%\] n=2\s+50\.0% \[9\.5-90\.5%\] n=2$/);
    // Per run: the waiter waited out its one Retry-After, the hammer did not.
    expect(lines.find((l) => l.startsWith('Retry-After compliance'))).toMatch(/100\.0% \[\S+\] n=1\s+0\.0% \[\S+\] n=1$/);
    expect(lines.find((l) => l.startsWith('Needless calls'))).toMatch(/0\.0% \(0\/\d+\)\s+\d+\.\d% \(\d+\/\d+\)$/);
    expect(text.stdout).toContain(`Report: ${join(dir, 'out-two-text', 'report.html')}`);
    // The records are dated on the scenarios' virtual clock; the command it prints finds them.
    const hint = lines.find((l) => l.startsWith('They are dated'));
    const command = /: npx faultline (stats .*)$/.exec(hint ?? '')?.[1];
    expect(command).toBeDefined();
    const stats = await runCapture([...command!.split(' ').map((a) => a.replace(/^"(.*)"$/, '$1')), '--json'], dir);
    expect(stats.code).toBe(0);
    const counted = (JSON.parse(stats.stdout) as { tools: { total: number }[] }).tools.reduce((n, t) => n + t.total, 0);
    expect(counted).toBeGreaterThan(0);
    // No progress bar when stdout is not a terminal.
    expect(text.stdout).not.toContain('bench [');
  });

  it('draws a progress bar on a terminal', async () => {
    const captured = captureIo(dir);
    Object.assign(captured.io.stdout, { isTTY: true, columns: 120 });
    const code = await runCli(['bench', '--suite', suite, '--db', join(dir, 'bench.db'), '--agent', 'module:./waiter.mjs', '--out', join(dir, 'out-tty')], captured.io);
    expect(code).toBe(0);
    expect(captured.stdout()).toMatch(/bench \[[░█]+\] \d\/2 runs/);
    expect(captured.stdout()).toContain('Loop avoidance');
  });

  it('--repeat, --seed, --feedback assisted and --filter reach the run', async () => {
    const out = join(dir, 'out-assisted');
    const run = await bench(['--agent', 'module:./hammer.mjs', '--filter', 'recovery', '--repeat', '2', '--concurrency', '2', '--seed', '9', '--feedback', 'assisted', '--out', out]);
    expect(run.code).toBe(0);
    const saved = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsFile;
    expect(saved.suite.meta).toMatchObject({ seed: 9, feedback: 'assisted', repeat: 2, concurrency: 2 });
    expect(saved.suite.scenarios.map((s) => s.id)).toEqual(['weather/rate-limit']);
    expect(saved.suite.results).toHaveLength(2);
    expect(saved.state_scope).toBe('changed');
    expect(saved.suite.results[0]!.state.orders).toEqual([]);
    // The runtime waited out the 429 itself: the hammer never saw it.
    expect(saved.scores[0]!.absorbedFailures).toBe(2);
    expect(saved.scores[0]!.passK).toEqual([1, 1]);
    expect(run.stdout).toContain('Faults absorbed by the runtime');
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('Assisted mode');
  });

  it('--capabilities turns the runtime checks on for every run; an unknown one is refused before anything runs', async () => {
    const out = join(dir, 'out-capabilities');
    const run = await bench(['--agent', 'module:./hammer.mjs', '--filter', 'weather/outage', '--feedback', 'assisted', '--capabilities', 'loop-guard,breaker-probes', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('feedback assisted + loop-guard, breaker-probes');
    const saved = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsFile;
    expect(saved.suite.meta.capabilities).toEqual(['loop-guard', 'breaker-probes']);
    const bad = await bench(['--capabilities', 'loop-guard,idempotence', '--out', join(dir, 'out-bad-capabilities')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --capabilities "loop-guard,idempotence": unknown capability "idempotence"');
    expect(existsSync(join(dir, 'out-bad-capabilities'))).toBe(false);
  });

  it('--filter takes fault kinds, scenario kinds, dimensions and id globs', async () => {
    const ids = async (filter: string) => {
      const out = join(dir, `filter-${filter.replace(/[^\w]/g, '_')}`);
      const run = await bench(['--agent', 'module:./waiter.mjs', '--filter', filter, '--out', out]);
      expect(run.code).toBe(0);
      return (JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsFile).suite.scenarios.map((s) => s.id);
    };
    expect(await ids('http_status')).toEqual(['weather/outage', 'weather/rate-limit']);
    expect(await ids('single_step')).toEqual(['weather/outage', 'weather/rate-limit']);
    expect(await ids('identification')).toEqual(['weather/outage']);
    expect(await ids('*/rate-*')).toEqual(['weather/rate-limit']);
  });

  it('runs the default suite with the reference agents', async () => {
    const out = join(dir, 'out-default');
    const run = await runCapture(['bench', '--filter', 'weather/*', '--db', join(dir, 'default.db'), '--out', out, '--json'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const reports = JSON.parse(run.stdout) as AgentReport[];
    expect(reports.map((r) => r.agent)).toEqual(['naive', 'robust']);
    expect(reports[0]!.scenarios).toBeGreaterThan(0);
    expect(reports[0]!.scenarios).toBe(reports[1]!.scenarios);
  });

  it.each([
    [['--repeat', '0'], /invalid --repeat "0"/],
    [['--concurrency', 'lots'], /invalid --concurrency "lots"/],
    [['--seed', '-1'], /invalid --seed "-1"/],
    [['--feedback', 'loud'], /invalid --feedback "loud": expected raw or assisted/],
    [['--transport', 'grpc'], /invalid --transport "grpc": expected inprocess, http, mcp/],
    [['--transport', 'HTTP'], /invalid --transport "HTTP"/],
    [['--agent', 'clever'], /unknown agent "clever"/],
    [['--agent', 'module:./missing.mjs'], /module agent \.\/missing\.mjs: file not found/],
    [['--filter', 'nothing-matches-this'], /no scenario in .* matches --filter nothing-matches-this; a term is a dimension \(identification, recovery, loop_avoidance, semantic_verification, idempotency_safety\), a scenario kind \(single_step, cascade, semantic, mixed\), a fault kind of the suite \(http_status\) or an id glob \(weather\/\*, \*-zh\)$/m],
    [['--filter', 'commit_then_drop,cascade'], /no scenario in .* matches --filter commit_then_drop,cascade/],
    [['--suite', 'no-such-dir'], /^faultline: cannot read scenario directory .*no-such-dir: no such file or directory\n$/],
    [['--bogus'], /unknown option '--bogus'/],
  ])('%j: one line, exit 2, nothing written', async (args, message) => {
    const out = join(dir, `bad-${args.join('-').replace(/[^\w-]/g, '_')}`);
    const run = await bench([...args, '--out', out]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('an agent that throws on every run: one line with its first error, exit 2, no report', async () => {
    const out = join(dir, 'out-crasher');
    const run = await bench(['--agent', 'robust', '--agent', 'module:./crasher.mjs', '--out', out]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('faultline: agent crasher: every run crashed: model output did not parse\n');
    expect(existsSync(out)).toBe(false);
    // One crash among runs that ended is the agent's score, not a broken agent.
    const flaky = await bench(['--agent', 'module:./flaky.mjs', '--out', join(dir, 'out-flaky'), '--json']);
    expect(flaky.code).toBe(0);
  });

  it('--out a file or under a file: refused before the run, one line, exit 2, nothing stored', async () => {
    const db = join(dir, 'refused.db');
    writeFileSync(join(dir, 'a-file'), 'kept\n');
    for (const [out, message] of [
      ['a-file', 'cannot write a-file: not a directory'],
      ['a-file/sub', 'cannot write a-file/sub: a-file is not a directory'],
    ] as const) {
      const run = await runCapture(['bench', '--suite', suite, '--db', db, '--agent', 'naive', '--out', out], dir);
      expect(run.code, out).toBe(2);
      expect(run.stdout, out).toBe('');
      expect(run.stderr, out).toBe(`faultline: ${message}\n`);
    }
    expect(existsSync(db)).toBe(false);
    expect(readFileSync(join(dir, 'a-file'), 'utf8')).toBe('kept\n');
  });

  it.skipIf(!(process.platform === 'linux' && existsSync('/dev/full')))('a report that cannot be written (a full disk): one line, exit 2, no temporary file, the previous report kept', async () => {
    const out = join(dir, 'out-full');
    expect((await bench(['--agent', 'module:./waiter.mjs', '--out', 'out-full', '--json'])).code).toBe(0);
    const previous = Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f), 'utf8')]));
    expect(Object.keys(previous).sort()).toEqual(['report.html', 'report.md', 'results.json']);
    // The report's temporary name is the file's own plus this process's id: /dev/full there
    // answers every write with ENOSPC, as a full disk does.
    symlinkSync('/dev/full', join(out, `report.md.tmp-${process.pid}`));
    const run = await bench(['--agent', 'module:./waiter.mjs', '--out', 'out-full', '--json']);
    expect(run).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: cannot write out-full/report.md: no space left on the device\n' });
    expect(readdirSync(out).sort()).toEqual(Object.keys(previous).sort());
    for (const [file, text] of Object.entries(previous)) expect(readFileSync(join(out, file), 'utf8'), file).toBe(text);
    expect(statSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it('--help lists the flags and exits 0', async () => {
    const run = await runCapture(['bench', '--help'], dir);
    expect(run.code).toBe(0);
    for (const flag of ['--agent', '--suite', '--filter', '--repeat', '--concurrency', '--seed', '--transport', '--feedback', '--db', '--out', '--json', 'compare']) expect(run.stdout).toContain(flag);
  });
});

describe('faultline bench compare', () => {
  let a: string;
  let b: string;
  beforeAll(async () => {
    a = join(dir, 'cmp-a');
    b = join(dir, 'cmp-b');
    expect((await bench(['--agent', 'module:./hammer.mjs', '--out', a])).code).toBe(0);
    expect((await bench(['--agent', 'module:./waiter.mjs', '--out', b])).code).toBe(0);
  });

  it('--json gives per-dimension deltas with Newcombe intervals', async () => {
    const run = await runCapture(['bench', 'compare', a, join(b, 'results.json'), '--json'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [c] = JSON.parse(run.stdout) as RunComparison[];
    expect(c).toMatchObject({ agent_a: 'hammer', agent_b: 'waiter' });
    expect(c!.dimensions.loop_avoidance).toMatchObject({ a: { rate: 0.5, n: 2 }, b: { rate: 1, n: 2 }, delta: 0.5 });
    const [lo, hi] = c!.dimensions.loop_avoidance.ci95;
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0.5);
    expect(c!.dimensions.semantic_verification).toMatchObject({ a: { n: 0 }, b: { n: 0 } });
  });

  it('says when the runs differ in more than the agent (scenarios, feedback, transport, seed, repeat), and not when they do not', async () => {
    const same = await runCapture(['bench', 'compare', a, b], dir);
    expect(same.code).toBe(0);
    expect(same.stdout).not.toContain('Note:');
    const other = join(dir, 'cmp-other');
    const run0 = await bench(['--agent', 'module:./waiter.mjs', '--out', other, '--filter', 'weather/outage', '--feedback', 'assisted', '--seed', '7']);
    expect(run0.code).toBe(0);
    const run = await runCapture(['bench', 'compare', a, other], dir);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
      'Note: the runs differ in scenarios (A 2, B 1, 1 in common), feedback (A raw, B assisted), seed (A 1, B 7): a change may come from that, not from the agent.',
    );
  });

  it('prints a table, and finds runs by id under .faultline/bench', async () => {
    const runIdDir = join(dir, '.faultline', 'bench', 'named-run');
    mkdirSync(runIdDir, { recursive: true });
    writeFileSync(join(runIdDir, 'results.json'), readFileSync(join(b, 'results.json')));
    const run = await runCapture(['bench', 'compare', a, 'named-run'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^A: hammer \(run \S+\) {2}-> {2}B: waiter \(run \S+\)$/m);
    expect(run.stdout).toMatch(/^Loop avoidance\s+50\.0% n=2\s+100\.0% n=2\s+\+50\.0 pp\s+\[-\d+\.\d pp, \+\d+\.\d pp\]$/m);
    expect(run.stdout).toMatch(/^Semantic self-verification\s+n\/a\s+n\/a\s+n\/a$/m);
  });

  it('a missing run or a file that is not a run: one line, exit 2', async () => {
    const missing = await runCapture(['bench', 'compare', a, 'nope'], dir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^faultline: no FailBench run at nope/);
    const notRun = await runCapture(['bench', 'compare', a, join(a, 'report.md')], dir);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toMatch(/is not JSON/);
    const usage = await runCapture(['bench', 'compare', a], dir);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/missing required argument 'runB'/);
  });
});
