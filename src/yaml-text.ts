/**
 * The one way faultline reads YAML config text (fault plans, proxy routes, FailBench scenarios):
 * duplicate keys refused, errors placed by line and column, and aliases capped so that a "billion
 * laughs" document is refused instead of expanded. Each loader turns a problem into its own error.
 */
import { LineCounter, parseDocument } from 'yaml';

/** The parsed value, or what is wrong with the text (one line, without the file name). */
export type YamlText = { ok: true; value: unknown } | { ok: false; problem: string; cause: unknown };

export function parseYamlText(text: string): YamlText {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const { line, col } = lines.linePos(error.pos[0]);
    return { ok: false, problem: `invalid YAML at line ${line}, column ${col}: ${error.message}`, cause: error };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (error) {
    // An alias bomb is refused here, when the aliases are expanded, not by the parser.
    return { ok: false, problem: `invalid YAML: ${(error as Error).message}`, cause: error };
  }
}
