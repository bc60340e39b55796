/** Shared by the HTTP proxy's loopback tests. */

/** Polls `check` every 5 ms until it returns a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(check: () => T | undefined, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
