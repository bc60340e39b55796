/**
 * Redaction of trajectories read from outside (chat logs, tau-bench results, step logs, OTLP
 * spans). The runtime redacts its records before they leave the process; an imported log never
 * went through a runtime, so its arguments, results and messages are redacted here, before the
 * trajectory is stored, annotated or exported.
 *
 * What is redacted: the task description, the system prompt, the conversation's text turns (before
 * each step and at the close), and per step the arguments, the response (message, body and text),
 * the text said with the call, the stated intent and the agent's observation, the failure evidence
 * (it quotes what it read), the decision's reasoning and params delta, the correct action and the
 * reason given for a correctness, and labels' reasons. Ids, times, names of tools and the taxonomy
 * labels are left as they are: they identify the data and carry no free text from the source.
 */
import { defaultRedactor, type FoundSecrets, type Redactor } from '../record/redact.js';
import type { AgentDecision, ConversationTurn, FailureEvidence, StepResponse, Trajectory, TrajectoryLabel, TrajectoryStep } from '../core/trajectory-types.js';

/** How one pass changes text and values: redaction first, then scrubbing what it found. */
interface Pass {
  text(value: string): string;
  value<T>(value: T): T;
}

/**
 * `trajectory` with its free text and payloads redacted; the very same object when nothing changed.
 * A secret found anywhere in it (a password under its key in one message) is then scrubbed
 * everywhere in it (the same password quoted bare in another), like a record's fields.
 */
export function redactTrajectory(trajectory: Trajectory, redactor: Redactor = defaultRedactor): Trajectory {
  const found: FoundSecrets = [];
  const redacted = passOver(trajectory, { text: (s) => redactor.text(s, found), value: (v) => redactor.value(v, found) });
  if (found.length === 0) return redacted;
  return passOver(redacted, { text: (s) => redactor.scrub(s, found), value: (v) => redactor.scrub(v, found) });
}

function passOver(trajectory: Trajectory, pass: Pass): Trajectory {
  const text = (value: string | null): string | null => (value === null ? null : pass.text(value));
  let steps: TrajectoryStep[] | undefined;
  trajectory.steps.forEach((step, i) => {
    const redacted = redactStep(step, pass);
    if (redacted === step) return;
    steps ??= trajectory.steps.slice();
    steps[i] = redacted;
  });
  const task = text(trajectory.task_description);
  const labels = trajectory.labels === undefined ? undefined : redactLabels(trajectory.labels, pass);
  const system = trajectory.system_prompt === undefined ? undefined : pass.text(trajectory.system_prompt);
  const closing = trajectory.closing_turns === undefined ? undefined : redactTurns(trajectory.closing_turns, pass);
  if (steps === undefined && task === trajectory.task_description && labels === trajectory.labels && system === trajectory.system_prompt && closing === trajectory.closing_turns) {
    return trajectory;
  }
  const out: Trajectory = { ...trajectory, task_description: task, steps: steps ?? trajectory.steps };
  if (labels !== undefined) out.labels = labels;
  if (system !== undefined) out.system_prompt = system;
  if (closing !== undefined) out.closing_turns = closing;
  return out;
}

/** The turns with their text redacted; the same array when nothing changed. */
function redactTurns(turns: ConversationTurn[], pass: Pass): ConversationTurn[] {
  let out: ConversationTurn[] | undefined;
  turns.forEach((turn, i) => {
    const content = pass.text(turn.content);
    if (content === turn.content) return;
    out ??= turns.slice();
    out[i] = { ...turn, content };
  });
  return out ?? turns;
}

function redactStep(step: TrajectoryStep, pass: Pass): TrajectoryStep {
  const input = pass.value(step.input_params);
  const response = redactResponse(step.response, pass);
  const decision = redactDecision(step.agent_decision, pass);
  const reason = step.correctness_reason === null ? null : pass.text(step.correctness_reason);
  const correct = step.correct_action === null ? null : pass.value(step.correct_action);
  const before = step.turns_before === undefined ? undefined : redactTurns(step.turns_before, pass);
  const said = step.call_text === undefined ? undefined : pass.text(step.call_text);
  const intent = step.intent === undefined ? undefined : pass.text(step.intent);
  const observation = step.agent_observation === undefined ? undefined : pass.text(step.agent_observation);
  const evidence = step.failure_evidence === undefined ? undefined : redactEvidence(step.failure_evidence, pass);
  if (
    input === step.input_params &&
    response === step.response &&
    decision === step.agent_decision &&
    reason === step.correctness_reason &&
    correct === step.correct_action &&
    before === step.turns_before &&
    said === step.call_text &&
    intent === step.intent &&
    observation === step.agent_observation &&
    evidence === step.failure_evidence
  ) {
    return step;
  }
  const out: TrajectoryStep = { ...step, input_params: input, response, agent_decision: decision, correctness_reason: reason, correct_action: correct };
  if (before !== undefined) out.turns_before = before;
  if (said !== undefined) out.call_text = said;
  if (intent !== undefined) out.intent = intent;
  if (observation !== undefined) out.agent_observation = observation;
  if (evidence !== undefined) out.failure_evidence = evidence;
  return out;
}

function redactEvidence(evidence: FailureEvidence, pass: Pass): FailureEvidence {
  let out: string[] | undefined;
  evidence.evidence.forEach((item, i) => {
    const redacted = pass.text(item);
    if (redacted === item) return;
    out ??= evidence.evidence.slice();
    out[i] = redacted;
  });
  return out === undefined ? evidence : { ...evidence, evidence: out };
}

function redactResponse(response: StepResponse, pass: Pass): StepResponse {
  const message = response.message === undefined ? undefined : pass.text(response.message);
  const body = response.body === undefined ? undefined : pass.value(response.body);
  const text = response.text === undefined ? undefined : pass.text(response.text);
  if (message === response.message && body === response.body && text === response.text) return response;
  const out: StepResponse = { ...response };
  if (message !== undefined) out.message = message;
  if (body !== undefined) out.body = body;
  if (text !== undefined) out.text = text;
  return out;
}

function redactDecision(decision: AgentDecision, pass: Pass): AgentDecision {
  const delta = decision.params_delta === undefined ? undefined : pass.value(decision.params_delta);
  const reasoning = decision.reasoning === undefined ? undefined : pass.text(decision.reasoning);
  if (delta === decision.params_delta && reasoning === decision.reasoning) return decision;
  const out: AgentDecision = { ...decision };
  if (delta !== undefined) out.params_delta = delta;
  if (reasoning !== undefined) out.reasoning = reasoning;
  return out;
}

function redactLabels(labels: TrajectoryLabel[], pass: Pass): TrajectoryLabel[] {
  let out: TrajectoryLabel[] | undefined;
  labels.forEach((label, i) => {
    const reason = pass.text(label.reason);
    if (reason === label.reason) return;
    out ??= labels.slice();
    out[i] = { ...label, reason };
  });
  return out ?? labels;
}
