/**
 * How an agent honors `task.sampling` (fission continuations, see ../fission.ts): it counts the
 * tool calls whose results have come back, decides as usual until the result of call
 * `afterCall` is in, and samples from the branch's seed after that. Shared by the sampling
 * reference agent and the model adapters.
 */
import type { AgentTask } from '../types.js';

/** The sampling temperature model adapters use after the branch point when none is configured. */
export const DEFAULT_SAMPLING_TEMPERATURE = 1;

export interface BranchTracker {
  /** The task with `callTool` counting returned results; hand this one to the agent's loop. */
  task: AgentTask;
  /** True once the result of the fault call has come back: decisions from now on are sampled. */
  sampling(): boolean;
}

/** Tracks the branch point of `task`; without `task.sampling`, `sampling()` is always false. */
export function trackBranch(task: AgentTask): BranchTracker {
  const point = task.sampling;
  if (point === undefined) return { task, sampling: () => false };
  let returned = 0;
  const counted: AgentTask = {
    ...task,
    async callTool(name, args) {
      const result = await task.callTool(name, args);
      returned++;
      return result;
    },
  };
  return { task: counted, sampling: () => returned > point.afterCall };
}

/** What a model request sends: the branch's seed and the sampling temperature once past the branch point. */
export interface ModelSampling {
  seed: number;
  temperature: number;
}

/**
 * The request settings for the next model turn: undefined before the branch point (the request
 * must be the one an unsampled run would send, so that every branch replays the same prefix),
 * else the branch's seed and `temperature`.
 */
export function modelSamplingOf(task: AgentTask, tracker: BranchTracker, temperature: number): ModelSampling | undefined {
  if (task.sampling === undefined || !tracker.sampling()) return undefined;
  return { seed: task.sampling.seed, temperature };
}
