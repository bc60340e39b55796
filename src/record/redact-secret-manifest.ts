/**
 * Kubernetes Secret manifests in YAML text (DESIGN.md, "Redaction"): every value of their `data:`
 * and `stringData:` blocks is secret, whatever its name.
 */
import { REDACTED, isPlaceholder } from './redact-rules.js';
import { found } from './redact-found.js';

/** `kind: Secret` where the text may be JSON with the manifest escaped inside a string. */
export const K8S_SECRET_HINT = /kind\\?["']?[ \t]*:[ \t]*\\?["']?secret(?![\w-])/i;
/** A Kubernetes `kind: Secret` manifest in YAML text, whose `data:` values are all secret whatever their names. */
export const K8S_SECRET_KIND = /^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?secret["']?[ \t]*\r?$/im;
const K8S_DATA_BLOCK = /^([ \t]*)["']?(?:data|stringData)["']?[ \t]*:[ \t]*\r?\n/gm;
const YAML_BLOCK_INDICATOR = /^[|>][-+0-9]*$/;
const YAML_DOCUMENT_END = /^---/gm;

/** The text a base64 value decodes to, when it is printable; else the value itself. */
function decodeBase64(value: string): string {
  if (value.length > 256 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return value;
  const decoded = Buffer.from(value, 'base64').toString('latin1').trim();
  return /^[\x20-\x7e]*$/.test(decoded) ? decoded : value;
}

/**
 * The values of a Secret manifest's `data:` and `stringData:` blocks masked: each `name: value`
 * one level in, and the lines of a block scalar (`.dockercfg: |`). Placeholders stay.
 */
export function redactSecretData(s: string): string {
  let out = '';
  let last = 0;
  const mask = (start: number, end: number, quoted: boolean): void => {
    const inner = s.slice(quoted ? start + 1 : start, quoted ? end - 1 : end);
    if (isPlaceholder(inner)) return;
    // `YmFyCg==` is `bar`: a short value that decodes to a placeholder is one.
    const decoded = decodeBase64(inner);
    if (decoded !== inner && decoded.length <= 24 && isPlaceholder(decoded)) return;
    found(inner);
    out += s.slice(last, start) + (quoted ? `${s[start]!}${REDACTED}${s[start]!}` : REDACTED);
    last = end;
  };
  K8S_DATA_BLOCK.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = K8S_DATA_BLOCK.exec(s)) !== null) {
    // Only the data of the YAML document (between `---` lines) that is the Secret.
    const docStart = s.lastIndexOf('\n---', m.index) + 1;
    YAML_DOCUMENT_END.lastIndex = m.index;
    const docEnd = YAML_DOCUMENT_END.exec(s)?.index ?? s.length;
    if (!K8S_SECRET_KIND.test(s.slice(docStart, docEnd))) continue;
    const indent = m[1]!.length;
    let entryIndent = -1;
    let at = m.index + m[0].length;
    while (at < s.length) {
      const eol = s.indexOf('\n', at);
      const lineEnd = eol === -1 ? s.length : eol;
      let lead = at;
      while (lead < lineEnd && (s.charCodeAt(lead) === 32 || s.charCodeAt(lead) === 9)) lead++;
      let end = lineEnd;
      while (end > lead && s.charCodeAt(end - 1) <= 32) end--;
      if (end === lead || s.charCodeAt(lead) === 35) {
        at = lineEnd + 1;
        continue;
      }
      if (lead - at <= indent) break;
      if (entryIndent === -1) entryIndent = lead - at;
      if (lead - at > entryIndent) {
        mask(lead, end, false);
      } else {
        const colon = s.indexOf(':', lead);
        if (colon !== -1 && colon < end) {
          let v = colon + 1;
          while (v < end && (s.charCodeAt(v) === 32 || s.charCodeAt(v) === 9)) v++;
          const first = s.charCodeAt(v);
          if (v < end && !YAML_BLOCK_INDICATOR.test(s.slice(v, end))) mask(v, end, (first === 34 || first === 39) && end - v >= 2);
        }
      }
      at = lineEnd + 1;
    }
    K8S_DATA_BLOCK.lastIndex = Math.max(K8S_DATA_BLOCK.lastIndex, at);
  }
  return last === 0 ? s : out + s.slice(last);
}
