/**
 * `faultline bench`: runs FailBench scenarios against agents (the reference agents by default),
 * records every call, prints the per-dimension comparison and writes report.md, report.html and
 * results.json. `faultline bench compare A B` puts two saved runs side by side.
 */
import { join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { Command, Option } from 'commander';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import { resolveAgent } from '../../failbench/agents/index.js';
import { compareRuns, runDifferences, type RunComparison } from '../../failbench/compare.js';
import { ciText, DIMENSION_LABELS, measureScore, percent, signedPoints } from '../../failbench/report/report-data.js';
import { MEASURE_LABELS } from '../../failbench/scoring-rules.js';
import { writeReport } from '../../failbench/report/write-report.js';
import { loadStoredRun } from '../../failbench/stored-runs.js';
import { runSuite, SuiteStoppedError, TRANSPORTS, type SuiteResult, type Transport } from '../../failbench/runner.js';
import { defaultSuiteDir } from '../../failbench/default-suite.js';
import { CAPABILITIES, parseCapabilities, type Capability } from '../../failbench/capabilities.js';
import { loadScenarios, matchesFilter, SCENARIO_KINDS } from '../../failbench/scenario-loader.js';
import { agentReport, MEASURES, scoreSuite, type AgentScore } from '../../failbench/score.js';
import { DIMENSIONS, type Agent, type FeedbackMode, type Scenario } from '../../failbench/types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { DEFAULT_SQLITE_PATH, displayStoreSpec, openStore } from '../../store/open-store.js';
import { DEFAULT_CATALOG_NOW } from '../../tools/index.js';
import { CliError } from '../cli-error.js';
import { formatTable } from '../format-table.js';
import { printable, writeLine, type CliContext, type CliIo } from '../io.js';
import { assertWritableDirectory } from '../output-paths.js';
import { probeModelEndpoints } from '../probe-endpoint.js';
import { assertSqliteStoreCreatable, parseCount } from '../report-options.js';
import { parseFissionK, runFissionBench } from './bench-fission.js';
import { stoppedMessage } from './bench-stopped.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface BenchOptions {
  agent: string[];
  suite: string;
  filter: string[];
  repeat: string;
  concurrency: string;
  seed: string;
  transport: string;
  feedback: string;
  capabilities?: string;
  db?: string;
  out?: string;
  json?: boolean;
  fission?: string;
}

const DEFAULT_AGENTS = ['naive', 'robust'];

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseSeed(text: string): number {
  if (!/^\d{1,10}$/.test(text.trim()) || Number(text) > 0xffff_ffff) throw new CliError(`invalid --seed ${JSON.stringify(text)}: expected an integer from 0 to 4294967295`);
  return Number(text);
}

function parseTransport(text: string): Transport {
  const transport = TRANSPORTS.find((t) => t === text);
  if (transport === undefined) throw new CliError(`invalid --transport ${JSON.stringify(text)}: expected ${TRANSPORTS.join(', ')}`);
  return transport;
}

function checkedCapabilities(text: string): Capability[] {
  try {
    return parseCapabilities(text);
  } catch (error) {
    throw new CliError(`invalid --capabilities ${JSON.stringify(text)}: ${(error as Error).message}`);
  }
}

function parseFeedback(text: string): FeedbackMode {
  if (text === 'raw' || text === 'assisted') return text;
  throw new CliError(`invalid --feedback ${JSON.stringify(text)}: expected raw or assisted`);
}

function comparisonTable(scores: readonly AgentScore[], assisted: boolean): string {
  type Row = { label: string; cell: (s: AgentScore) => string };
  const rows: Row[] = [
    { label: 'Overall score', cell: (s) => percent(s.score) },
    ...MEASURES.map(
      (m): Row => ({
        label: `${MEASURE_LABELS[m]}${assisted && m === 'identification' ? ' (assisted)' : ''}`,
        cell: (s) => {
          const x = measureScore(s, m);
          return x.n === 0 ? '0.0% n=0' : `${percent(x.rate)} [${ciText(x.ci95)}] n=${x.n}`;
        },
      }),
    ),
    { label: 'Needless calls', cell: (s) => `${percent(s.needless.rate)} (${s.needless.needless}/${s.needless.calls})` },
    { label: 'Invented diagnoses', cell: (s) => String(s.diagnoses.invented) },
    { label: 'Duplicate-execution rate', cell: (s) => `${percent(s.duplicateExecution.rate)} (${s.duplicateExecution.duplicates}/${s.duplicateExecution.writes})` },
    { label: 'pass^k', cell: (s) => s.passK.map((p, i) => `^${i + 1} ${percent(p)}`).join(' ') },
    { label: 'Faults absorbed by the runtime', cell: (s) => String(s.absorbedFailures) },
  ];
  return formatTable(rows, [{ header: 'measure', value: (r) => r.label }, ...scores.map((s) => ({ header: s.agent, value: (r: Row) => r.cell(s), align: 'right' as const }))]);
}

/** What --filter accepts, said with the values the suite has. */
function filterTerms(scenarios: readonly Scenario[]): string {
  const faults = [...new Set(scenarios.flatMap((s) => s.faults.map((f) => f.fault)))].sort();
  const domains = [...new Set(scenarios.map((s) => s.id.split('/')[0]!))].sort();
  return (
    `a term is a dimension (${DIMENSIONS.join(', ')}), a scenario kind (${SCENARIO_KINDS.join(', ')}), ` +
    `a fault kind of the suite (${faults.join(', ')}) or an id glob (${domains.slice(0, 3).map((d) => `${d}/*`).join(', ')}, *-zh)`
  );
}

async function runBench(io: CliIo, opts: BenchOptions, version: string): Promise<void> {
  // Every flag is checked before anything is opened, run or written.
  const repeat = parseCount(opts.repeat, '--repeat');
  const concurrency = parseCount(opts.concurrency, '--concurrency');
  const seed = parseSeed(opts.seed);
  const transport = parseTransport(opts.transport);
  const feedback = parseFeedback(opts.feedback);
  const capabilities = opts.capabilities === undefined ? [] : checkedCapabilities(opts.capabilities);
  const fission = opts.fission === undefined ? undefined : parseFissionK(opts.fission);
  const specs = opts.agent.length === 0 ? DEFAULT_AGENTS : opts.agent;
  const suiteDir = opts.suite === 'default' ? defaultSuiteDir() : resolve(io.cwd, opts.suite);
  const terms = opts.filter.flatMap((f) => f.split(',')).map((f) => f.trim()).filter((f) => f !== '');
  // Beyond the loader's dimension / scenario kind / id glob, a term may name a fault kind.
  const suiteScenarios = await loadScenarios(suiteDir);
  const scenarios = suiteScenarios.filter((s) => terms.length === 0 || terms.some((t) => matchesFilter(s, t) || s.faults.some((f) => f.fault === t)));
  if (scenarios.length === 0) throw new CliError(`no scenario in ${opts.suite} matches --filter ${opts.filter.join(',')}; ${filterTerms(suiteScenarios)}`);
  if (fission !== undefined) {
    if (capabilities.length > 0) throw new CliError('--capabilities does not apply to --fission runs');
    return runFissionBench(io, { k: fission, specs: opts.agent, scenarios, seed, feedback, concurrency, repeat, transport, db: opts.db, out: opts.out, json: opts.json === true });
  }
  const runId = uuidv7();
  const outShown = opts.out ?? join('.faultline', 'bench', runId);
  const outDir = resolve(io.cwd, outShown);
  // Checked now: a file there (or above) would fail the report's write only after the whole run, its records stored.
  assertWritableDirectory(outDir, outShown);

  const agents: Agent[] = [];
  let store: Awaited<ReturnType<typeof openStore>> | undefined;
  let bar: cliProgress.SingleBar | undefined;
  try {
    for (const spec of specs) agents.push(await resolveAgent(spec, { env: io.env, cwd: io.cwd }));
    // Before the store is opened (which creates its file): an endpoint that is down is bad input.
    await probeModelEndpoints(agents.map((a) => a.endpoint));
    assertSqliteStoreCreatable(opts.db ?? DEFAULT_SQLITE_PATH, io.cwd);
    store = await openStore(opts.db ?? DEFAULT_SQLITE_PATH, { cwd: io.cwd });
    const runs = scenarios.length * agents.length * repeat;
    if (io.stdout.isTTY === true && opts.json !== true) {
      bar = new cliProgress.SingleBar(
        { stream: io.stdout, format: 'bench [{bar}] {value}/{total} runs | {agent} {scenario}', clearOnComplete: true, hideCursor: true, fps: 10 },
        cliProgress.Presets.shades_classic,
      );
      bar.start(runs, 0, { agent: '', scenario: '' });
    }
    const recordErrors: string[] = [];
    let suite: SuiteResult;
    try {
      suite = await runSuite({
        scenarios,
        agents,
        feedback,
        seed,
        repeat,
        concurrency,
        store,
        transport,
        ...(capabilities.length > 0 ? { capabilities } : {}),
        runId,
        version,
        onProgress: (p) => bar?.update(p.done, { agent: p.result.agent, scenario: p.result.scenarioId }),
        onRecordError: (error) => recordErrors.push(error instanceof Error ? error.message : String(error)),
      });
    } catch (error) {
      if (SuiteStoppedError.isInstance(error)) throw new CliError(stoppedMessage(error, agents), 2, { cause: error });
      throw error;
    }
    bar?.stop();
    bar = undefined;
    // A table of zeros would read as the agent's score; an agent that crashes on every run has none.
    for (const agent of agents) {
      const mine = suite.results.filter((r) => r.agent === agent.name);
      if (mine.length > 0 && mine.every((r) => r.agentError !== undefined)) {
        throw new CliError(`agent ${printable(agent.name)}: every run crashed: ${printable(mine[0]!.agentError!)}`);
      }
    }
    const scores = scoreSuite(suite);
    const written = await writeReport(outDir, suite, scores, { shownDir: outShown });
    for (const message of recordErrors) io.stderr.write(`faultline: warning: records not stored: ${message}\n`);
    // Runs the endpoint failed (fewer in a row than stop the run) are left out of the scores; say so.
    const lost = printable(scores.filter((s) => s.endpointFailures > 0).map((s) => `${s.agent} ${s.endpointFailures}`).join(', '));

    if (opts.json === true) {
      if (lost !== '') io.stderr.write(`faultline: warning: runs lost to the model endpoint after its retries are not scored (${lost}); results.json lists them\n`);
      const reports = scores.map((s) => agentReport(runId, s));
      writeLine(io.stdout, JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2));
      return;
    }
    writeLine(
      io.stdout,
      `FailBench ${runId}: ${scenarios.length} scenarios x ${agents.length} agent(s) x ${repeat} repeat(s), feedback ${feedback}${capabilities.length > 0 ? ` + ${capabilities.join(', ')}` : ''}, transport ${transport}, seed ${seed}`,
    );
    writeLine(io.stdout);
    writeLine(io.stdout, comparisonTable(scores, feedback === 'assisted'));
    writeLine(io.stdout);
    writeLine(io.stdout, 'Rates per scenario run with 95% Wilson intervals; n counts the runs that scored the measure (a run earns one only by meeting the failure it is about).');
    if (lost !== '') writeLine(io.stdout, `Runs lost to the model endpoint after its retries are not scored (${lost}); the report lists them.`);
    writeLine(io.stdout, `Report: ${written.html} (also report.md, results.json)`);
    // A PostgreSQL URL may carry a password; the terminal and its scrollback need not see it (the user name stays, so the command below still works).
    const where = displayStoreSpec(opts.db ?? DEFAULT_SQLITE_PATH);
    writeLine(io.stdout, `Records: ${where}, trace ids failbench:${runId}:<agent>:<scenario>:<repeat>`);
    // The calls are dated on the scenarios' virtual clock (reproducible worlds), not today: a
    // "last 24 hours" window would show none of them.
    const since = Math.min(...scenarios.map((s) => (s.now === undefined ? DEFAULT_CATALOG_NOW : Date.parse(s.now))));
    const sinceText = new Date(since).toISOString().replace(/:00\.000Z$/, 'Z');
    const dbFlag = opts.db === undefined ? '' : ` --db ${JSON.stringify(where)}`;
    writeLine(io.stdout, `They are dated on the scenarios' virtual clock, from ${sinceText}: npx faultline stats --since ${sinceText}${dbFlag}`);
  } finally {
    bar?.stop();
    for (const agent of agents) {
      try {
        await agent.close?.();
      } catch {
        // Releasing an agent's connections must not hide the run's own outcome.
      }
    }
    await store?.close();
  }
}

function printComparison(io: CliIo, comparisons: readonly RunComparison[], differences: readonly string[]): void {
  for (const [i, c] of comparisons.entries()) {
    if (i > 0) writeLine(io.stdout);
    writeLine(io.stdout, `A: ${c.agent_a} (run ${c.run_a})  ->  B: ${c.agent_b} (run ${c.run_b})`);
    writeLine(io.stdout);
    const rows = DIMENSIONS.map((d) => ({ label: DIMENSION_LABELS[d], x: c.dimensions[d] }));
    writeLine(
      io.stdout,
      formatTable(rows, [
        { header: 'dimension', value: (r) => r.label },
        { header: 'A', value: (r) => (r.x.a.n === 0 ? 'n/a' : `${percent(r.x.a.rate)} n=${r.x.a.n}`), align: 'right' },
        { header: 'B', value: (r) => (r.x.b.n === 0 ? 'n/a' : `${percent(r.x.b.rate)} n=${r.x.b.n}`), align: 'right' },
        { header: 'B - A', value: (r) => (r.x.a.n === 0 || r.x.b.n === 0 ? 'n/a' : signedPoints(r.x.delta)), align: 'right' },
        { header: '95% CI', value: (r) => (r.x.a.n === 0 || r.x.b.n === 0 ? '' : `[${signedPoints(r.x.ci95[0])}, ${signedPoints(r.x.ci95[1])}]`), align: 'right' },
      ]),
    );
    writeLine(io.stdout, `Score: ${percent(c.score.a)} -> ${percent(c.score.b)} (${signedPoints(c.score.delta)})`);
  }
  writeLine(io.stdout);
  writeLine(io.stdout, "Intervals are Newcombe's hybrid score intervals for a difference of proportions; one that spans 0 is not a clear change.");
  if (differences.length > 0) writeLine(io.stdout, `Note: the runs differ in ${differences.join(', ')}: a change may come from that, not from the agent.`);
}

export function benchCommand(ctx: CliContext): Command {
  const { io } = ctx;
  const bench = new Command('bench')
    .description('Run FailBench: scenarios whose tools fail on purpose, scored on identification, recovery, loop avoidance, semantic verification and idempotency safety')
    .addOption(new Option('--agent <spec>', 'agent under test: robust, naive, sampler, follow-feedback, openai:<model>, anthropic:<model> or module:<path> (repeatable)').argParser(collect).default([], 'naive and robust, or sampler with --fission'))
    .option('--suite <suite>', '"default" or a directory of scenario YAML files', 'default')
    .option('--filter <term>', 'only scenarios matching a dimension, a scenario kind, a fault kind, or an id glob (repeatable, or comma-separated)', collect, [])
    .option('--repeat <k>', 'runs per scenario and agent (reports pass^1..pass^k)', '1')
    .option('--concurrency <n>', 'scenario runs at once', '1')
    .option('--seed <n>', 'seed of the fault plans and retry jitter (same seed, same run)', String(DEFAULT_SEED))
    .option('--transport <transport>', 'how agents reach the tools: inprocess, http (HTTP fault proxy and mock tool server on loopback) or mcp (MCP fault proxy over Streamable HTTP)', 'inprocess')
    .option('--feedback <mode>', 'raw: what a real API client sees; assisted: plus the runtime\'s classification, feedback and automatic retries', 'raw')
    .addOption(optionDefaultShown('--capabilities <list>', `runtime checks to turn on, comma-separated: ${CAPABILITIES.join(', ')}, or all`, 'none, the runtime as it ships'))
    .addOption(storeOption('where to store the records'))
    .addOption(optionDefaultShown('--out <dir>', 'where to write report.md, report.html and results.json', '.faultline/bench/<run id>/'))
    .option('--json', 'print { run_id, agent, scenarios, dimensions, retry_after_compliance, score } per agent (an array for several agents)')
    .addOption(optionDefaultShown('--fission <k>', 'branch each run at its injected faults into K sampled continuations and store them as GRPO groups (export with: npx faultline export --format grpo); needs an agent that can sample', 'sampler'))
    .action(async (opts: BenchOptions, command: Command) => {
      await runBench(io, opts, command.parent?.version() ?? 'unknown');
    });

  const compare = new Command('compare')
    .description('Compare two saved bench runs: per-dimension change with a 95% interval for the difference')
    .argument('<runA>', 'results.json, its directory, or a run id under .faultline/bench/')
    .argument('<runB>', 'the run to compare against A')
    .option('--json', 'print the comparison as JSON (one entry per agent pair)')
    .action(async (runA: string, runB: string, opts: { json?: boolean }) => {
      const [a, b] = [await loadStoredRun(runA, io.cwd), await loadStoredRun(runB, io.cwd)];
      const comparisons = compareRuns(a, b);
      // The root program parses options anywhere on the line, so `bench compare A B --json` lands
      // the flag on bench, which defines --json too.
      const json = opts.json === true || (bench.opts() as BenchOptions).json === true;
      if (json) writeLine(io.stdout, JSON.stringify(comparisons, null, 2));
      else printComparison(io, comparisons, runDifferences(a, b));
    });
  // run-cli configures the commands it adds; a subcommand has to be told the same itself.
  compare.exitOverride();
  compare.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s), outputError: () => undefined });
  bench.addCommand(compare);
  return bench;
}
