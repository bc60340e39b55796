/**
 * Tool-name globs for fault rules: `*` matches any run of characters (including none), `?`
 * exactly one; every other character is literal. Tool names are not only identifiers like
 * `get_weather`: the HTTP proxy names requests `GET /orders/:id`, and MCP servers and configured
 * routes may use spaces or punctuation, so a pattern may hold any printable character.
 */

/**
 * What a rule's `tool` pattern may be: 1-256 characters, none of them a control character, not
 * starting or ending with whitespace (a stray space would make the rule match nothing).
 */
export const TOOL_PATTERN = /^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]{0,254}[^\s\x00-\x1f\x7f])?$/;

/** A predicate for `pattern`; exact names compare as strings, without building a RegExp. */
export function globMatcher(pattern: string): (name: string) => boolean {
  if (pattern === '*') return () => true;
  if (!/[*?]/.test(pattern)) return (name) => name === pattern;
  const source = pattern.replace(/[.+^${}()|[\]\\/-]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  const re = new RegExp(`^${source}$`, 's');
  return (name) => re.test(name);
}
