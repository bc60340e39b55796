/**
 * Typed errors. Every error faultline throws (API misuse) or asks tools to throw
 * (classified failures) derives from {@link FaultlineError}. `isInstance` checks use a
 * `Symbol.for` marker, so they keep working when two copies of the package are loaded.
 */
const BASE_MARKER = Symbol.for('faultline.error');

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

export class FaultlineError extends Error {
  readonly [BASE_MARKER] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  static isInstance(value: unknown): value is FaultlineError {
    return hasMarker(value, BASE_MARKER);
  }
}

const DEFINITION_MARKER = Symbol.for('faultline.error.ToolDefinitionError');
/** A tool definition is invalid (bad name, bad schema, bad option). Thrown by `defineTool` / `createRuntime`. */
export class ToolDefinitionError extends FaultlineError {
  readonly [DEFINITION_MARKER] = true;
  constructor(
    readonly toolName: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid tool definition "${toolName}": ${reason}`, options);
  }
  static override isInstance(value: unknown): value is ToolDefinitionError {
    return hasMarker(value, DEFINITION_MARKER);
  }
}

const DUPLICATE_MARKER = Symbol.for('faultline.error.DuplicateToolError');
/** Two tools share a name in one runtime. */
export class DuplicateToolError extends FaultlineError {
  readonly [DUPLICATE_MARKER] = true;
  constructor(readonly toolName: string) {
    super(`duplicate tool name "${toolName}"`);
  }
  static override isInstance(value: unknown): value is DuplicateToolError {
    return hasMarker(value, DUPLICATE_MARKER);
  }
}

const CONFIG_MARKER = Symbol.for('faultline.error.ConfigError');
/** A runtime, store, plan or CLI option is invalid. `field` names the offending option. */
export class ConfigError extends FaultlineError {
  readonly [CONFIG_MARKER] = true;
  constructor(
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  static override isInstance(value: unknown): value is ConfigError {
    return hasMarker(value, CONFIG_MARKER);
  }
}

const CLOSED_MARKER = Symbol.for('faultline.error.RuntimeClosedError');
/** `execute` was called after `close()`. */
export class RuntimeClosedError extends FaultlineError {
  readonly [CLOSED_MARKER] = true;
  constructor() {
    super('the runtime is closed');
  }
  static override isInstance(value: unknown): value is RuntimeClosedError {
    return hasMarker(value, CLOSED_MARKER);
  }
}
