import type { Label } from '../label.js';
import { argumentValuesOf, isFailed, isSideEffectFreeName, isSucceeded } from '../step-facts.js';
import { jsonValue } from '../../core/deferred-json.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { failureNote } from '../failure-note.js';

export const CASCADE_FAILURE_CONFIDENCE = 0.65;

/** Argument values that stand in for something the agent did not have (the failed call's output). */
const PLACEHOLDER = /^(?:unknown|n\/?a|none|null|undefined|tbd|todo|placeholder|xxx+|\?+|<[^>]*>|\{\{[^}]*\}\}|\$\{[^}]*\})$/i;

function placeholders(params: unknown, out: string[] = []): string[] {
  if (typeof params === 'string' && PLACEHOLDER.test(params.trim())) out.push(params);
  else if (Array.isArray(params)) for (const item of params) placeholders(item, out);
  else if (typeof params === 'object' && params !== null) for (const value of Object.values(params)) placeholders(value, out);
  return out;
}

/**
 * `cascade_failure`: the run went on past a critical failure, building later calls on it. A
 * step j depends on an earlier failed step i (operationally, since outputs that never arrived
 * cannot be traced) when:
 * - j calls a different tool that is neither a read nor a pure computation (think, calculate):
 *   reads after a failure are investigation or fallback, not damage;
 * - the failed tool did not succeed anywhere between i and j, so nothing replaced the output;
 * - and j either reuses an argument value of i (the same reservation, user, order: it acts on
 *   the entity the failed call was about; strings of 3+ characters, numbers of 100 or more), or
 *   passes a placeholder (`unknown`, `N/A`, `<id>`, `{{x}}`, ...) where the missing output
 *   would have gone, or writes an identifier of i (letters and digits: `UA77`, `W1110002`)
 *   into a text argument (a confirmation email for a booking that failed).
 * Each dependent step is labelled once (against the latest failure it depends on); the
 * faulted decision is the one taken after that failure.
 */
export function cascadeFailure(trajectory: Trajectory): Label[] {
  const labels: Label[] = [];
  const steps = trajectory.steps;
  // One forward sweep (a scan back from every step is quadratic on long trajectories): per tool
  // its latest failure and latest success so far, and per argument value the failed steps that
  // carried it. A failure of tool T is unrecovered at j exactly when T's latest success is older.
  const lastFailure = new Map<string, number>();
  const lastSuccess = new Map<string, number>();
  const failedWithValue = new Map<string, number[]>();
  const unrecovered = (i: number, tool: string): boolean => steps[i]!.tool_name !== tool && (lastSuccess.get(steps[i]!.tool_name) ?? -1) < i;
  // Whether some tool other than `tool` has a failure no later success of it recovered: if
  // not, no step can depend on one, and its arguments need not be read. A tool's latest failure
  // is recovered exactly when its latest success is later (older failures then are too).
  const anyUnrecovered = (tool: string): boolean => {
    for (const [failedTool, at] of lastFailure) if (failedTool !== tool && (lastSuccess.get(failedTool) ?? -1) < at) return true;
    return false;
  };
  steps.forEach((step, j) => {
    if (!isSideEffectFreeName(step.tool_name) && anyUnrecovered(step.tool_name)) {
      const fillers = placeholders(jsonValue(step.input_params));
      let dependsOn = -1;
      if (fillers.length > 0) {
        // A placeholder stands in for any missing output: the latest unrecovered failure of another tool.
        for (const at of lastFailure.values()) if (at > dependsOn && unrecovered(at, step.tool_name)) dependsOn = at;
      } else {
        for (const value of argumentValuesOf(step)) {
          const carriers = failedWithValue.get(value);
          if (carriers === undefined) continue;
          for (let k = carriers.length - 1; k >= 0 && carriers[k]! > dependsOn; k--) {
            if (unrecovered(carriers[k]!, step.tool_name)) {
              dependsOn = carriers[k]!;
              break;
            }
          }
        }
      }
      let quoted: string | undefined;
      if (dependsOn < 0 && fillers.length === 0) {
        // An identifier of the failed call written into a text argument ("Your flight UA77 is
        // booked" after booking UA77 failed) builds on it as much as passing it as a value.
        const tokens = idTokensOf(jsonValue(step.input_params));
        if (tokens.size > 0) {
          for (const at of lastFailure.values()) {
            if (at <= dependsOn || !unrecovered(at, step.tool_name)) continue;
            const id = [...argumentValuesOf(steps[at]!)].find((v) => ID_TOKEN.test(v) && tokens.has(v));
            if (id !== undefined) {
              dependsOn = at;
              quoted = id;
            }
          }
        }
      }
      if (dependsOn >= 0) {
        const failed = steps[dependsOn]!;
        const values = argumentValuesOf(step);
        const shared = [...argumentValuesOf(failed)].find((v) => values.has(v));
        const how = quoted !== undefined ? `writes ${JSON.stringify(quoted)} from it into its text` : shared === undefined ? `passes the placeholder ${JSON.stringify(fillers[0])}` : `reuses ${JSON.stringify(shared)} from it`;
        labels.push(cascadeLabel(step, failed, how));
      }
    }
    if (isFailed(step)) {
      lastFailure.set(step.tool_name, j);
      for (const value of argumentValuesOf(step)) {
        const carriers = failedWithValue.get(value);
        if (carriers === undefined) failedWithValue.set(value, [j]);
        else carriers.push(j);
      }
    } else if (isSucceeded(step)) {
      lastSuccess.set(step.tool_name, j);
    }
  });
  return labels;
}

// An identifier: letters and digits both (an order, flight, passenger or booking id), 3+ characters.
const ID_TOKEN = /^(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{2,}$/;

/** The identifier-like words inside a call's string arguments. */
function idTokensOf(params: unknown, out = new Set<string>()): Set<string> {
  if (typeof params === 'string') {
    for (const word of params.match(/[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]/g) ?? []) if (ID_TOKEN.test(word)) out.add(word);
  } else if (Array.isArray(params)) {
    for (const item of params) idTokensOf(item, out);
  } else if (typeof params === 'object' && params !== null) {
    for (const value of Object.values(params)) idTokensOf(value, out);
  }
  return out;
}

function cascadeLabel(step: TrajectoryStep, failed: TrajectoryStep, how: string): Label {
  return {
    name: 'cascade_failure',
    step_index: step.step_index,
    confidence: CASCADE_FAILURE_CONFIDENCE,
    reason: `${step.tool_name} went ahead after ${failed.tool_name} failed at step ${failed.step_index} (${failureNote(failed)}) and ${how}`,
    decision_step: failed.step_index,
  };
}
