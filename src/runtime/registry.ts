/** The runtime's tools by name, each with its retry options and its breaker. */
import { DuplicateToolError, ToolDefinitionError } from '../core/errors.js';
import { ConsecutiveBreaker, type Breaker, type BreakerOptions, type BreakerProvider, type BreakerSnapshot } from './breaker.js';
import { isTool, type Tool } from './define-tool.js';
import { AdaptiveTimeout } from './adaptive-timeout.js';
import type { RetryOptions } from './retry-policy.js';
import type { Runtime, ToolInfo } from './types.js';

export interface RegisteredTool {
  tool: Tool;
  retry: RetryOptions;
  breaker: Breaker;
  /** Set when the tool opted in to an adaptive timeout. */
  adaptiveTimeout: AdaptiveTimeout | undefined;
}

export interface ToolRegistry {
  get(name: string): RegisteredTool | undefined;
  names(): Iterable<string>;
  readonly infos: readonly ToolInfo[];
  readonly breakers: Runtime['breakers'];
}

export interface RegistryDefaults {
  /** The runtime's defaults; a tool's own settings win. */
  retry: RetryOptions;
  breaker: BreakerOptions;
  breakers: BreakerProvider | undefined;
}

/** Throws a ToolDefinitionError for anything not made by defineTool, a duplicate name, or a fallback that is not registered. */
export function createRegistry(tools: readonly Tool[], defaults: RegistryDefaults): ToolRegistry {
  const entries = new Map<string, RegisteredTool>();
  for (const tool of tools) {
    if (!isTool(tool)) throw new ToolDefinitionError(String((tool as { name?: unknown })?.name), 'tools must be created with defineTool()');
    if (entries.has(tool.name)) throw new DuplicateToolError(tool.name);
    const breakerOptions = { ...defaults.breaker, ...tool.breaker };
    entries.set(tool.name, {
      tool,
      retry: { ...defaults.retry, ...tool.retry },
      breaker: defaults.breakers?.breakerFor(tool.name, breakerOptions) ?? new ConsecutiveBreaker(breakerOptions),
      adaptiveTimeout: adaptiveTimeoutOf(tool),
    });
  }
  for (const { tool } of entries.values()) {
    if (tool.fallback !== undefined && !entries.has(tool.fallback)) {
      throw new ToolDefinitionError(tool.name, `fallback "${tool.fallback}" is not a registered tool`);
    }
  }
  const infos: ToolInfo[] = [...entries.values()].map(({ tool }) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    idempotent: tool.idempotent,
  }));
  return {
    get: (name) => entries.get(name),
    names: () => entries.keys(),
    infos,
    breakers: {
      state: (name) => entries.get(name)?.breaker.snapshot(),
      snapshot() {
        const out: Record<string, BreakerSnapshot> = {};
        for (const [name, entry] of entries) out[name] = entry.breaker.snapshot();
        return out;
      },
      restore(snapshot) {
        for (const [name, state] of Object.entries(snapshot)) entries.get(name)?.breaker.restore(state);
      },
    },
  };
}

function adaptiveTimeoutOf(tool: Tool): AdaptiveTimeout | undefined {
  if (tool.adaptiveTimeout === undefined) return undefined;
  try {
    return new AdaptiveTimeout(tool.name, tool.timeoutMs, tool.adaptiveTimeout);
  } catch (error) {
    throw new ToolDefinitionError(tool.name, (error as Error).message);
  }
}
