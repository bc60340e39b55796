import { describe, expect, it } from 'vitest';
import { MAX_CONFIG_DEPTH, parseJsonText, parseYamlText } from './yaml-text.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parseYamlText / parseJsonText: nesting', () => {
  it('refuses YAML nested 100 000 levels deep in one line, flow or block, instead of overflowing the stack', () => {
    for (const text of [`rules: ${nested(100_000)}`, `${'- '.repeat(100_000)}x`, `a: ${'{a: '.repeat(50_000)}1${'}'.repeat(50_000)}`]) {
      expect(parseYamlText(text)).toMatchObject({ ok: false, problem: `invalid YAML: nested more than ${MAX_CONFIG_DEPTH} levels deep` });
    }
  });

  it('refuses what parses but nests past the cap (JSON.parse takes any depth)', () => {
    expect(parseYamlText(nested(MAX_CONFIG_DEPTH + 1))).toMatchObject({ ok: false, problem: 'invalid YAML: nested more than 100 levels deep' });
    expect(parseJsonText(nested(100_000))).toMatchObject({ ok: false, problem: 'invalid JSON: nested more than 100 levels deep' });
  });

  it('takes nesting up to the cap', () => {
    expect(parseYamlText(nested(MAX_CONFIG_DEPTH)).ok).toBe(true);
    expect(parseJsonText(`{"a": ${nested(MAX_CONFIG_DEPTH - 1)}}`).ok).toBe(true);
  });
});
