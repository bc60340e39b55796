/**
 * The robust reference agent: seed 004's playbook as a program. It reads each error (status,
 * code, Retry-After, body; or the runtime's classification in assisted mode), acts on its class,
 * verifies every 200 against the instruction, checks state before repeating an ambiguous write,
 * stops within three identical failures, and says what it diagnosed.
 */
import type { Agent, AgentOutcome, AgentTask } from '../types.js';
import { PlaybookRun, ROBUST_RULES, type PlaybookRules } from './playbook.js';

export interface RobustAgentOptions {
  name?: string;
  /**
   * Rules to switch off or change, for ablations: each one turns a habit of the playbook into
   * the anti-pattern it prevents, so a benchmark run shows what that habit is worth.
   */
  rules?: Partial<PlaybookRules>;
}

/**
 * @example
 * const result = await runScenario(scenario, createRobustAgent(), { feedback: 'raw', seed: 1 });
 */
export function createRobustAgent(options: RobustAgentOptions = {}): Agent {
  const rules: PlaybookRules = { ...ROBUST_RULES, ...options.rules };
  return {
    name: options.name ?? 'robust',
    run: (task: AgentTask): Promise<AgentOutcome> => new PlaybookRun(task, rules).run(),
  };
}
