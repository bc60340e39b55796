/**
 * A hand-driven AgentTask for agent unit tests: the test scripts what each call returns and
 * reads back what the agent called and how long it waited.
 */
import { createToolCatalog } from '../../tools/index.js';
import type { AgentTask, AgentTool, AgentToolResult, FeedbackMode, RawToolError } from '../types.js';

export interface ScriptedCall {
  tool: string;
  args: Record<string, unknown>;
  /** Virtual ms since the start, when the call was made. */
  at: number;
}

export type Responder = (tool: string, args: Record<string, unknown>, n: number) => AgentToolResult;

export interface ScriptedTask {
  task: AgentTask;
  calls: ScriptedCall[];
  sleeps: number[];
}

const CATALOG_TOOLS: AgentTool[] = createToolCatalog().tools.map((t) => ({
  name: t.name,
  description: t.description,
  inputSchema: t.inputSchema,
  ...(t.annotations !== undefined ? { annotations: { ...t.annotations } } : {}),
}));

export const NOW = '2026-03-29T14:00:00.000Z';

export function scriptedTask(instruction: string, tools: string[], respond: Responder, feedback: FeedbackMode = 'raw'): ScriptedTask {
  const calls: ScriptedCall[] = [];
  const sleeps: number[] = [];
  let elapsed = 0;
  const counts = new Map<string, number>();
  const task: AgentTask = {
    id: 'task-test',
    instruction,
    now: NOW,
    tools: CATALOG_TOOLS.filter((t) => tools.includes(t.name)),
    feedback,
    signal: new AbortController().signal,
    async callTool(name, args) {
      calls.push({ tool: name, args: structuredClone(args), at: elapsed });
      const n = (counts.get(name) ?? 0) + 1;
      counts.set(name, n);
      return respond(name, args, n);
    },
    async sleep(ms) {
      sleeps.push(ms);
      elapsed += ms;
    },
  };
  return { task, calls, sleeps };
}

export const ok = (output: unknown): AgentToolResult => ({ ok: true, output });
export const fail = (error: RawToolError): AgentToolResult => ({ ok: false, error });
export const http = (status: number, extra: Partial<RawToolError> = {}): AgentToolResult => fail({ code: `HTTP_${status}`, message: `HTTP ${status}`, status, ...extra });

/** A weather answer for a city and date, shaped like the catalog's. */
export function weather(city: string, date: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    city,
    country: 'CN',
    timezone: 'Asia/Shanghai',
    date,
    kind: 'forecast',
    unit: 'celsius',
    condition: 'cloudy',
    temp_high: 18,
    temp_low: 11,
    temp_mean: 14.5,
    humidity_pct: 70,
    precipitation_mm: 0,
    wind_kph: 12,
    as_of: NOW,
    ...extra,
  };
}
