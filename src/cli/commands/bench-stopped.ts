/**
 * The one line `bench` ends with when a model endpoint stops the run (SuiteStoppedError from
 * runSuite or runFission), shared by the scoring run and `--fission`.
 */
import type { SuiteStoppedError } from '../../failbench/runner.js';
import type { Agent } from '../../failbench/types.js';
import { printable } from '../io.js';

/**
 * The one line for a run stopped by its model endpoint: which endpoint, what it said (already
 * scrubbed of the API key), how far the run got. No report (or fission group) is written: scores
 * over the runs before the stop would read as the agent's. The records of those runs stay in the store.
 * `unwritten` says what was not written.
 */
export function stoppedMessage(error: SuiteStoppedError, agents: readonly Agent[], unwritten = 'no report written'): string {
  const f = error.failure;
  const url = agents.find((a) => a.name === error.agent)?.endpoint?.url;
  const endpoint = `the ${f.provider} endpoint${url === undefined ? '' : ` ${url}`}`;
  const what =
    error.reason === 'rejected'
      ? `${endpoint} rejected the request (${f.message})`
      : f.kind === 'rejected'
        ? `${endpoint} failed ${error.consecutive} runs in a row (the last rejected: ${f.message})`
        : `${endpoint} stopped answering: ${error.consecutive} runs in a row failed despite retries (last: ${f.message}, ${f.attempts} ${f.attempts === 1 ? 'attempt' : 'attempts'})`;
  // The endpoint's message is its own text: no control characters or line breaks reach the terminal.
  return printable(`${what}; stopped after ${error.completed} of ${error.total} runs, ${unwritten} (the records of those runs are kept)`);
}
