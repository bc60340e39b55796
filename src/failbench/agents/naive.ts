/**
 * The naive reference agent: every anti-pattern seed 000 lists, on the same understanding of the
 * task as the robust agent. It repeats a failing call unchanged (up to 8 times, without waiting,
 * Retry-After or not), repeats writes after failures, "fixes" a 401 by changing an argument,
 * trusts any 200, carries on after a failed step, blames its own parameters, and claims success.
 */
import type { Agent, AgentOutcome, AgentTask } from '../types.js';
import { NAIVE_RULES, PlaybookRun } from './playbook.js';

export function createNaiveAgent(name = 'naive'): Agent {
  return {
    name,
    run: (task: AgentTask): Promise<AgentOutcome> => new PlaybookRun(task, NAIVE_RULES).run(),
  };
}
