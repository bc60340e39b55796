import { FaultlineError } from '../core/errors.js';

const CLI_ERROR_MARKER = Symbol.for('faultline.error.CliError');

/** A user mistake on the command line (bad flag, bad file, unreachable store): one line, exit 2. */
export class CliError extends FaultlineError {
  readonly [CLI_ERROR_MARKER] = true;
  constructor(
    message: string,
    readonly exitCode: number = 2,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  static override isInstance(value: unknown): value is CliError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CLI_ERROR_MARKER] === true;
  }
}
