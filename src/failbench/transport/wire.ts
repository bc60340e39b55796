/**
 * What the http and mcp transports share: per run, the tools run behind a fault proxy on the
 * loopback interface, the run's clock is gated on the requests in flight (io-gate.ts), and each
 * request is matched to the fault the proxy decided for it (fault-ledger.ts).
 */
import type { RecordSink } from '../../core/record-sink.js';
import type { InjectedFault, ToolExecutionRecord } from '../../core/record-types.js';
import type { RemoteExecute, ScenarioWorld } from '../world.js';
import type { FaultLedger } from './fault-ledger.js';
import type { IoGate } from './io-gate.js';

export type WireTransport = 'http' | 'mcp';

export interface WireOptions {
  /** The trace every record of the run goes under. */
  traceId: string;
  /** Added to every record's context_snapshot. */
  context: Record<string, unknown>;
  /** Where the proxy's records go (the suite's recorder); none: records are not kept. */
  sink?: RecordSink;
}

/** One run's connection to its tools. */
export interface Wire {
  /** The world's tools run through this ({@link WorldOptions.remote}). */
  readonly call: RemoteExecute;
  /** Runs one agent call; `fault` is the first injected fault its requests met (ground truth). */
  track<T>(fn: () => Promise<T>): Promise<{ value: T; fault: InjectedFault | null }>;
  /** Ends the run's connection once what it still had in flight is recorded (closing what only the run used). */
  close(): Promise<void>;
}

/** Opens the wires of a suite's runs; servers it shares between runs live until `close`. */
export interface WireHost {
  readonly transport: WireTransport;
  /** Connects one run's world; the run closes its wire when it ends. */
  open(world: ScenarioWorld, options: WireOptions): Promise<Wire>;
  /** Closes what the runs shared. Call after every run's wire is closed. */
  close(): Promise<void>;
}

/** A run's wire from its call function, its ledger and what closing it takes (done once). */
export function wireOf(call: RemoteExecute, ledger: FaultLedger, close: () => Promise<void>): Wire {
  let closing: Promise<void> | undefined;
  return {
    call,
    track: (fn) => ledger.track(fn),
    close: () => (closing ??= close()),
  };
}

/**
 * Sends one request as an exchange of the gate, with a ledger ticket for its fault. The request
 * must carry `idempotencyKey` where the proxy records it (see fault-ledger.ts).
 */
export async function exchange<T>(gate: IoGate, ledger: FaultLedger, toolName: string, idempotencyKey: string, send: () => Promise<T>): Promise<T> {
  const ticket = ledger.open(toolName, idempotencyKey);
  const inFlight = gate.begin();
  try {
    return await send();
  } finally {
    ticket.close();
    inFlight.settle();
  }
}

/** The proxy's record sink: every record under the run's trace, read by the ledger, and counted by the gate. */
export function recordSink(options: WireOptions, gate: IoGate, ledger: FaultLedger): { onRecord: (record: ToolExecutionRecord) => void; recorder?: RecordSink } {
  const sink = options.sink;
  return {
    onRecord: (record) => {
      ledger.recorded(record);
      gate.recorded();
    },
    ...(sink === undefined
      ? {}
      : {
          recorder: {
            enqueue: (record: ToolExecutionRecord) => sink.enqueue(record.trace_id === options.traceId ? record : { ...record, trace_id: options.traceId }),
          },
        }),
  };
}
