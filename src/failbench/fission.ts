/**
 * FISSION (seed 004 section 4): at an injected failure, fork the run into K recovery attempts and
 * reward each by its outcome, giving GRPO groups whose members share everything up to the fault.
 *
 * Branching is by replay. A run is deterministic given the run seed and the agent's choices, so:
 * 1. each (agent, scenario) runs once (the base run);
 * 2. at each call of the base run where an injected fault fired (ground truth from the runtime),
 *    up to `maxBranchPoints` of them, K continuations run in fresh worlds with the same seed. Each
 *    gets `task.sampling = { seed, afterCall, branch }`: a sampling agent decides as in the base
 *    run until the fault call's result is in, so the prefix replays call for call, then draws its
 *    choices from the branch's own seed;
 * 3. each continuation is scored by the scenario oracle ({@link fissionReward});
 * 4. a group whose continuations did not all replay the base run's prefix exactly (a model that is
 *    not deterministic before the branch point) is dropped and counted in `diverged`.
 *
 * Every run is recorded under its own trace (`failbench:<run>:<agent>:<scenario>:base` and
 * `…:f<call>b<branch>`). With a store that keeps trajectories, each continuation of a kept group
 * is stored as a trajectory with `metadata.fission` (see FissionInfo in src/core/trajectory-types.ts),
 * under an id that sorts with its group ({@link continuationTrajectoryId}), which
 * `faultline export --format grpo` turns back into groups.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { ConfigError } from '../core/errors.js';
import { canonicalJson } from '../core/params-hash.js';
import { openRecording } from '../record/open-recording.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { uuidv7 } from '../record/uuid-v7.js';
import type { RecordSink } from '../core/record-sink.js';
import type { RecordWriter, TrajectoryStore } from '../core/store-types.js';
import { trajectoryFromRecords } from '../trajectory/from-records.js';
import { hasTrajectoryStore } from '../store/trajectory-row.js';
import type { FissionInfo, Trajectory } from '../core/trajectory-types.js';
import { fissionReward } from './fission-reward.js';
import { DEFAULT_ENDPOINT_FAILURE_LIMIT, runScenario, watchModelEndpoints, type EndpointWatch } from './runner.js';
import type { Agent, Dimension, FeedbackMode, Scenario, ScenarioResult } from './types.js';
import { checkScenario, derivedSeed, digest } from './world.js';

const onProgressFailed = warnListenerError('onProgress');

/** Branch points per base run when none is given: the first two faults that fired. */
export const DEFAULT_MAX_BRANCH_POINTS = 2;
/** The largest K accepted: a group is K full scenario runs. */
export const MAX_FISSION_K = 64;

/**
 * A group's `dimension`: the first of these the scenario scores. Nearly every scenario scores
 * identification, so the rarer dimensions say what it is about: a write whose reply was lost
 * (idempotency safety), a wrong 200 (semantic verification), a transient fault (recovery), an
 * outage that does not end (loop avoidance).
 */
export const DIMENSION_FOCUS: readonly Dimension[] = ['idempotency_safety', 'semantic_verification', 'recovery', 'loop_avoidance', 'identification'];

export function focusDimension(scenario: Pick<Scenario, 'dimensions'>): Dimension | undefined {
  return DIMENSION_FOCUS.find((d) => scenario.dimensions.includes(d));
}

export interface FissionOptions {
  scenarios: readonly Scenario[];
  /** Every one must have `canSample: true`. */
  agents: readonly Agent[];
  /** Continuations per group, an integer from 2 to {@link MAX_FISSION_K}. */
  k: number;
  feedback: FeedbackMode;
  /** The run seed: the same for the base run and every continuation (fault plans, jitter). */
  seed: number;
  /** Records go here; continuations are stored as trajectories when the store keeps them. */
  store?: RecordWriter & Partial<TrajectoryStore>;
  /** Runs in flight at once. Default 1. */
  concurrency?: number;
  /** Branch points per base run, counted from the first fault. Default {@link DEFAULT_MAX_BRANCH_POINTS}. */
  maxBranchPoints?: number;
  runId?: string;
  /** Called after every run; what it throws is a process warning, never the run's failure. */
  onProgress?: (progress: FissionProgress) => void;
  onRecordError?: (error: unknown) => void;
  /** As runSuite's: base runs or continuations in a row lost to an agent's model endpoint before the run stops. Default 3. */
  endpointFailureLimit?: number;
}

export interface FissionProgress {
  phase: 'base' | 'branch';
  done: number;
  total: number;
}

export interface FissionContinuation {
  branch: number;
  sampleSeed: number;
  traceId: string;
  result: ScenarioResult;
  reward: number;
  /** The stored trajectory (built from the run's records), with `metadata.fission`. */
  trajectory: Trajectory;
}

export interface FissionGroup {
  groupId: string;
  agent: string;
  scenarioId: string;
  /** 0-based index of the fault call in the base run: the last call of the shared prefix. */
  faultCall: number;
  faultType: string;
  toolIdempotent: boolean;
  /** See {@link focusDimension}. */
  dimension: string;
  dimensions: string[];
  continuations: FissionContinuation[];
}

export interface FissionResult {
  runId: string;
  seed: number;
  k: number;
  /** The base runs, by agent then scenario. */
  base: ScenarioResult[];
  /** Kept groups, by agent, scenario, then branch point. */
  groups: FissionGroup[];
  /** Groups dropped because a continuation did not replay the base run's prefix. */
  diverged: number;
  /**
   * Groups dropped because the model endpoint failed one of their continuations (after its
   * retries): its reward would score the endpoint, not the agent. Base runs the endpoint failed
   * are not branched at all.
   */
  lostToEndpoint: number;
  /** Trajectories newly stored (0 without a store that keeps trajectories). */
  stored: number;
}

/** The trace of a base run or of one continuation. */
export function fissionTraceId(runId: string, agent: string, scenarioId: string, branch?: { call: number; branch: number }): string {
  return `failbench:${runId}:${agent}:${scenarioId}:${branch === undefined ? 'base' : `f${branch.call}b${branch.branch}`}`;
}

/**
 * A continuation's trajectory id: its group's digest, then the branch. Stores page trajectories by
 * id, so a group's members come out together and `export --format grpo` holds one group at a time.
 */
export function continuationTrajectoryId(groupId: string, branch: number): string {
  return `traj_${groupId.replace(/^grp_/, '')}_${String(branch).padStart(2, '0')}`;
}

/** Runs `jobs` with at most `concurrency` in flight, none started once `watch` stops; results in job order. */
async function inPool<J>(jobs: readonly J[], concurrency: number, watch: EndpointWatch, run: (job: J) => Promise<ScenarioResult>, onDone: (done: number) => void): Promise<ScenarioResult[]> {
  const results = new Array<ScenarioResult>(jobs.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < jobs.length && watch.stopped === undefined) {
      const index = next++;
      const result = await run(jobs[index]!);
      results[index] = result;
      watch.observe(result);
      onDone(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, jobs.length)) }, worker));
  return results;
}

/** What must match, call for call, between the base run and a continuation up to the fault. */
function prefixKey(result: ScenarioResult, faultCall: number): string {
  return canonicalJson(result.calls.slice(0, faultCall + 1));
}

function checkOptions(options: FissionOptions): { concurrency: number; maxBranchPoints: number } {
  const { k } = options;
  if (!Number.isInteger(k) || k < 2 || k > MAX_FISSION_K) throw new ConfigError(`fission k must be an integer from 2 to ${MAX_FISSION_K}, got ${String(k)}`, 'k');
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError(`concurrency must be an integer >= 1, got ${String(concurrency)}`, 'concurrency');
  const maxBranchPoints = options.maxBranchPoints ?? DEFAULT_MAX_BRANCH_POINTS;
  if (!Number.isInteger(maxBranchPoints) || maxBranchPoints < 1) throw new ConfigError(`maxBranchPoints must be an integer >= 1, got ${String(maxBranchPoints)}`, 'maxBranchPoints');
  const names = options.agents.map((a) => a.name);
  const dup = names.find((name, i) => names.indexOf(name) !== i);
  if (dup !== undefined) throw new ConfigError(`agent "${dup}" is listed twice`, 'agents');
  const cannot = options.agents.find((a) => a.canSample !== true);
  if (cannot !== undefined) {
    throw new ConfigError(`agent "${cannot.name}" cannot sample, so it cannot branch: use sampler, openai:<model>, anthropic:<model>, or a module agent with canSample: true`, 'agents');
  }
  const ids = options.scenarios.map((s) => s.id);
  const dupScenario = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dupScenario !== undefined) throw new ConfigError(`scenario id "${dupScenario}" appears twice`, 'scenarios');
  for (const scenario of options.scenarios) checkScenario(scenario, { seed: options.seed });
  return { concurrency, maxBranchPoints };
}

interface BranchJob {
  scenario: Scenario;
  agent: Agent;
  base: ScenarioResult;
  faultCall: number;
  branch: number;
  sampleSeed: number;
  traceId: string;
}

/**
 * Runs the base runs and their continuations, scores them, and stores the kept groups.
 * @throws ConfigError for a bad k, an agent that cannot sample, or a scenario that cannot run.
 * @throws SuiteStoppedError when an agent's model endpoint rejects a request or fails
 * `endpointFailureLimit` runs in a row (as runSuite): records are flushed, no group is stored.
 *
 * @example
 * const result = await runFission({ scenarios, agents: [createSamplingAgent()], k: 4, feedback: 'raw', seed: 1, store });
 * result.groups[0]?.continuations.map((c) => c.reward); // e.g. [1, 0.25, 1, 0]
 */
export async function runFission(options: FissionOptions): Promise<FissionResult> {
  const { concurrency, maxBranchPoints } = checkOptions(options);
  const { k, seed, feedback } = options;
  const baseJobs = options.agents.flatMap((agent) => options.scenarios.map((scenario) => ({ agent, scenario })));
  const branchJobs: BranchJob[] = [];
  // Made before the recorder: a bad limit throws with nothing opened.
  const watch = watchModelEndpoints(options.endpointFailureLimit ?? DEFAULT_ENDPOINT_FAILURE_LIMIT, () => baseJobs.length + branchJobs.length);
  const signal = watch.signal;
  const runId = options.runId ?? uuidv7();
  const store = options.store;
  const recording = openRecording({ store, recording: { spool: false, ...(options.onRecordError !== undefined ? { onError: options.onRecordError } : {}) } });
  const recorder = recording.sink;
  // Every record also stays in memory by trace: continuations become trajectories without reading them back.
  const byTrace = new Map<string, ToolExecutionRecord[]>();
  const sink: RecordSink = {
    enqueue(record) {
      let list = byTrace.get(record.trace_id);
      if (list === undefined) byTrace.set(record.trace_id, (list = []));
      list.push(record);
      return recorder?.enqueue(record);
    },
  };
  // A progress display must not break the run.
  const progress = (p: FissionProgress) => notify(options.onProgress, p, onProgressFailed);

  const groups: FissionGroup[] = [];
  let diverged = 0;
  let lostToEndpoint = 0;
  let base: ScenarioResult[];
  try {
    base = await inPool(
      baseJobs,
      concurrency,
      watch,
      ({ agent, scenario }) => runScenario(scenario, agent, { feedback, seed, runId, sink, signal, traceId: fissionTraceId(runId, agent.name, scenario.id) }),
      (done) => progress({ phase: 'base', done, total: baseJobs.length }),
    );

    baseJobs.forEach(({ agent, scenario }, i) => {
      const result = base[i];
      // Not run (the watch stopped), or cut short by the endpoint: nothing to branch from.
      if (result === undefined || result.modelEndpointFailure !== undefined) return;
      const faultCalls = result.calls.flatMap((c, index) => (c.fault === undefined ? [] : [index])).slice(0, maxBranchPoints);
      for (const faultCall of faultCalls) {
        for (let branch = 0; branch < k; branch++) {
          const sampleSeed = derivedSeed(seed, agent.name, scenario.id, faultCall, branch, 'fission');
          branchJobs.push({ scenario, agent, base: result, faultCall, branch, sampleSeed, traceId: fissionTraceId(runId, agent.name, scenario.id, { call: faultCall, branch }) });
        }
      }
    });
    const branchResults = await inPool(
      branchJobs,
      concurrency,
      watch,
      (job) =>
        runScenario(job.scenario, job.agent, {
          feedback,
          seed,
          runId,
          sink,
          signal,
          traceId: job.traceId,
          sampling: { seed: job.sampleSeed, afterCall: job.faultCall, branch: job.branch },
        }),
      (done) => progress({ phase: 'branch', done, total: branchJobs.length }),
    );

    // Once stopped, some continuations never ran: no group is built (none would be stored).
    for (let start = 0; start < branchJobs.length && watch.stopped === undefined; start += k) {
      const jobs = branchJobs.slice(start, start + k);
      const results = branchResults.slice(start, start + k);
      const first = jobs[0]!;
      if (results.some((r) => r.modelEndpointFailure !== undefined)) {
        lostToEndpoint++;
        continue;
      }
      const expected = prefixKey(first.base, first.faultCall);
      if (results.some((r) => prefixKey(r, first.faultCall) !== expected)) {
        diverged++;
        continue;
      }
      groups.push(buildGroup(runId, seed, k, jobs, results, byTrace));
    }
  } finally {
    await recording.close();
  }
  if (watch.stopped !== undefined) throw watch.stopped;

  let stored = 0;
  if (store !== undefined && hasTrajectoryStore(store) && groups.length > 0) {
    stored = await store.insertTrajectories(groups.flatMap((g) => g.continuations.map((c) => c.trajectory)));
  }
  return { runId, seed, k, base, groups, diverged, lostToEndpoint, stored };
}

function buildGroup(runId: string, seed: number, k: number, jobs: readonly BranchJob[], results: readonly ScenarioResult[], byTrace: ReadonlyMap<string, ToolExecutionRecord[]>): FissionGroup {
  const { scenario, agent, base, faultCall } = jobs[0]!;
  const groupId = `grp_${digest(runId, agent.name, scenario.id, faultCall).slice(0, 24)}`;
  const faultRecord = byTrace.get(base.traceId!)?.find((r) => r.step_index === faultCall);
  const faultType = base.calls[faultCall]!.fault!;
  const toolIdempotent = faultRecord?.idempotent ?? false;
  const dimension = focusDimension(scenario) ?? scenario.dimensions[0] ?? 'recovery';
  const continuations = jobs.map((job, i): FissionContinuation => {
    const result = results[i]!;
    const records = byTrace.get(job.traceId) ?? [];
    const reward = fissionReward(result);
    const status = result.outcome.status;
    const trajectory = trajectoryFromRecords(records, {
      outcomeOf: () => (result.oraclePassed ? 'success' : 'failure'),
      domain: scenario.id.split('/')[0] ?? scenario.id,
    });
    const scores: Record<string, boolean> = {};
    for (const [dimension, passed] of Object.entries(result.scores)) if (passed !== undefined) scores[dimension] = passed;
    const fission: FissionInfo = {
      group_id: groupId,
      branch: job.branch,
      k,
      reward,
      prefix_steps: records.filter((r) => r.step_index <= faultCall).length,
      fault_type: faultType,
      tool_idempotent: toolIdempotent,
      dimension,
      dimensions: [...scenario.dimensions],
      scenario_id: scenario.id,
      seed,
      sample_seed: job.sampleSeed,
      agent: agent.name,
      status,
      answer: result.outcome.answer,
      oracle_passed: result.oraclePassed,
      scores,
    };
    trajectory.metadata.fission = fission;
    trajectory.trajectory_id = continuationTrajectoryId(groupId, job.branch);
    return { branch: job.branch, sampleSeed: job.sampleSeed, traceId: job.traceId, result, reward, trajectory };
  });
  return { groupId, agent: agent.name, scenarioId: scenario.id, faultCall, faultType, toolIdempotent, dimension, dimensions: [...scenario.dimensions], continuations };
}
