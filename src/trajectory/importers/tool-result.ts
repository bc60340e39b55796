/**
 * Failures in logged tool results, as the importers use them. The reading itself is the evidence
 * extractor (`src/trajectory/evidence/`); this file turns a reading into a step's response and
 * failure evidence.
 */
import type { FailureEvidence, TrajectoryStep } from '../../core/trajectory-types.js';
import { readResult, type ResultFailure, type ResultReading } from '../evidence/read-result.js';

export type { ResultFailure, ResultReading } from '../evidence/read-result.js';
export { mayShowFailure, readBody, readResult } from '../evidence/read-result.js';

/** A step's response as far as its failure tells it: HTTP status, error code and message. */
export function failureResponse(failure: ResultFailure | null): TrajectoryStep['response'] {
  const response: TrajectoryStep['response'] = {};
  if (failure === null) return response;
  if (failure.status !== undefined) response.status_code = failure.status;
  response.error_code = failure.code;
  response.message = failure.message;
  return response;
}

/** What a step keeps of a reading: the failure's evidence, or a success's doubts; undefined when there are none. */
export function evidenceOfReading(reading: ResultReading): FailureEvidence | undefined {
  return reading.failure?.evidence ?? reading.doubts;
}

/** Parses JSON text, or returns the text itself. */
export function parseResultText(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * The failure a tool result shows, or null (see `readResult`, which also gives the evidence).
 * `body` is the text parsed, when the caller already has it.
 */
export function failureOfResult(text: string, options: { isError?: boolean } = {}, body?: unknown): ResultFailure | null {
  return readResult(text, options, body).failure;
}
