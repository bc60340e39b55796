/**
 * The upstream's tools as last listed, for what the proxy needs per call: whether a tool is
 * idempotent (its annotations) and whether it declares an output schema. Refetched after a
 * tools/list_changed notification, on the next call that needs it. Once the upstream is gone it
 * is also what tools/list answers with, until a restarted upstream is listed again.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * `readOnlyHint` or `idempotentHint` makes a tool safe to repeat; a tool that declares neither
 * (or has no annotations) is treated as non-idempotent, as DESIGN.md requires.
 */
export function isIdempotentTool(tool: Tool | undefined): boolean {
  const hints = tool?.annotations;
  return hints?.readOnlyHint === true || hints?.idempotentHint === true;
}

export class ToolCatalog {
  private tools = new Map<string, Tool>();
  private stale = true;
  private settled = false;
  private loading: Promise<boolean> | undefined;

  constructor(
    private readonly listAll: () => Promise<Tool[]>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Marks the list out of date (tools/list_changed). */
  invalidate(): void {
    this.stale = true;
  }

  /** The list will not change any more (the upstream is gone): keep the last one, never refetch. */
  settle(): void {
    this.settled = true;
  }

  /** The upstream is back (restarted): the list may change again, starting with a refresh. */
  resume(): void {
    this.settled = false;
    this.stale = true;
  }

  /** The tools as last listed, in the upstream's order. */
  snapshot(): Tool[] {
    return [...this.tools.values()];
  }

  /** Replaces the list with a complete one seen in passing. */
  replace(tools: readonly Tool[]): void {
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    this.stale = false;
  }

  /** The tool as last listed; undefined when the upstream does not list it (or listing failed). */
  async get(name: string): Promise<Tool | undefined> {
    if (this.stale && !this.settled) await this.refresh();
    return this.tools.get(name);
  }

  /** Lists the tools again; concurrent callers share one request. True when the server answered; never rejects. */
  refresh(): Promise<boolean> {
    this.loading ??= (async () => {
      // Cleared first: a list_changed arriving while the request is out marks the answer stale again.
      this.stale = false;
      try {
        const tools = await this.listAll();
        this.tools = new Map(tools.map((tool) => [tool.name, tool]));
        return true;
      } catch (error) {
        this.stale = true;
        this.onError(error);
        return false;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}
