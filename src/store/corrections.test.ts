import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/params-hash.js';
import type { CorrectionRecovery } from '../core/record-types.js';
import { recoveryKey } from './corrections.js';

describe('recoveryKey', () => {
  // The SQL adapters store this key: it must stay what canonicalJson of the key object gives.
  const reference = (recovery: CorrectionRecovery): string =>
    canonicalJson({
      action: recovery.action,
      params_delta: recovery.params_delta ?? null,
      tool: recovery.tool ?? null,
      wait_s: recovery.wait_ms === undefined ? null : Math.round(recovery.wait_ms / 1000),
    });

  const recoveries: CorrectionRecovery[] = [
    { action: 'retry' },
    { action: 'retry', note: 'notes are not part of the key' },
    { action: 'wait_and_retry', wait_ms: 2049 },
    { action: 'wait_and_retry', wait_ms: Number.NaN },
    { action: 'switch_tool', tool: 'search_docs "v2"' },
    { action: 'retry_with_fixed_params', params_delta: { z: 1, a: { y: [3, { b: null, a: 'é\n' }], x: true } } },
    { action: 'retry_with_fixed_params', params_delta: {} },
    { action: 'retry_with_fixed_params', params_delta: { removed: null, skipped: undefined } },
  ];

  it('is canonical JSON of action, params_delta, tool and the wait in whole seconds', () => {
    for (const recovery of recoveries) expect(recoveryKey({ recovery })).toBe(reference(recovery));
    expect(recoveryKey({ recovery: { action: 'wait_and_retry', wait_ms: 2049 } })).toBe('{"action":"wait_and_retry","params_delta":null,"tool":null,"wait_s":2}');
  });

  it('ignores key order and the note, and tells different deltas apart', () => {
    const a = recoveryKey({ recovery: { action: 'retry_with_fixed_params', params_delta: { a: 1, b: { c: 2, d: 3 } } } });
    const b = recoveryKey({ recovery: { action: 'retry_with_fixed_params', params_delta: { b: { d: 3, c: 2 }, a: 1 }, note: 'x' } });
    expect(a).toBe(b);
    expect(recoveryKey({ recovery: { action: 'retry_with_fixed_params', params_delta: { a: 2 } } })).not.toBe(a);
  });
});
