/**
 * A tagged template that escapes every value it interpolates, so a recorded string cannot
 * become markup by being forgotten: `html\`<td>${record.tool_name}</td>\`` escapes the name, and
 * only fragments built by `html` itself pass through as markup. Written here because it is the
 * dozen lines around the shared {@link escapeHtml}; template libraries (lit-html and the like)
 * render in the browser, and this page is rendered on the server.
 */
import { escapeHtml } from '../../core/escape-html.js';

const SAFE = Symbol('faultline.safeHtml');

/** Markup produced by {@link html}: interpolated as is. */
export interface SafeHtml {
  readonly [SAFE]: true;
  readonly text: string;
}

/** What may be interpolated: text and numbers (escaped), markup from `html`, lists of either; null and undefined render nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && (value as { [SAFE]?: unknown })[SAFE] === true;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return '';
  if (isSafe(value)) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += render(values[i] as HtmlValue) + strings[i + 1]!;
  return { [SAFE]: true, text };
}

/** Markup this module's callers wrote themselves (constant CSS, an SVG path built from numbers). Never recorded data. */
export function trustedHtml(text: string): SafeHtml {
  return { [SAFE]: true, text };
}
