/**
 * Records still queued in a runtime's batching recorder when the process runs out of work would be
 * lost if the caller forgot `rt.close()`: the recorder's timers do not keep the process alive, by
 * design. Node emits `beforeExit` at that point (not on `process.exit()` or a signal), and async
 * work started there runs before the process exits. So every runtime that batches into a store is
 * listed here until it is closed, and one shared listener closes those still open.
 */
const openRuntimes = new Set<() => Promise<void>>();

function closeOpenRuntimes(): void {
  for (const close of [...openRuntimes]) {
    // close() never rejects for a store failure (the recorder spools); anything else has nowhere to go now.
    close().catch(() => undefined);
  }
}

/** Lists `close` to run at `beforeExit`; returns the function that takes it off the list again. */
export function closeBeforeExit(close: () => Promise<void>): () => void {
  if (openRuntimes.size === 0) process.on('beforeExit', closeOpenRuntimes);
  openRuntimes.add(close);
  return () => {
    if (!openRuntimes.delete(close)) return;
    if (openRuntimes.size === 0) process.off('beforeExit', closeOpenRuntimes);
  };
}
