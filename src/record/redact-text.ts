/**
 * Redaction of one string (DESIGN.md, "Redaction"): the pre-filter's flags decide which of key
 * pairs, Secret manifests, encoded pairs, value rules and encoded query values run; JSON text with
 * a secret is redacted value by value.
 */
import { F_CLI, F_KEY, F_PROVIDER_WORD, REDACTED } from './redact-rules.js';
import { MIN_SCAN_LENGTH, scan } from './redact-prefilter.js';
import { K8S_SECRET_KIND, redactSecretData } from './redact-secret-manifest.js';
import { looksLikeJson, NOT_JSON, parseJson } from './redact-json.js';
import { ValueWalker, type StringRedaction } from './redact-walker.js';
import type { KeyNames } from './redact-key-names.js';
import type { KeyValueText } from './redact-key-values.js';
import type { ValueRules } from './redact-value-rules.js';

/** A query parameter whose value holds percent escapes (see redactEncodedQuery). */
const ENCODED_QUERY_VALUE = /([?&;][A-Za-z0-9_.~[\]-]{1,64}=)([^&#\s"<>\\]*%[0-9A-Fa-f]{2}[^&#\s"<>\\]*)/g;
const ENCODED_MASK = /%5BREDACTED%5D/g;

export class TextRedactor implements StringRedaction {
  readonly walker: ValueWalker;

  constructor(
    private readonly keys: KeyNames,
    private readonly rules: ValueRules,
    private readonly pairs: KeyValueText,
    private readonly maxDepth: number,
  ) {
    this.walker = new ValueWalker(keys, this, maxDepth);
  }

  redactString(s: string, depth: number): string {
    let flags = 0;
    if (s.length >= MIN_SCAN_LENGTH) {
      flags = scan(s, this.keys.trigrams);
      if (this.keys.keyGateAlways && (flags & F_KEY) === 0 && (s.includes(':') || s.includes('=') || s.includes('\uff1a'))) {
        flags |= F_KEY;
      }
    }
    if (flags === 0 && !this.rules.hasUserRules) return s;
    const scanned = flags;
    let triedJson = false;
    const keyFlagged = (flags & F_KEY) !== 0;
    if (keyFlagged) {
      if (!this.pairs.hasSecretKey(s)) {
        flags &= ~F_KEY;
      } else if (looksLikeJson(s)) {
        triedJson = true;
        const redacted = this.redactJson(s, depth);
        if (redacted !== undefined) return redacted;
      }
    }
    // Command lines and provider-named secrets are read with their quotes, which JSON escapes:
    // JSON text holding one is redacted value by value.
    if (!triedJson && (flags & (F_CLI | F_PROVIDER_WORD)) !== 0 && looksLikeJson(s)) {
      triedJson = true;
      const redacted = this.redactJson(s, depth);
      if (redacted !== undefined) return redacted;
    }
    let out = s;
    // Key/value pairs first, so a bare value is cut at its real end rather than at the `]` of a
    // mask a value rule left inside it.
    if ((flags & F_KEY) !== 0) out = this.pairs.redactKeyValues(out);
    if ((flags & F_KEY) !== 0 && out.includes('(')) out = this.pairs.redactCallPairs(out);
    if ((flags & F_KEY) !== 0 && out.includes('kind') && K8S_SECRET_KIND.test(out)) out = redactSecretData(out);
    if (keyFlagged && (out.includes('%3D') || out.includes('%3d') || out.includes('%253'))) out = this.pairs.redactEncodedPairs(out);
    out = this.rules.apply(out, flags);
    if (scanned !== 0 && depth < this.maxDepth && out.includes('%')) out = this.redactEncodedQuery(out, depth);
    // Masks written into JSON text can turn a number into a bare word; when the text parses, redo
    // it value by value so it stays JSON. Keep the textual result if that finds nothing.
    if (out !== s && !triedJson && looksLikeJson(s)) {
      const redacted = this.redactJson(s, depth);
      if (redacted !== undefined && redacted !== s) return redacted;
    }
    return out;
  }

  /**
   * Percent-encoded query values (`?q=awsToken%20%3A%3D%20%22…%22`, `&data=%7B%22password%22…`)
   * redacted as the text they decode to, then encoded again: encoded, a value hides the quotes,
   * `=` and word boundaries every rule needs.
   */
  private redactEncodedQuery(s: string, depth: number): string {
    return s.replace(ENCODED_QUERY_VALUE, (match: string, name: string, value: string) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        return match;
      }
      if (decoded === value) return match;
      const redacted = this.redactString(decoded, depth + 1);
      return redacted === decoded ? match : name + encodeURIComponent(redacted).replace(ENCODED_MASK, REDACTED);
    });
  }

  /** The JSON text redacted value by value and re-serialized; undefined if it does not parse. */
  private redactJson(s: string, depth: number): string | undefined {
    const parsed = parseJson(s);
    if (parsed === NOT_JSON) return undefined;
    const redacted = this.walker.walk(parsed, depth);
    return redacted === parsed ? s : JSON.stringify(redacted);
  }
}
