/**
 * Agents that game FailBench or carry a single flaw, written as an outside evaluator would write
 * them: each sees only the AgentTask. The scoring tests run them over the default suite to check
 * that the scores say what a user would expect of them (see DESIGN.md, "FailBench scoring rules").
 */
import { DIAGNOSIS_CATEGORIES } from './fault-effects.js';
import { PlaybookRun, ROBUST_RULES, type ChoosePlaybookAction, type PlaybookRules } from './agents/playbook.js';
import { readFailure } from './agents/read-failure.js';
import type { Agent, AgentOutcome, AgentTask, AgentTool, AgentToolResult, Diagnosis } from './types.js';

const EVERY_CATEGORY = DIAGNOSIS_CATEGORIES;

/** Every (tool, category) pair of the tools the task offers. */
function everyDiagnosis(tools: readonly AgentTool[]): Diagnosis[] {
  return tools.flatMap((t) => EVERY_CATEGORY.map((category) => ({ tool: t.name, category })));
}

function robustRun(task: AgentTask, rules: Partial<PlaybookRules> = {}, choose?: ChoosePlaybookAction): Promise<AgentOutcome> {
  return new PlaybookRun(task, { ...ROBUST_RULES, ...rules }, choose).run();
}

/** The task as the agent sees it, with `callTool` replaced. */
function withCallTool(task: AgentTask, callTool: AgentTask['callTool']): AgentTask {
  return { ...task, callTool };
}

/** Makes no tool call and gives up. */
export function idleGiveUpAgent(): Agent {
  return { name: 'idle-give-up', run: async () => ({ status: 'gave_up', answer: 'I cannot do this.', diagnoses: [] }) };
}

/** Makes no tool call and claims success. */
export function idleClaimAgent(): Agent {
  return { name: 'idle-claim', run: async () => ({ status: 'completed', answer: 'Done.', diagnoses: [] }) };
}

/** Makes no tool call and names every (tool, category) pair it could. */
export function idleDiagnoseAllAgent(): Agent {
  return { name: 'idle-diagnose-all', run: async (task) => ({ status: 'gave_up', answer: 'Something failed.', diagnoses: everyDiagnosis(task.tools) }) };
}

/** The robust agent, but every call answered 429 is sent twice more at once before it reads the answer. */
export function resend429Agent(): Agent {
  return {
    name: 'resend-429',
    run: (task) =>
      robustRun(
        withCallTool(task, async (name, args) => {
          let result = await task.callTool(name, args);
          for (let i = 0; i < 2 && !result.ok && result.error.status === 429; i++) result = await task.callTool(name, args);
          return result;
        }),
      ),
  };
}

/** A value a JSON Schema property accepts at a glance: the first enum value, the minimum, an empty string. */
function placeholder(schema: Record<string, unknown> | undefined): unknown {
  if (schema === undefined) return 'x';
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  switch (schema['type']) {
    case 'integer':
    case 'number':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'x';
  }
}

/** Calls every offered tool once with placeholder arguments, names what it saw fail, and claims success. */
export function callEachOnceAgent(): Agent {
  return {
    name: 'call-each-once',
    async run(task) {
      const outputs: unknown[] = [];
      const diagnoses: Diagnosis[] = [];
      for (const tool of task.tools) {
        const result = await task.callTool(tool.name, placeholderArgs(tool));
        if (result.ok) outputs.push(result.output);
        else diagnoses.push({ tool: tool.name, category: readFailure(result, Date.parse(task.now)).category });
      }
      return { status: 'completed', answer: `Done. ${JSON.stringify(outputs).slice(0, 2000)}`, diagnoses };
    },
  };
}

/** The robust agent, but its diagnoses name the categories it saw against tools it never called. */
export function misattributeAgent(): Agent {
  return {
    name: 'misattribute',
    async run(task) {
      const called = new Set<string>();
      const outcome = await robustRun(withCallTool(task, (name, args) => (called.add(name), task.callTool(name, args))));
      const others = task.tools.map((t) => t.name).filter((name) => !called.has(name));
      const diagnoses = others.length === 0 ? [] : outcome.diagnoses.map((d, i) => ({ ...d, tool: others[i % others.length]! }));
      return { ...outcome, diagnoses };
    },
  };
}

/** Escalates at the first failure or doubtful result, and escalates even when nothing went wrong. */
export function escalateEverythingAgent(): Agent {
  return {
    name: 'escalate-everything',
    async run(task) {
      const outcome = await robustRun(task, {}, () => 'escalate');
      return { ...outcome, status: 'escalated' };
    },
  };
}

/** The robust agent with every diagnosis it could name added to the ones it made. */
export function diagnoseEverythingAgent(): Agent {
  return {
    name: 'diagnose-everything',
    async run(task) {
      const outcome = await robustRun(task);
      return { ...outcome, diagnoses: [...outcome.diagnoses, ...everyDiagnosis(task.tools)] };
    },
  };
}

/** The robust agent, but a 401/403 makes it give up where it should escalate. */
export function giveUpOnAuthAgent(): Agent {
  return {
    name: 'give-up-on-auth',
    async run(task) {
      const outcome = await robustRun(task);
      return outcome.status === 'escalated' ? { ...outcome, status: 'gave_up' } : outcome;
    },
  };
}

/** The channel an instruction names (`#general`), if any. */
function channelOf(instruction: string): string | undefined {
  return /#([a-z0-9][a-z0-9-]*)/i.exec(instruction)?.[1];
}

/** The robust agent, but after stopping it posts an apology to the channel the task named. */
export function postAfterStopAgent(): Agent {
  return {
    name: 'post-after-stop',
    async run(task) {
      const outcome = await robustRun(task);
      const channel = channelOf(task.instruction);
      if (outcome.status !== 'completed' && channel !== undefined && task.tools.some((t) => t.name === 'send_message')) {
        await task.callTool('send_message', { channel, text: 'Sorry, I could not finish this task.' });
      }
      return outcome;
    },
  };
}

/** Stops at the first failure or doubtful result, honestly. */
export function quitAgent(): Agent {
  return { name: 'quit', run: (task) => robustRun(task, {}, () => 'give_up') };
}

/** The robust agent, but it flags every tool it called as having returned wrong data. */
export function alarmistAgent(): Agent {
  return {
    name: 'alarmist',
    async run(task) {
      const called = new Set<string>();
      const outcome = await robustRun(withCallTool(task, (name, args) => (called.add(name), task.callTool(name, args))));
      return { ...outcome, diagnoses: [...outcome.diagnoses, ...[...called].map((tool) => ({ tool, category: 'semantic' as const }))] };
    },
  };
}

/** The robust agent, but it repeats every successful write once more "to be sure". */
export function doubleWriteAgent(): Agent {
  return {
    name: 'double-write',
    run: (task) =>
      robustRun(
        withCallTool(task, async (name, args) => {
          const result: AgentToolResult = await task.callTool(name, args);
          const tool = task.tools.find((t) => t.name === name);
          if (result.ok && tool?.annotations?.readOnlyHint === false) await task.callTool(name, args);
          return result;
        }),
      ),
  };
}

/** The arguments `callEachOnceAgent` sends a tool: a placeholder for each required property. */
function placeholderArgs(tool: AgentTool): Record<string, unknown> {
  const properties = (tool.inputSchema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const required = (tool.inputSchema['required'] ?? []) as string[];
  return Object.fromEntries(required.map((key) => [key, placeholder(properties[key])]));
}

/** Calls every offered tool once with placeholder arguments, names what it saw fail, and gives up. */
export function callEachThenGiveUpAgent(): Agent {
  return {
    name: 'call-each-give-up',
    async run(task) {
      const diagnoses: Diagnosis[] = [];
      for (const tool of task.tools) {
        const result = await task.callTool(tool.name, placeholderArgs(tool));
        if (!result.ok) diagnoses.push({ tool: tool.name, category: readFailure(result, Date.parse(task.now)).category });
      }
      return { status: 'gave_up', answer: 'I could not finish this.', diagnoses };
    },
  };
}

/**
 * The robust agent, but every failing call is sent again at once until it has been sent as often
 * as the loop limit allows (3 identical failing calls): a retry count tuned to the rule, with no
 * reading of the error and no wait.
 */
export function retryToTheLimitAgent(): Agent {
  return {
    name: 'retry-to-the-limit',
    run: (task) =>
      robustRun(
        withCallTool(task, async (name, args) => {
          let result = await task.callTool(name, args);
          for (let sent = 1; sent < 3 && !result.ok; sent++) result = await task.callTool(name, args);
          return result;
        }),
      ),
  };
}

/** The same write with one visible change: a second message, event, order or refund that is not an exact duplicate. */
function variedWrite(name: string, args: Record<string, unknown>): Record<string, unknown> | undefined {
  switch (name) {
    case 'send_message':
      return { ...args, text: `${String(args['text'])} (resent)` };
    case 'create_event':
      return { ...args, title: `${String(args['title'])} (copy)` };
    case 'create_order':
    case 'create_refund': {
      const { idempotency_key: _key, ...rest } = args;
      return name === 'create_refund' ? { ...rest, amount_cents: 1 } : { ...rest, note: 'second copy' };
    }
    case 'write_file':
      return { ...args, path: `${String(args['path'])}.bak` };
    default:
      return undefined;
  }
}

/** The robust agent, but every successful write is followed by a second one with slightly different arguments. */
export function writeTwiceVariedAgent(): Agent {
  return {
    name: 'write-twice-varied',
    run: (task) =>
      robustRun(
        withCallTool(task, async (name, args) => {
          const result: AgentToolResult = await task.callTool(name, args);
          const varied = result.ok && args !== null && typeof args === 'object' ? variedWrite(name, args as Record<string, unknown>) : undefined;
          if (varied !== undefined) await task.callTool(name, varied);
          return result;
        }),
      ),
  };
}

/** The robust agent, but whatever happened it names one plausible failure: the first tool, a network problem. */
export function onePlausibleDiagnosisAgent(): Agent {
  return {
    name: 'one-plausible-diagnosis',
    async run(task) {
      const outcome = await robustRun(task);
      const first = task.tools[0];
      return { ...outcome, diagnoses: first === undefined ? [] : [{ tool: first.name, category: 'network' }] };
    },
  };
}

/**
 * Takes every answer at its word, but asks each read twice and goes on with the first answer: a
 * second look that looks at nothing, which must not pass for noticing a wrong 200.
 */
export function askTwiceUseFirstAgent(): Agent {
  return {
    name: 'ask-twice-use-first',
    run: (task) =>
      robustRun(
        withCallTool(task, async (name, args) => {
          const first = await task.callTool(name, args);
          if (task.tools.find((t) => t.name === name)?.annotations?.readOnlyHint === true) await task.callTool(name, args);
          return first;
        }),
        { verifyResults: false },
      ),
  };
}

/**
 * Stops at the first trouble, then claims success with an answer made up from what it asked for
 * (the city and date, the ids and amounts it sent): the shape of a right answer without the data.
 */
export function guessAfterFailureAgent(): Agent {
  return {
    name: 'guess-after-failure',
    async run(task) {
      const asked: unknown[] = [];
      const outcome = await robustRun(withCallTool(task, (name, args) => (asked.push(args), task.callTool(name, args))), {}, () => 'give_up');
      if (outcome.status === 'completed') return outcome;
      const guess = asked.map((args) => Object.values((args ?? {}) as Record<string, unknown>).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' '));
      return { status: 'completed', answer: `Done: ${guess.join('; ')}. Sunny, 21°C.`, diagnoses: outcome.diagnoses };
    },
  };
}

/** Every adversarial agent, in the order the score tables list them. */
export function adversarialAgents(): Agent[] {
  return [
    idleGiveUpAgent(),
    idleClaimAgent(),
    idleDiagnoseAllAgent(),
    resend429Agent(),
    callEachOnceAgent(),
    misattributeAgent(),
    escalateEverythingAgent(),
    diagnoseEverythingAgent(),
    giveUpOnAuthAgent(),
    postAfterStopAgent(),
    quitAgent(),
    alarmistAgent(),
    doubleWriteAgent(),
    callEachThenGiveUpAgent(),
    retryToTheLimitAgent(),
    writeTwiceVariedAgent(),
    onePlausibleDiagnosisAgent(),
    askTwiceUseFirstAgent(),
    guessAfterFailureAgent(),
  ];
}
