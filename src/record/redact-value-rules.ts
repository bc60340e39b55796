/**
 * Value rules (DESIGN.md, "Redaction"): the built-in secret formats of redact-rules.ts and the
 * caller's own rules, run over a string for the flags the pre-filter raised.
 */
import { BUILTIN_RULES, REDACTED, isPlaceholderToken, type RedactionRule } from './redact-rules.js';
import { foundHidden, isCollecting } from './redact-found.js';

interface RuleRunner {
  pattern: RegExp;
  replacer: (match: string) => string;
}

interface BuiltinRunner extends RuleRunner {
  needs: number;
  contains: string | undefined;
  replaceIn: ((s: string, replacer: (match: string) => string) => string) | undefined;
}

/** Rules for personal data: a match is no credential to scrub elsewhere, nor a token with filler. */
const PERSONAL_DATA_RULES = new Set(['email', 'cn-resident-id', 'payment-card', 'cn-mobile', 'fullwidth-digits', 'private-key']);

const BUILTIN_RUNNERS: readonly BuiltinRunner[] = BUILTIN_RULES.map((rule) => {
  const { validate, mask } = rule;
  const how = { pattern: rule.pattern, needs: rule.needs, contains: rule.contains, replaceIn: rule.replaceIn };
  if (PERSONAL_DATA_RULES.has(rule.id)) {
    return { ...how, replacer: validate === undefined ? mask : (match: string) => (validate(match) ? mask(match) : match) };
  }
  // textAfter reads the arguments `replace` passes, which replaceIn does not.
  if (rule.replaceIn !== undefined) throw new Error(`${rule.id}: replaceIn is for personal-data rules`);
  return {
    ...how,
    replacer: (match: string, ...rest: unknown[]) => {
      if ((validate !== undefined && !validate(match)) || isPlaceholderToken(match, textAfter(match, rest))) return match;
      const masked = mask(match);
      if (isCollecting()) foundHidden(match, masked);
      return masked;
    },
  };
});

/** The few characters after a match, from the offset and whole string `replace` passes after the groups. */
function textAfter(match: string, rest: readonly unknown[]): string {
  let i = rest.length - 1;
  if (typeof rest[i] === 'object') i--;
  const whole = rest[i];
  const offset = rest[i - 1];
  if (typeof whole !== 'string' || typeof offset !== 'number') return '';
  const end = offset + match.length;
  return end >= whole.length ? '' : whole.slice(end, end + 4);
}

function compileRule(rule: RedactionRule): RuleRunner {
  // Always a private copy, so the caller's lastIndex is never touched; sticky would stop at gaps.
  const flags = rule.pattern.flags.replace(/[gy]/g, '') + 'g';
  const pattern = new RegExp(rule.pattern.source, flags);
  const { validate, mask } = rule;
  const replacer = (match: string): string => {
    if (validate !== undefined) {
      let keep = false;
      try {
        keep = !validate(match);
      } catch {
        // A validator that breaks must not let its match through.
      }
      if (keep) return match;
    }
    if (mask === undefined) return REDACTED;
    try {
      const masked = mask(match);
      return typeof masked === 'string' ? masked : REDACTED;
    } catch {
      return REDACTED;
    }
  };
  return { pattern, replacer };
}

/** The built-in rules and the caller's, compiled once per redactor. */
export class ValueRules {
  private readonly userRules: readonly RuleRunner[];
  readonly hasUserRules: boolean;

  constructor(rules: readonly RedactionRule[]) {
    this.userRules = rules.map(compileRule);
    this.hasUserRules = this.userRules.length !== 0;
  }

  /** `s` with the built-in rules `flags` asks for applied, then the caller's rules. */
  apply(s: string, flags: number): string {
    let out = s;
    if (flags !== 0) {
      for (const rule of BUILTIN_RUNNERS) {
        if ((rule.needs & flags) === 0 || (rule.contains !== undefined && !out.includes(rule.contains))) continue;
        out = rule.replaceIn === undefined ? out.replace(rule.pattern, rule.replacer) : rule.replaceIn(out, rule.replacer);
      }
    }
    if (this.hasUserRules) for (const rule of this.userRules) out = out.replace(rule.pattern, rule.replacer);
    return out;
  }
}
