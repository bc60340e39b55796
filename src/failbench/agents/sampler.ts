/**
 * `sampler`: the robust playbook, able to branch. Without `task.sampling` it is the robust agent,
 * decision for decision. In a fission continuation (`task.sampling`), every decision after the
 * result of the fault call is drawn from a seeded RNG among the plausible reactions to a
 * failure, weighted as {@link SAMPLER_CHOICES} says: follow the playbook, act as the naive agent
 * would, repeat the call at once, give up, or escalate. Different branch seeds then give
 * different continuations of one prefix, and the scenario oracle rewards them differently:
 * the reward variance a GRPO group needs.
 */
import { seededRandom } from '../../core/seeded-random.js';
import type { Agent, AgentOutcome, AgentTask } from '../types.js';
import { trackBranch } from './branch-sampling.js';
import { PlaybookRun, ROBUST_RULES, type ChoosePlaybookAction, type PlaybookChoice, type PlaybookRules } from './playbook.js';

/** The choices at each sampled decision and their probabilities (they sum to 1). */
export const SAMPLER_CHOICES: readonly { choice: PlaybookChoice; weight: number }[] = [
  { choice: 'playbook', weight: 0.4 },
  { choice: 'naive', weight: 0.25 },
  { choice: 'retry', weight: 0.15 },
  { choice: 'give_up', weight: 0.1 },
  { choice: 'escalate', weight: 0.1 },
];

/** The choice a uniform draw in [0, 1) lands on. */
export function samplerChoice(draw: number): PlaybookChoice {
  let edge = 0;
  for (const { choice, weight } of SAMPLER_CHOICES) {
    edge += weight;
    if (draw < edge) return choice;
  }
  return SAMPLER_CHOICES[SAMPLER_CHOICES.length - 1]!.choice;
}

export interface SamplingAgentOptions {
  name?: string;
  /** Rules of the playbook it follows outside sampled decisions. Default: the robust agent's. */
  rules?: Partial<PlaybookRules>;
}

/**
 * @example
 * const agent = createSamplingAgent();
 * await runFission({ scenarios, agents: [agent], k: 4, feedback: 'raw', seed: 1, store });
 */
export function createSamplingAgent(options: SamplingAgentOptions = {}): Agent {
  const rules: PlaybookRules = { ...ROBUST_RULES, ...options.rules };
  return {
    name: options.name ?? 'sampler',
    canSample: true,
    run(task: AgentTask): Promise<AgentOutcome> {
      if (task.sampling === undefined) return new PlaybookRun(task, rules).run();
      const tracker = trackBranch(task);
      const random = seededRandom(task.sampling.seed);
      const choose: ChoosePlaybookAction = () => (tracker.sampling() ? samplerChoice(random()) : undefined);
      return new PlaybookRun(tracker.task, rules, choose).run();
    },
  };
}
