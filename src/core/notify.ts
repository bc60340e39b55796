/**
 * The one way faultline calls a listener of the user's: what the listener throws goes to
 * `onError`, and what `onError` throws is dropped, so telemetry never breaks the call that
 * reported it. Each caller picks its `onError` (the runtime's `onListenerError`, a proxy's log).
 */
export function notify<T>(listener: ((value: T) => unknown) | undefined, value: T, onError: (error: unknown) => void): void {
  if (listener === undefined) return;
  try {
    listener(value);
  } catch (error) {
    reportSafely(onError, error);
  }
}

/** Hands `error` to `onError`, dropping what that throws in turn. */
export function reportSafely(onError: (error: unknown) => void, error: unknown): void {
  try {
    onError(error);
  } catch {
    // A failing error handler must not break the call either.
  }
}

/**
 * The `onError` of a listener whose API offers none: a process warning naming the listener (the
 * runtime's default for `onListenerError` too), so a broken listener is neither fatal nor silent.
 */
export function warnListenerError(where: string): (error: unknown) => void {
  return (error) => process.emitWarning(`faultline: ${where} threw: ${error instanceof Error ? error.message : String(error)}`);
}
