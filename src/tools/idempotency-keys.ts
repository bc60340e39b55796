/**
 * Idempotency keys the way payment APIs implement them: the first request with a key is
 * executed and its result remembered; a later request with the same key and the same
 * parameters gets the remembered result without executing again; the same key with different
 * parameters is the caller's mistake (422), because silently returning the old result would
 * hide it and executing would defeat the key.
 */
import { canonicalJson } from '../core/params-hash.js';
import { ParameterError } from '../runtime/tool-errors.js';
import type { ValidationIssue } from '../runtime/validate.js';

/** How long a key may be, as an argument (the tools' `idempotency_key` schema) and as the HTTP `Idempotency-Key` header. */
export const IDEMPOTENCY_KEY_MIN_LENGTH = 8;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 128;

/**
 * What is wrong with a key sent in the `Idempotency-Key` header, as the validation issue the same
 * key sent as the `idempotency_key` argument would raise; undefined for a good key.
 */
export function idempotencyHeaderIssue(key: string): ValidationIssue | undefined {
  if (key.length >= IDEMPOTENCY_KEY_MIN_LENGTH && key.length <= IDEMPOTENCY_KEY_MAX_LENGTH) return undefined;
  const short = key.length < IDEMPOTENCY_KEY_MIN_LENGTH;
  return {
    code: 'boundary_violation',
    path: 'Idempotency-Key header',
    message: `the Idempotency-Key header must be ${IDEMPOTENCY_KEY_MIN_LENGTH} to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, got ${key.length}`,
    expected: short ? { minLength: IDEMPOTENCY_KEY_MIN_LENGTH } : { maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
  };
}

interface Remembered {
  fingerprint: string;
  resultId: string;
}

export interface IdempotencyLookup {
  /** The id remembered for this key, when the request is a replay. */
  replayOf: string | undefined;
  /** Call after executing a first request, to remember its result. */
  remember(resultId: string): void;
}

export class IdempotencyKeys {
  private readonly entries = new Map<string, Remembered>();

  /**
   * Checks `key` for `toolName`. Throws ParameterError (422, `IDEMPOTENCY_KEY_REUSED`) when the
   * key was used with other parameters.
   */
  check(toolName: string, key: string, params: unknown): IdempotencyLookup {
    const scoped = `${toolName}\u0000${key}`;
    const fingerprint = canonicalJson(params);
    const existing = this.entries.get(scoped);
    if (existing !== undefined && existing.fingerprint !== fingerprint) {
      throw new ParameterError('schema_mismatch', `idempotency key "${key}" was already used with different parameters for ${toolName}; use a new key for a new request`, {
        code: 'IDEMPOTENCY_KEY_REUSED',
        status: 422,
        details: { idempotency_key: key, original_result: existing.resultId },
      });
    }
    return {
      replayOf: existing?.resultId,
      remember: (resultId) => {
        this.entries.set(scoped, { fingerprint, resultId });
      },
    };
  }

  get size(): number {
    return this.entries.size;
  }

  /** What the keys are now, for {@link restore}: a dry run remembers no key. */
  save(): ReadonlyMap<string, Remembered> {
    return new Map(this.entries);
  }

  restore(saved: ReadonlyMap<string, Remembered>): void {
    this.entries.clear();
    for (const [key, value] of saved) this.entries.set(key, value);
  }
}
