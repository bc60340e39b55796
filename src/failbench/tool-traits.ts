/**
 * What the scorer needs to know about a catalog tool, read from its own definition: whether a
 * call changes the world and cannot be repeated safely, whether it only reads, and how long the
 * runtime waits for it. Scenario files name tools; these traits are the tool's, not the scenario's.
 */
import { createToolCatalog } from '../tools/index.js';

export interface ToolTraits {
  /** It only reads: calling it is how an agent checks the state (MCP readOnlyHint). */
  readOnly: boolean;
  /** A write that each call repeats (create_event, send_message, create_order, create_refund). */
  nonIdempotentWrite: boolean;
  /** It accepts an `idempotency_key`: re-sending with the same key is safe. */
  takesKey: boolean;
  /** The runtime's timeout for one call, ms (what a hang or a dropped answer costs). */
  timeoutMs: number;
  /**
   * For a write: the read-only tools whose answers show what it did, which is how an agent checks
   * the state before repeating it. Empty: any read counts (a tool this table does not know).
   */
  checkedBy: readonly string[];
}

/**
 * Which reads show which writes, as each write's own description tells the agent ("after a
 * timeout, call list_events before retrying"). A definition carries no link to its reads, so the
 * catalog's is written out here.
 */
const STATE_READS: Readonly<Record<string, readonly string[]>> = {
  create_event: ['list_events'],
  send_message: ['list_messages'],
  create_order: ['list_orders', 'get_order'],
  cancel_order: ['get_order', 'list_orders'],
  create_refund: ['get_payment'],
  write_file: ['read_file', 'list_files'],
};

let traits: ReadonlyMap<string, ToolTraits> | undefined;

function catalogTraits(): ReadonlyMap<string, ToolTraits> {
  if (traits !== undefined) return traits;
  // Built once per process from the definitions: the traits do not depend on seeded data.
  const catalog = createToolCatalog();
  traits = new Map(
    catalog.tools.map((tool) => [
      tool.name,
      {
        readOnly: tool.annotations?.readOnlyHint === true,
        nonIdempotentWrite: !tool.idempotent && tool.annotations?.readOnlyHint !== true,
        takesKey: tool.idempotencyKey,
        timeoutMs: tool.timeoutMs,
        checkedBy: STATE_READS[tool.name] ?? [],
      },
    ]),
  );
  return traits;
}

/** The traits of a catalog tool; a name the catalog does not have is neither a read nor a write. */
export function toolTraits(name: string): ToolTraits {
  return catalogTraits().get(name) ?? { readOnly: false, nonIdempotentWrite: false, takesKey: false, timeoutMs: 10_000, checkedBy: [] };
}

/** Whether a successful call of `read` shows the state `write` changed. */
export function readShows(read: string, write: string): boolean {
  if (!toolTraits(read).readOnly) return false;
  const checks = toolTraits(write).checkedBy;
  return checks.length === 0 || checks.includes(read);
}
