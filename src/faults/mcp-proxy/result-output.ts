/**
 * A tool result seen as "the output" that the plan's rewrites (partial, empty, drift, stale) and
 * malformed bodies work on, and the result rebuilt around a rewritten output.
 *
 * The output is, in order of preference: `structuredContent`; the parsed JSON of the text when the
 * content is a single text block holding JSON (how most servers return data); otherwise the
 * content array itself.
 */
import { ContentBlockSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../core/params-hash.js';

type Source = 'structured' | 'json-text' | 'content';

interface ToolOutput {
  source: Source;
  value: unknown;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function singleText(result: CallToolResult): string | undefined {
  const content = result.content;
  if (content.length !== 1) return undefined;
  const block = content[0];
  return block !== undefined && block.type === 'text' ? block.text : undefined;
}

export function toolOutput(result: CallToolResult): ToolOutput {
  if (result.structuredContent !== undefined) return { source: 'structured', value: result.structuredContent };
  const text = singleText(result);
  if (text !== undefined) {
    const parsed = parseJson(text);
    if (parsed.ok) return { source: 'json-text', value: parsed.value };
  }
  return { source: 'content', value: result.content };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Valid MCP content blocks: a rewrite that renamed `text` in a text block made something a client refuses. */
function isContentArray(value: unknown): value is CallToolResult['content'] {
  return Array.isArray(value) && value.every((block) => ContentBlockSchema.safeParse(block).success);
}

/**
 * The result with its output replaced. Text blocks that carried the old structured output as JSON
 * (the spec asks servers to add one) carry the new one, so both views tell the same story.
 * Structured content must be an object on the wire; a rewrite that yields anything else is served
 * as JSON text only.
 */
export function withOutput(result: CallToolResult, output: ToolOutput, rewritten: unknown): CallToolResult {
  const text = JSON.stringify(rewritten) ?? 'null';
  switch (output.source) {
    case 'structured': {
      const old = canonicalJson(output.value);
      let replaced = false;
      const content = result.content.map((block) => {
        if (block.type !== 'text') return block;
        const parsed = parseJson(block.text);
        if (!parsed.ok || canonicalJson(parsed.value) !== old) return block;
        replaced = true;
        return { ...block, text };
      });
      if (isPlainObject(rewritten)) return { ...result, content, structuredContent: rewritten };
      const { structuredContent: _dropped, ...rest } = result;
      return { ...rest, content: replaced ? content : [...content, { type: 'text', text }] };
    }
    case 'json-text': {
      const block = result.content[0];
      return { ...result, content: [block !== undefined && block.type === 'text' ? { ...block, text } : { type: 'text', text }] };
    }
    case 'content':
      return { ...result, content: isContentArray(rewritten) ? rewritten : [{ type: 'text', text }] };
  }
}

/**
 * A result whose body does not parse: one text block with `text` and no structured content,
 * because a client that received a broken body has no structured data either.
 */
export function malformedResult(result: CallToolResult, text: string): CallToolResult {
  const { structuredContent: _dropped, ...rest } = result;
  return { ...rest, content: [{ type: 'text', text }] };
}

/** What a malformed body is cut from: the structured output, else the text as the server sent it. */
export function rawBody(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const texts = result.content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text);
  return texts.length > 0 ? texts.join('\n') : result.content;
}
