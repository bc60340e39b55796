/**
 * Step indexes per trace: each call made with a trace id gets the next one. Shared by the
 * runtime and the HTTP fault proxy, so a trace's steps count alike in process and on the wire.
 */

/** Traces whose next step is remembered; past this the least recently used is forgotten, so a long-lived process stays bounded. */
const MAX_TRACKED_TRACES = 10_000;

export class TraceSteps {
  readonly #next = new Map<string, number>();
  constructor(private readonly maxTraces = MAX_TRACKED_TRACES) {}

  /** The step this call takes in its trace (0 for the first). */
  take(traceId: string): number {
    const steps = this.#next;
    const step = steps.get(traceId) ?? 0;
    // Re-inserted so that the Map's order is by last use: a trace still running is not the one forgotten.
    if (step !== 0) steps.delete(traceId);
    else if (steps.size >= this.maxTraces) {
      const oldest = steps.keys().next().value;
      if (oldest !== undefined) steps.delete(oldest);
    }
    steps.set(traceId, step + 1);
    return step;
  }
}
