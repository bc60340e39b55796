/**
 * A catalog wired to a runtime on a virtual clock that starts at the catalog's anchor, plus
 * shorthands that unwrap results, for the per-domain tool tests.
 */
import { expect } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { createRuntime, type CallError, type ExecuteResult, type Runtime } from '../runtime/runtime.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW, type ToolCatalog } from './catalog.js';

export interface Harness extends ToolCatalog {
  clock: VirtualClock;
  rt: Runtime;
  /** Runs a tool and returns its output; fails the test if the call failed. */
  ok<T = any>(tool: string, args: unknown, options?: { idempotencyKey?: string }): Promise<T>;
  /** Runs a tool and returns its error; fails the test if the call succeeded. */
  fail(tool: string, args: unknown, options?: { idempotencyKey?: string }): Promise<CallError>;
}

export function harness(options: { seed?: number; now?: number; clockStart?: number } = {}): Harness {
  const now = options.now ?? DEFAULT_CATALOG_NOW;
  const catalog = createToolCatalog({ seed: options.seed ?? 1, now });
  const clock = createVirtualClock({ startMs: options.clockStart ?? now, autoAdvance: false });
  const rt = createRuntime({ tools: catalog.tools, clock, seed: 1, retry: { maxRetries: 0 } });
  const run = (tool: string, args: unknown, opts: { idempotencyKey?: string } = {}): Promise<ExecuteResult> => rt.execute(tool, args, opts);
  return {
    ...catalog,
    clock,
    rt,
    async ok(tool, args, opts) {
      const r = await run(tool, args, opts);
      if (!r.ok) expect.fail(`${tool} failed: ${r.error.type} ${r.error.message}`);
      return r.output as any;
    },
    async fail(tool, args, opts) {
      const r = await run(tool, args, opts);
      if (r.ok) expect.fail(`${tool} succeeded: ${JSON.stringify(r.output).slice(0, 200)}`);
      return r.error;
    },
  };
}
