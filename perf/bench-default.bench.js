// The default command, end to end: `node dist/cli/main.js bench` (both reference agents, the
// whole default suite, in-process, SQLite), as a user runs it. The goal is under 60 s on this
// machine. Backoffs and Retry-After waits run on each scenario's virtual clock, so wall time is
// CPU work only.
//
// Beside it, the same command over the same suite with two no-op agents that give up at once:
// the runner's own cost (process start, loading the suite, a world per run, recording, scoring,
// the report), with no agent work. And `bench --help`: the cost of starting the CLI at all.
// Contenders are interleaved over rounds so drift in machine load hits all of them alike.
//
// The same command over the wire (`--transport http`, `--transport mcp`) runs only with
// BENCH_DEFAULT_WIRE=1: the two rows take several times the in-process one each round, and the
// in-process command is the one the goal is about.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUICK, table } from './harness.js';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const ROUNDS = QUICK ? 1 : 3;
/** --quick: one domain of the default suite instead of all of it. */
const SUITE = QUICK ? ['--filter', 'files/cascade-*'] : [];
const GOAL_S = 60;
const WIRE = process.env['BENCH_DEFAULT_WIRE'] === '1';

const NOOP_AGENT = (name) => `// Gives up at once, without calling a tool.
export default { name: ${JSON.stringify(name)}, run: async () => ({ status: 'gave_up', answer: 'no-op', diagnoses: [] }) };
`;

/** Runs the CLI in `dir`; resolves with its wall time, exit code and the report's results.json. */
function cli(dir, args, label) {
  const out = join(dir, `out-${label}`);
  const db = join(dir, `${label}.db`);
  const argv = args === 'help' ? ['bench', '--help'] : ['bench', ...args, ...SUITE, '--db', db, '--out', out];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [MAIN, ...argv], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) return reject(new Error(`faultline ${argv.join(' ')} exited ${code}: ${stderr.split('\n').find((l) => /error/i.test(l)) ?? stderr.trim().split('\n').pop()}`));
      let results;
      if (args !== 'help') {
        results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
        rmSync(out, { recursive: true, force: true });
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
      }
      resolve({ wallMs, code, results });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** Runs and agents in a results.json, whatever its exact shape. */
function runsOf(results) {
  const list = results?.suite?.results ?? results?.results ?? [];
  return { runs: list.length, passed: list.filter((r) => r.oraclePassed).length, calls: list.reduce((n, r) => n + (r.calls?.length ?? 0), 0) };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-default-'));
  try {
    writeFileSync(join(dir, 'noop-a.mjs'), NOOP_AGENT('noop-a'));
    writeFileSync(join(dir, 'noop-b.mjs'), NOOP_AGENT('noop-b'));
    const contenders = [
      { name: 'faultline bench (naive + robust, default suite)', args: [] },
      { name: 'same suite, two no-op agents (runner cost)', args: ['--agent', 'module:./noop-a.mjs', '--agent', 'module:./noop-b.mjs'] },
      { name: 'faultline bench --help (CLI start-up)', args: 'help' },
      ...(WIRE
        ? [
            { name: 'faultline bench --transport http (HTTP fault proxy + mock tool server, loopback)', args: ['--transport', 'http'] },
            { name: 'faultline bench --transport mcp (MCP fault proxy over Streamable HTTP)', args: ['--transport', 'mcp'] },
          ]
        : []),
    ];
    const samples = contenders.map(() => []);
    // Warm-up: the page cache and the first SQLite file are billed to nobody.
    await cli(dir, contenders[1].args, 'warmup');
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, c] of contenders.entries()) samples[i].push(await cli(dir, c.args, `r${round}-${i}`));
    }
    const rows = contenders.map((c, i) => {
      const walls = samples[i].map((s) => s.wallMs);
      const r = runsOf(samples[i][0].results);
      return [c.name, c.args === 'help' ? '-' : r.runs, c.args === 'help' ? '-' : r.calls, seconds(median(walls)), `${seconds(Math.min(...walls))} - ${seconds(Math.max(...walls))}`, c.args === 'help' ? '-' : `${(median(walls) / r.runs).toFixed(1)} ms`];
    });
    const full = median(samples[0].map((s) => s.wallMs));
    const noop = median(samples[1].map((s) => s.wallMs));
    const help = median(samples[2].map((s) => s.wallMs));
    // The same scores over every transport, or the comparison means nothing.
    const scoresOf = (i) => JSON.stringify(samples[i][0].results.scores?.map((x) => [x.agent, x.dimensions]));
    const wire = WIRE
      ? (() => {
          const http = median(samples[3].map((s) => s.wallMs));
          const mcp = median(samples[4].map((s) => s.wallMs));
          const same = scoresOf(3) === scoresOf(0) && scoresOf(4) === scoresOf(0);
          return (
            `The same command over the wire: \`--transport http\` ${seconds(http)} (${(http / full).toFixed(1)}x in-process), \`--transport mcp\` ${seconds(mcp)} (${(mcp / full).toFixed(1)}x); ` +
            `scores ${same ? 'identical' : 'DIFFERENT'} across the three transports.`
          );
        })()
      : 'The wire transports were not run (BENCH_DEFAULT_WIRE=1 runs them).';
    const { runs } = runsOf(samples[0][0].results);
    return {
      title: 'FailBench default command: wall time of `faultline bench`',
      markdown: [
        table(['command', 'runs', 'tool calls', 'wall time (median)', `range (${ROUNDS} rounds)`, 'wall per run'], rows),
        '',
        `\`node dist/cli/main.js bench --db <tmp>/x.db --out <tmp>/out\`: ${runs} scenario runs in-process, feedback raw, concurrency 1, records to SQLite, report written. ` +
          `**${seconds(full)}** (goal < ${GOAL_S} s: ${full < GOAL_S * 1000 ? 'met' : 'NOT met'}). ` +
          `Of it, ${seconds(help)} is starting the CLI, ${seconds(noop - help)} is the runner's own work for the suite (${((noop - help) / runs).toFixed(1)} ms per run), ` +
          `and ${seconds(full - noop)} is the two reference agents' tool calls (${((full - noop) / runs).toFixed(1)} ms per run). ` +
          wire,
      ].join('\n'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
