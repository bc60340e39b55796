/**
 * Tool-name globs for fault rules: `*` matches any run of characters (including none), `?`
 * exactly one. Tool names are `[A-Za-z0-9_.-]`, so no other character needs a meaning.
 */

/** Characters a rule's `tool` pattern may use: a tool name's, plus the two wildcards. */
export const TOOL_PATTERN = /^[A-Za-z0-9_.\-*?]{1,128}$/;

/** A predicate for `pattern`; exact names compare as strings, without building a RegExp. */
export function globMatcher(pattern: string): (name: string) => boolean {
  if (pattern === '*') return () => true;
  if (!/[*?]/.test(pattern)) return (name) => name === pattern;
  const source = pattern.replace(/[.+^${}()|[\]\\-]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  const re = new RegExp(`^${source}$`);
  return (name) => re.test(name);
}
