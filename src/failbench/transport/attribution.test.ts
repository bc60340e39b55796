// Over a real proxy on loopback, each agent call is credited with the fault its own requests met,
// even when two calls to the same tool under the same rule are in flight at once and their records
// come back in the other order: the record is matched to its call, not to the oldest decision.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { Tool } from '../../runtime/define-tool.js';
import { parseScenario } from '../scenario-loader.js';
import { createWorld } from '../world.js';
import { createWireHost } from './index.js';
import type { Wire, WireHost, WireTransport } from './wire.js';

const FOUND = '/notes/todo.txt';
const MISSING = '/notes/roadmap.md';

const SCENARIO = `
title: two reads under one rewrite
language: en
kind: single_step
taxonomy: { category: business, subtype: boundary }
dimensions: [identification, loop_avoidance]
recoverable: false
instruction: Read two files.
tools: [read_file]
faults:
  - { tool: read_file, trigger: always, fault: partial, params: { drop_fraction: 0.5 } }
oracle:
  status: [gave_up]
  diagnosis: { tool: read_file, category: business }
`;

const opened: Array<{ host: WireHost; wire: Wire }> = [];
afterEach(async () => {
  for (const { host, wire } of opened.splice(0)) {
    await wire.close();
    await host.close();
  }
});

/** A signal that can be awaited once and fired from elsewhere. */
function latch(): { fired: Promise<void>; fire: () => void } {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  return { fired, fire };
}

describe.each<WireTransport>(['http', 'mcp'])('--transport %s', (transport) => {
  it('two concurrent reads under one rewrite: the read the rewrite met gets it, the 404 it could not rewrite gets none, whatever order the records come in', async () => {
    const scenario = parseScenario(SCENARIO, 'attribution.yaml', 'files/two-reads');
    const traceId = `attribution-${transport}`;
    let wire: Wire | undefined;
    const world = createWorld(scenario, { feedback: 'raw', seed: 1, remote: (tool, args, ctx) => wire!.call(tool, args, ctx) });

    // The tool server holds the read of the existing file until the other read is recorded.
    const foundAtTool = latch();
    const release = latch();
    const index = world.catalog.tools.findIndex((t) => t.name === 'read_file');
    const read = world.catalog.tools[index]!;
    const held: Tool = {
      ...read,
      execute: async (args, ctx) => {
        if ((args as { path?: unknown }).path === FOUND) {
          foundAtTool.fire();
          await release.fired;
        }
        return read.execute(args, ctx);
      },
    };
    world.catalog.tools[index] = held;

    const records: ToolExecutionRecord[] = [];
    const missingRecorded = latch();
    const host = createWireHost(transport);
    wire = await host.open(world, {
      traceId,
      context: {},
      sink: {
        enqueue: (record) => {
          records.push(record);
          if ((record.input_params as { path?: unknown }).path === MISSING) missingRecorded.fire();
          return undefined;
        },
      },
    });
    opened.push({ host, wire });

    const call = (path: string, stepIndex: number) => wire!.track(() => world.runtime.execute('read_file', { path }, { traceId, stepIndex }));
    const found = call(FOUND, 0);
    // The proxy has decided the rewrite for this read before it reached the tool.
    await foundAtTool.fired;
    const missing = call(MISSING, 1);
    await missingRecorded.fired;
    release.fire();
    const [f, m] = await Promise.all([found, missing]);

    // The records came in the other order than the decisions, and say what each read met.
    expect(records.map((r) => [(r.input_params as { path: string }).path, r.fault?.kind ?? null, (r.context_snapshot['fault_not_applied'] as { kind?: string } | undefined)?.kind ?? null])).toEqual([
      [MISSING, null, 'partial'],
      [FOUND, 'partial', null],
    ]);
    // Each record keeps the idempotency key of the call that sent it, which the ledger matched it by.
    const keys = records.map((r) => r.context_snapshot['idempotency_key']);
    expect(keys).toEqual([expect.any(String), expect.any(String)]);
    expect(keys[0]).not.toBe(keys[1]);
    expect(f.value.ok).toBe(true);
    expect(f.fault).toMatchObject({ kind: 'partial', rule_id: expect.any(String) });
    expect(m.value.ok).toBe(false);
    expect(m.fault).toBeNull();
  });
});
