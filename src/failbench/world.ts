/**
 * The world one scenario run happens in: a fresh tool catalog, a virtual clock at the scenario's
 * "now", the scenario's fault plan, and a runtime over the scenario's tools. Every piece is
 * seeded from the run seed, the scenario id and the repeat, so the same seed gives the same run and
 * repeats differ where the plan leaves room (DESIGN.md, FailBench).
 */
import { createHash } from 'node:crypto';
import { ConfigError, DuplicateToolError } from '../core/errors.js';
import { createFaultPlan, type FaultPlan } from '../faults/plan.js';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { defineTool, type Tool, type ToolContext } from '../runtime/define-tool.js';
import type { RecordSink } from '../core/record-sink.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { CATALOG_TOOL_NAMES, createToolCatalog, DEFAULT_CATALOG_NOW, type ToolCatalog } from '../tools/index.js';
import { runtimeCapabilityOptions, toolCapabilitySpec, type Capability } from './capabilities.js';
import type { AgentTool, FeedbackMode, Scenario } from './types.js';

export interface WorldOptions {
  feedback: FeedbackMode;
  /** The run seed; combined with the scenario id and the repeat for the fault plan and retry jitter. */
  seed: number;
  /**
   * 0-based repeat of the scenario (pass^k). Each repeat draws its own fault plan and jitter: which
   * call a `one_of` rule meets, how long a window with `jitter_ms` lasts, sampled latencies. Default 0.
   */
  repeat?: number;
  /** Where the runtime's records go (the runner passes a shared recorder). */
  sink?: RecordSink;
  /** Added to every record's context_snapshot. */
  context?: Record<string, unknown>;
  /**
   * Runs the tools through this instead of in process (the http and mcp transports): the runtime
   * keeps each tool's definition (schemas, timeout, idempotency, recovery settings) but calls
   * `remote`, and injects no faults itself: the proxy in front of the tools does, with `faults`.
   */
  remote?: RemoteExecute;
  /** The runtime's optional checks to turn on (capabilities.ts). Default none: the runtime as it ships. */
  capabilities?: readonly Capability[];
}

export interface ScenarioWorld {
  catalog: ToolCatalog;
  clock: VirtualClock;
  faults: FaultPlan;
  runtime: Runtime;
  /** Epoch ms the run starts at (the scenario's now). */
  startMs: number;
  /** The tools as offered to the agent, in the scenario's order. */
  tools: AgentTool[];
}

/** A short hex digest of the parts, for opaque ids. */
export function digest(...parts: readonly (string | number)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${String(part)}\u0000`);
  return hash.digest('hex');
}

/** A 32-bit seed spread from the parts, so that nearby run seeds give unrelated streams. */
export function derivedSeed(...parts: readonly (string | number)[]): number {
  return Number.parseInt(digest(...parts).slice(0, 8), 16);
}

/** The scenario's virtual now in epoch ms. */
export function scenarioStartMs(scenario: Scenario): number {
  if (scenario.now === undefined) return DEFAULT_CATALOG_NOW;
  const ms = Date.parse(scenario.now);
  if (Number.isNaN(ms)) throw new ConfigError(`scenario ${scenario.id}: now ${JSON.stringify(scenario.now)} is not an ISO-8601 time`, 'now');
  return ms;
}

/** Runs a tool somewhere other than in process: over HTTP or MCP (see transport/). */
export type RemoteExecute = (tool: Tool, args: unknown, ctx: ToolContext) => Promise<unknown>;

/**
 * The same tool with another `execute`, with or without its own retry, breaker and fallback
 * settings, and with what `capabilities` add to its definition.
 */
function redefine(tool: Tool, execute: Tool['execute'], keepRecovery: boolean, capabilities: readonly Capability[] = []): Tool {
  return defineTool({
    name: tool.name,
    description: tool.description,
    input: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { output: tool.outputSchema } : {}),
    timeoutMs: tool.timeoutMs,
    idempotent: tool.idempotent,
    idempotencyKey: tool.idempotencyKey,
    ...(tool.feedback !== undefined ? { feedback: tool.feedback } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool.healthCheck !== undefined ? { healthCheck: tool.healthCheck } : {}),
    ...(tool.adaptiveTimeout !== undefined ? { adaptiveTimeout: tool.adaptiveTimeout } : {}),
    ...(keepRecovery ? { retry: tool.retry, breaker: tool.breaker, ...(tool.fallback !== undefined ? { fallback: tool.fallback } : {}) } : {}),
    ...toolCapabilitySpec(tool.name, capabilities),
    execute,
  });
}

/**
 * The tool without its own retry, breaker and fallback settings. Raw mode measures the agent's
 * own handling, so nothing may retry, trip or fall back for it, and tool-level settings would
 * override the runtime's.
 */
export function withoutOwnRecovery(tool: Tool): Tool {
  if (Object.keys(tool.retry).length === 0 && Object.keys(tool.breaker).length === 0 && tool.fallback === undefined) return tool;
  return redefine(tool, tool.execute, false);
}

function agentTool(tool: Tool): AgentTool {
  const offered: AgentTool = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
  const a = tool.annotations;
  if (a !== undefined) {
    const hints: NonNullable<AgentTool['annotations']> = {};
    if (a.readOnlyHint !== undefined) hints.readOnlyHint = a.readOnlyHint;
    if (a.idempotentHint !== undefined) hints.idempotentHint = a.idempotentHint;
    if (a.destructiveHint !== undefined) hints.destructiveHint = a.destructiveHint;
    if (a.openWorldHint !== undefined) hints.openWorldHint = a.openWorldHint;
    offered.annotations = hints;
  }
  return offered;
}

const CATALOG_TOOLS: ReadonlySet<string> = new Set(CATALOG_TOOL_NAMES);

/**
 * Checks, without building anything heavy, that `scenario` can run: the same checks, in the same
 * order and with the same errors, as {@link createWorld}. runSuite calls it for every scenario
 * before any agent runs, so a bad scenario fails the suite up front, not half way through.
 * @returns the scenario's start in epoch ms.
 * @throws ConfigError for an unknown tool, an invalid `now` or an invalid fault plan; RangeError for
 * a non-integer catalog seed; DuplicateToolError for a tool listed twice.
 */
export function checkScenario(scenario: Scenario, options: Pick<WorldOptions, 'seed' | 'repeat'>): number {
  const startMs = scenarioStartMs(scenario);
  const catalogSeed = scenario.seed ?? 1;
  if (!Number.isInteger(catalogSeed)) throw new RangeError(`seed must be an integer, got ${String(catalogSeed)}`);
  const seen = new Set<string>();
  for (const name of scenario.tools) {
    if (!CATALOG_TOOLS.has(name)) throw new ConfigError(`scenario ${scenario.id}: unknown tool "${name}"`, 'tools');
    seen.add(name);
  }
  void faultPlanOf(scenario, options.seed, options.repeat ?? 0, createVirtualClock({ startMs }), startMs);
  // What createRuntime refuses, last, as in createWorld.
  if (seen.size !== scenario.tools.length) throw new DuplicateToolError(scenario.tools.find((name, i) => scenario.tools.indexOf(name) !== i)!);
  return startMs;
}

function faultPlanOf(scenario: Scenario, seed: number, repeat: number, clock: VirtualClock, startMs: number): FaultPlan {
  try {
    return createFaultPlan({ version: 1, rules: scenario.faults }, { clock, seed: derivedSeed(seed, scenario.id, repeat, 'faults'), startedAt: startMs });
  } catch (error) {
    throw new ConfigError(`scenario ${scenario.id}: ${(error as Error).message}`, 'faults', { cause: error });
  }
}

/**
 * Builds a fresh world for one run of `scenario`. The catalog's state is the whole catalog's, but
 * only the tools the scenario offers are defined.
 * @throws ConfigError when the scenario names a tool the catalog does not have, or its fault plan is invalid.
 */
export function createWorld(scenario: Scenario, options: WorldOptions): ScenarioWorld {
  const startMs = scenarioStartMs(scenario);
  const catalog = createToolCatalog({ seed: scenario.seed ?? 1, now: startMs, only: scenario.tools.filter((name) => CATALOG_TOOLS.has(name)) });
  const byName = new Map(catalog.tools.map((t) => [t.name, t]));
  const tools: Tool[] = [];
  for (const name of scenario.tools) {
    const tool = byName.get(name);
    if (tool === undefined) throw new ConfigError(`scenario ${scenario.id}: unknown tool "${name}"`, 'tools');
    const remote = options.remote;
    const capabilities = options.capabilities ?? [];
    if (remote !== undefined) tools.push(redefine(tool, (args, ctx) => remote(tool, args, ctx), options.feedback !== 'raw', capabilities));
    else if (capabilities.length > 0) tools.push(redefine(tool, tool.execute, options.feedback !== 'raw', capabilities));
    else tools.push(options.feedback === 'raw' ? withoutOwnRecovery(tool) : tool);
  }
  const clock = createVirtualClock({ startMs });
  const repeat = options.repeat ?? 0;
  const faults = faultPlanOf(scenario, options.seed, repeat, clock, startMs);
  const runtime = createRuntime({
    tools,
    clock,
    ...(options.remote === undefined ? { faults } : {}),
    seed: derivedSeed(options.seed, scenario.id, repeat, 'jitter'),
    ...(options.sink !== undefined ? { recorder: options.sink } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.feedback === 'raw' ? { retry: { maxRetries: 0 }, breaker: { failureThreshold: Number.MAX_SAFE_INTEGER } } : {}),
    ...runtimeCapabilityOptions(options.capabilities ?? []),
  });
  return { catalog, clock, faults, runtime, startMs, tools: tools.map(agentTool) };
}
