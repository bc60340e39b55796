/**
 * Model-side failures. Seed 004 insists on telling the model's channel apart from the tools'
 * channel: a 429 from the LLM endpoint says nothing about how the agent handles a 429 from a
 * tool, so model-side failures are values of their own kind and never reach the tool trace.
 */
import { FaultlineError } from '../core/errors.js';

/**
 * Why one request to the model endpoint failed.
 * - `rate_limit` (429), `server` (5xx, 409, 529 overloaded), `connection` (reset, refused, DNS),
 *   `timeout` (request deadline or 408) and `malformed` (a body that is not the wire format)
 *   are retried;
 * - `rejected` (other 4xx: bad key, unknown model, bad request) and `aborted` (the scenario's
 *   budget ran out) are not.
 */
export type ModelFailureKind = 'rate_limit' | 'server' | 'connection' | 'timeout' | 'malformed' | 'rejected' | 'aborted';

/**
 * Statuses of a rejection that every request to the endpoint would meet: the key is wrong (401),
 * has no access (403), the model or the URL does not exist (404), the URL is not the API's (405),
 * or a proxy wants credentials (407). Other 4xx (a 400 for one conversation's context length, a
 * 413, a 422) are about the request: they lose that run, not the suite.
 */
const ENDPOINT_WIDE_REJECTIONS: ReadonlySet<number> = new Set([401, 403, 404, 405, 407]);

/**
 * Whether a failure means the endpoint cannot serve any run (a `rejected` one with a status of
 * {@link ENDPOINT_WIDE_REJECTIONS}, or without a status), so a benchmark should stop at once.
 */
export function rejectsEveryRequest(failure: { kind: string; status?: number | undefined }): boolean {
  return failure.kind === 'rejected' && (failure.status === undefined || ENDPOINT_WIDE_REJECTIONS.has(failure.status));
}

/** One failed request to the model endpoint, as data. `message` is already scrubbed of secrets. */
export interface ModelFailure {
  kind: ModelFailureKind;
  message: string;
  status?: number;
  /** From `retry-after-ms` or `Retry-After`, when the endpoint sent one. */
  retryAfterMs?: number;
}

/** The outcome of one request to the model endpoint. */
export type ModelAttemptResult<T> = { ok: true; value: T } | { ok: false; failure: ModelFailure };

const MODEL_ENDPOINT_MARKER = Symbol.for('faultline.error.ModelEndpointError');

/**
 * The model endpoint could not be used: it rejected the request (bad key, unknown model) or kept
 * failing after every retry. Thrown out of `Agent.run`, so the runner records the run as lost to
 * the harness (`ScenarioResult.modelEndpointFailure`, outcome `error`): it scores no dimension
 * and counts in no rate, pass^k or error count of the agent (score.ts), and the report lists it
 * apart. `runSuite` stops the suite on one that every run would meet ({@link rejectsEveryRequest}:
 * a bad key, an unknown model), and after a few in a row of the others (see SuiteStoppedError in
 * runner.ts). The message never contains the API key.
 */
export class ModelEndpointError extends FaultlineError {
  readonly [MODEL_ENDPOINT_MARKER] = true;
  readonly kind: ModelFailureKind;
  readonly status: number | undefined;
  /** What the endpoint said (the failure's message, e.g. `HTTP 401: Incorrect API key provided: [redacted]`), scrubbed. */
  readonly detail: string;

  constructor(
    readonly provider: string,
    failure: ModelFailure,
    readonly attempts: number,
  ) {
    super(`${provider} model endpoint failed after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}: ${failure.message}`);
    this.kind = failure.kind;
    this.status = failure.status;
    this.detail = failure.message;
  }

  static override isInstance(value: unknown): value is ModelEndpointError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MODEL_ENDPOINT_MARKER] === true;
  }
}
