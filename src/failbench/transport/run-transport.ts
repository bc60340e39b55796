/**
 * How one run reaches its tools, as a strategy the runner calls without asking which transport it
 * is: in process (the world's runtime runs the tools and knows each call's fault), or over a wire
 * (a fault proxy runs them and records each request; the ledger knows the faults).
 */
import type { RecordSink } from '../../core/record-sink.js';
import type { InjectedFault } from '../../core/record-types.js';
import { ConfigError } from '../../core/errors.js';
import type { ExecuteResult } from '../../runtime/runtime.js';
import type { ScenarioWorld, WorldOptions } from '../world.js';
import { createWireHost } from './index.js';
import type { Wire, WireHost, WireTransport } from './wire.js';

/**
 * How agents reach the tools: in process, over HTTP through the HTTP fault proxy in front of the
 * mock tool server, or over MCP through the MCP fault proxy.
 */
export type Transport = 'inprocess' | WireTransport;
export const TRANSPORTS: readonly Transport[] = ['inprocess', 'http', 'mcp'];

/** What a run's world is built with and connected by. */
export interface RunTransport {
  readonly name: Transport;
  /** The world's sink, context and remote for this transport. */
  worldOptions(context: Record<string, unknown>, sink: RecordSink | undefined): Pick<WorldOptions, 'sink' | 'context' | 'remote'>;
  /** Connects the built world (a wire's proxy); on failure, what it opened is closed before it throws. */
  connect(world: ScenarioWorld, traceId: string, context: Record<string, unknown>, sink: RecordSink | undefined): Promise<void>;
  /** Runs one call; `fault` is the first injected fault it met (ground truth). */
  track(run: () => Promise<ExecuteResult>): Promise<{ value: ExecuteResult; fault: InjectedFault | null }>;
  /** Ends the run's connection once what was in flight is recorded. */
  close(): Promise<void>;
}

export function checkedTransport(transport: Transport | undefined): Transport {
  const t = transport ?? 'inprocess';
  if (!TRANSPORTS.includes(t)) throw new ConfigError(`transport ${JSON.stringify(t)} is not one of ${TRANSPORTS.join(', ')}`, 'transport');
  return t;
}

const IN_PROCESS: RunTransport = {
  name: 'inprocess',
  worldOptions: (context, sink) => ({ context, ...(sink !== undefined ? { sink: { enqueue: (record) => sink.enqueue(record) } } : {}) }),
  connect: async () => undefined,
  track: (run) => run().then((value) => ({ value, fault: value.record.fault ?? value.fallbackFrom?.record.fault ?? null })),
  close: async () => undefined,
};

/** Over a wire: through `wires` (a suite's shared servers), or servers of the run's own. */
function wireTransport(transport: WireTransport, shared: WireHost | undefined): RunTransport {
  let own: WireHost | undefined;
  let wire: Wire | undefined;
  return {
    name: transport,
    // Over a wire the proxy records every request; the runtime records only the calls it refused
    // before any request went out (invalid arguments, an unknown tool, an open circuit).
    worldOptions: (context, sink) => ({
      ...(sink !== undefined ? { sink: { enqueue: (record) => (record.attempts.length === 0 ? sink.enqueue(record) : undefined) } } : {}),
      context: { ...context, transport },
      remote: (tool, args, ctx) => wire!.call(tool, args, ctx),
    }),
    async connect(world, traceId, context, sink) {
      if (shared === undefined) own = createWireHost(transport);
      const wires = shared ?? own!;
      try {
        wire = await wires.open(world, { traceId, context: { ...context, transport }, ...(sink !== undefined ? { sink } : {}) });
      } catch (error) {
        await own?.close();
        throw error;
      }
    },
    // The proxy decided the faults: the ledger knows which of them this call's requests met.
    track: (run) => wire!.track(run),
    async close() {
      await wire?.close();
      await own?.close();
    },
  };
}

/**
 * The run's transport. `wires`, when given, must serve the same transport.
 * @throws ConfigError for an unknown transport or servers of another one.
 */
export function runTransport(transport: Transport | undefined, wires: WireHost | undefined): RunTransport {
  const name = checkedTransport(transport);
  if (wires !== undefined && wires.transport !== name) {
    throw new ConfigError(`the run asks for transport ${name} but was given ${wires.transport} servers`, 'transport');
  }
  return name === 'inprocess' ? IN_PROCESS : wireTransport(name, wires);
}
