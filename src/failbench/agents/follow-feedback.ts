/**
 * The feedback-following reference agent: the naive agent's habits (no retry logic of its own,
 * no check of a 200, no idempotency keys, no waiting unless told), except that it does exactly
 * what the runtime's feedback says about each failure: fixes the arguments the issues name,
 * waits `retryAfterMs`, reads the state on `verify_state`, escalates, stops, calls again only
 * when told. In raw mode there is no feedback, so it is the naive agent; the gap between its
 * raw and assisted scores is what the feedback alone is worth.
 */
import type { Agent, AgentOutcome, AgentTask } from '../types.js';
import { FEEDBACK_RULES, PlaybookRun } from './playbook.js';

/**
 * @example
 * const result = await runScenario(scenario, createFeedbackFollowingAgent(), { feedback: 'assisted', seed: 1 });
 */
export function createFeedbackFollowingAgent(name = 'follow-feedback'): Agent {
  return {
    name,
    run: (task: AgentTask): Promise<AgentOutcome> => new PlaybookRun(task, FEEDBACK_RULES).run(),
  };
}
