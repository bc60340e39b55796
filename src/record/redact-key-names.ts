/**
 * Key-name classification (DESIGN.md, "Redaction"): whether a value under a key is secret, by the
 * built-in names of redact-rules.ts and the caller's `keys` and `allowKeys`, memoised per key.
 */
import { F_KEY, isBuiltinSecretKey, normalizeKey } from './redact-rules.js';
import { BASE_TRIGRAMS, MIN_SCAN_LENGTH, scan, trigramIndex } from './redact-prefilter.js';
import type { ValueRules } from './redact-value-rules.js';

/** Key classifications are memoised; a runaway set of distinct keys just starts the memo over. */
const KEY_CACHE_LIMIT = 4096;

export class KeyNames {
  /** The pre-filter's table, with the trigrams of the caller's key names marked F_KEY. */
  readonly trigrams: Uint16Array;
  /** Whether some secret key cannot be spotted by trigrams, so any `:` or `=` must be looked at. */
  readonly keyGateAlways: boolean;
  private readonly allowKeys: ReadonlySet<string>;
  private readonly extraKeys = new Set<string>();
  private readonly extraKeyPatterns: RegExp[] = [];
  /**
   * Per key name: true when its value is secret; false when the name is ordinary; a string when
   * the name itself holds something value rules mask (`{"ann@example.com": …}`), to use instead.
   */
  private readonly cache = new Map<string, boolean | string>();

  constructor(
    keys: readonly (string | RegExp)[],
    allowKeys: readonly string[],
    private readonly rules: ValueRules,
  ) {
    this.allowKeys = new Set(allowKeys.map(normalizeKey));
    let trigrams = BASE_TRIGRAMS;
    let keyGateAlways = false;
    for (const key of keys) {
      if (typeof key !== 'string') {
        this.extraKeyPatterns.push(new RegExp(key.source, key.flags.replace(/[gyi]/g, '') + 'i'));
        keyGateAlways = true;
        continue;
      }
      this.extraKeys.add(normalizeKey(key));
      if (trigrams === BASE_TRIGRAMS) trigrams = BASE_TRIGRAMS.slice();
      // Every trigram of both spellings (`-` and `_` are one letter), so the key is seen as
      // `x_tenant_key`, `X-Tenant-Key` or `xTenantKey`. A name with no trigram inside the alphabet
      // (short, or in another script) falls back to looking at every `:` and `=`.
      let marked = 0;
      for (const form of [normalizeKey(key), key.toLowerCase()]) {
        for (let i = 0; i + 3 <= form.length; i++) {
          const index = trigramIndex(form, i);
          if (index < 0) continue;
          trigrams[index]! |= F_KEY;
          marked++;
        }
      }
      if (marked === 0) keyGateAlways = true;
    }
    this.trigrams = trigrams;
    this.keyGateAlways = keyGateAlways;
  }

  /** Whether a value under `key` is replaced whole; a function field, so it can be handed on. */
  readonly isSecret = (key: string): boolean => this.info(key) === true;

  /** See {@link KeyNames.cache}. */
  info(key: string): boolean | string {
    let info = this.cache.get(key);
    if (info === undefined) {
      info = this.classify(key);
      if (!info) {
        const flags = key.length >= MIN_SCAN_LENGTH ? scan(key, this.trigrams) & ~F_KEY : 0;
        const masked = this.rules.apply(key, flags);
        if (masked !== key) info = masked;
      }
      if (this.cache.size >= KEY_CACHE_LIMIT) this.cache.clear();
      this.cache.set(key, info);
    }
    return info;
  }

  private classify(key: string): boolean {
    const normalized = normalizeKey(key);
    if (this.allowKeys.has(normalized)) return false;
    if (this.extraKeys.has(normalized)) return true;
    for (const pattern of this.extraKeyPatterns) if (pattern.test(key)) return true;
    return isBuiltinSecretKey(key, normalized);
  }
}
