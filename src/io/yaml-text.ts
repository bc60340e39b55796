/**
 * The one way faultline reads YAML config text (fault plans, proxy routes, FailBench scenarios,
 * alert configs): duplicate keys refused, errors placed by line and column, aliases capped so that
 * a "billion laughs" document is refused instead of expanded, and nesting capped so that a
 * document nested thousands deep is refused in one line instead of overflowing the stack (the
 * parser, and every recursive walk of the value after it, recurse once per level). JSON config
 * text goes through {@link parseJsonText} for the same cap. Each loader turns a problem into its
 * own error.
 */
import { LineCounter, parseDocument, type Document } from 'yaml';

/** The parsed value, or what is wrong with the text (one line, without the file name). */
export type YamlText = { ok: true; value: unknown } | { ok: false; problem: string; cause: unknown };

/** Deeper values are refused. No config faultline reads nests anywhere near it. */
export const MAX_CONFIG_DEPTH = 100;

const TOO_DEEP = `nested more than ${MAX_CONFIG_DEPTH} levels deep`;

/** Whether `value` nests deeper than `max` levels (walked without recursion). */
function exceedsDepth(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

export function parseYamlText(text: string): YamlText {
  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  } catch (error) {
    // The parser recurses once per level of nesting: a deep enough document overflows it.
    if (isStackOverflow(error)) return { ok: false, problem: `invalid YAML: ${TOO_DEEP}`, cause: error };
    return { ok: false, problem: `invalid YAML: ${error instanceof Error ? error.message : String(error)}`, cause: error };
  }
  const error = doc.errors[0];
  if (error !== undefined) {
    const { line, col } = lines.linePos(error.pos[0]);
    return { ok: false, problem: `invalid YAML at line ${line}, column ${col}: ${error.message}`, cause: error };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    if (isStackOverflow(error)) return { ok: false, problem: `invalid YAML: ${TOO_DEEP}`, cause: error };
    // An alias bomb is refused here, when the aliases are expanded, not by the parser.
    return { ok: false, problem: `invalid YAML: ${(error as Error).message}`, cause: error };
  }
  if (exceedsDepth(value, MAX_CONFIG_DEPTH)) return { ok: false, problem: `invalid YAML: ${TOO_DEEP}`, cause: undefined };
  return { ok: true, value };
}

/** JSON config text, with the same depth cap (JSON.parse itself takes any depth; what walks the value after it does not). */
export function parseJsonText(text: string): YamlText {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `invalid JSON: ${(error as Error).message}`, cause: error };
  }
  if (exceedsDepth(value, MAX_CONFIG_DEPTH)) return { ok: false, problem: `invalid JSON: ${TOO_DEEP}`, cause: undefined };
  return { ok: true, value };
}
