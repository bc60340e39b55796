/**
 * `faultline bench --fission K`: instead of scoring agents, branches each run at its injected
 * faults into K continuations (src/failbench/fission.ts) and stores the groups as trajectories
 * for `faultline export --format grpo`. Needs agents that can sample; the default is `sampler`.
 */
import { resolveAgent } from '../../failbench/agents/index.js';
import { DEFAULT_MAX_BRANCH_POINTS, MAX_FISSION_K, runFission, type FissionResult } from '../../failbench/fission.js';
import { SuiteStoppedError } from '../../failbench/runner.js';
import type { Agent, FeedbackMode, Scenario } from '../../failbench/types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { DEFAULT_SQLITE_PATH, displayStoreSpec, openStore } from '../../store/open-store.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliIo } from '../io.js';
import { assertSqliteStoreCreatable } from '../report-options.js';
import { probeModelEndpoints } from '../probe-endpoint.js';
import { stoppedMessage } from './bench-stopped.js';

/** The default agent of a fission run: the only reference agent that can sample. */
export const DEFAULT_FISSION_AGENTS = ['sampler'];

export function parseFissionK(text: string): number {
  const k = Number(text);
  if (!/^\d{1,3}$/.test(text.trim()) || k < 2 || k > MAX_FISSION_K) throw new CliError(`invalid --fission ${JSON.stringify(text)}: expected an integer from 2 to ${MAX_FISSION_K}`);
  return k;
}

export interface FissionBenchOptions {
  k: number;
  specs: readonly string[];
  scenarios: readonly Scenario[];
  seed: number;
  feedback: FeedbackMode;
  concurrency: number;
  repeat: number;
  transport: string;
  db: string | undefined;
  /** --out: refused, since a fission run writes no report. */
  out: string | undefined;
  json: boolean;
}

export async function runFissionBench(io: CliIo, opts: FissionBenchOptions): Promise<void> {
  if (opts.repeat !== 1) throw new CliError('--fission cannot be combined with --repeat: each fault already gets K continuations');
  if (opts.out !== undefined) throw new CliError('--fission writes no report, so --out does not apply: the groups go to the store (--db)');
  if (opts.transport !== 'inprocess') throw new CliError(`--fission runs its scenarios in process; drop --transport ${opts.transport}`);
  const specs = opts.specs.length === 0 ? DEFAULT_FISSION_AGENTS : opts.specs;
  const agents: Agent[] = [];
  let store: Awaited<ReturnType<typeof openStore>> | undefined;
  try {
    for (const spec of specs) {
      const agent = await resolveAgent(spec, { env: io.env, cwd: io.cwd });
      agents.push(agent);
      if (agent.canSample !== true) {
        throw new CliError(`--fission needs agents that can sample; ${spec} cannot (use sampler, openai:<model>, anthropic:<model>, or a module agent with canSample: true)`);
      }
    }
    await probeModelEndpoints(agents.map((a) => a.endpoint));
    assertSqliteStoreCreatable(opts.db ?? DEFAULT_SQLITE_PATH, io.cwd);
    store = await openStore(opts.db ?? DEFAULT_SQLITE_PATH, { cwd: io.cwd });
    if (!hasTrajectoryStore(store)) throw new CliError(`the ${store.kind} store cannot hold trajectories, so it cannot keep fission groups`);
    const recordErrors: string[] = [];
    const runId = uuidv7();
    let result: FissionResult;
    try {
      result = await runFission({
        scenarios: opts.scenarios,
        agents,
        k: opts.k,
        feedback: opts.feedback,
        seed: opts.seed,
        concurrency: opts.concurrency,
        store,
        runId,
        onRecordError: (error) => recordErrors.push(error instanceof Error ? error.message : String(error)),
      });
    } catch (error) {
      if (SuiteStoppedError.isInstance(error)) throw new CliError(stoppedMessage(error, agents, 'no group stored'), 2, { cause: error });
      throw error;
    }
    for (const message of recordErrors) io.stderr.write(`faultline: warning: records not stored: ${message}\n`);
    const continuations = result.groups.length * opts.k;
    const withVariance = result.groups.filter((g) => new Set(g.continuations.map((c) => c.reward)).size > 1).length;
    if (opts.json) {
      writeLine(
        io.stdout,
        JSON.stringify(
          {
            run_id: runId,
            k: opts.k,
            seed: opts.seed,
            agents: agents.map((a) => a.name),
            scenarios: opts.scenarios.length,
            groups: result.groups.length,
            continuations,
            stored: result.stored,
            diverged: result.diverged,
            lost_to_endpoint: result.lostToEndpoint,
            groups_with_reward_variance: withVariance,
          },
          null,
          2,
        ),
      );
      return;
    }
    writeLine(
      io.stdout,
      `FailBench fission ${runId}: ${opts.scenarios.length} scenarios x ${agents.length} agent(s), K=${opts.k} continuations at each of the first ${DEFAULT_MAX_BRANCH_POINTS} injected faults per run, feedback ${opts.feedback}, seed ${opts.seed}`,
    );
    writeLine(io.stdout, `Stored ${result.groups.length} groups (${continuations} continuations as trajectories, ${result.stored} new); ${withVariance} groups have reward variance.`);
    if (result.diverged > 0) writeLine(io.stdout, `Dropped ${result.diverged} groups whose continuations did not replay the prefix exactly.`);
    if (result.lostToEndpoint > 0) writeLine(io.stdout, `Dropped ${result.lostToEndpoint} groups with a continuation the model endpoint failed (after its retries).`);
    const where = displayStoreSpec(opts.db ?? DEFAULT_SQLITE_PATH);
    writeLine(io.stdout, `Records: ${where}, trace ids failbench:${runId}:<agent>:<scenario>:base and :f<call>b<branch>`);
    writeLine(io.stdout, `Export: npx faultline export --format grpo --out grpo.jsonl${opts.db === undefined ? '' : ' --db <same store>'}`);
  } finally {
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
