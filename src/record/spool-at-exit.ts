/**
 * Records a batching recorder still holds in memory when the process exits are lost: queued ones,
 * ones waiting for room, and batches whose write was in flight (a SQLite writer thread is
 * terminated mid-transaction, a PostgreSQL query may never be answered). `beforeExit` closes
 * forgotten runtimes (runtime/close-at-exit.ts), but `process.exit()` skips it: only the `exit`
 * event still runs, and only synchronous code. So every recorder with a spool is listed here until
 * it has closed, and one shared `exit` listener asks each to append what it holds to its spool
 * synchronously. The next recorder that claims that file (the same spool path, or any
 * process's default spool directory once this pid is gone) replays it; replays are idempotent on
 * `execution_id`, so a batch that did reach the store before the exit is not stored twice.
 *
 * Signals that kill the process (SIGKILL, or SIGTERM/SIGINT without a handler) emit no `exit`
 * event: nothing runs then, and records only in memory are lost, which the recorder bounds
 * (`maxQueue`, `maxUnsavedMs`). `mode: 'durable'` loses none.
 */
const holders = new Set<() => void>();

function spoolAll(): void {
  for (const spool of [...holders]) {
    try {
      spool();
    } catch {
      // A full disk or a removed directory now has nowhere to be reported; the other recorders still try.
    }
  }
}

/** Lists `spool` to run at `exit`; returns the function that takes it off the list again. */
export function spoolAtExit(spool: () => void): () => void {
  if (holders.size === 0) process.on('exit', spoolAll);
  holders.add(spool);
  return () => {
    if (!holders.delete(spool)) return;
    if (holders.size === 0) process.off('exit', spoolAll);
  };
}
