/**
 * Measures the record redaction path against the secret corpus in corpora/secrets/: each sample
 * goes through a real runtime in three positions, and a true positive leaks when any of its secret
 * substrings survives in the record, a false positive counts when the record differs from the one
 * the same call gives with redaction off.
 *
 * - text: the sample is the message of the error a tool throws (error_message);
 * - json: the tool returns JSON text with the sample as a string value (raw_output);
 * - url: the tool's error quotes a request URL with the sample percent-encoded as a query value.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import type { RedactOptions } from './redact.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

export interface CorpusSample {
  rule: string;
  kind: 'tp' | 'fp';
  sample: string;
  /** True positives: the substrings that must not survive. */
  secrets?: string[];
  /** False positives of one gitleaks rule that other rules of the set report (see the corpus README). */
  reported_by?: string[];
  source: string;
}

export const POSITIONS = ['text', 'json', 'url'] as const;
export type Position = (typeof POSITIONS)[number];

const CORPUS_DIR = fileURLToPath(new URL('../../corpora/secrets/', import.meta.url));

export function loadCorpus(): CorpusSample[] {
  const samples: CorpusSample[] = [];
  for (const file of readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(CORPUS_DIR + file, 'utf8').split('\n')) {
      if (line.trim() !== '') samples.push(JSON.parse(line) as CorpusSample);
    }
  }
  return samples;
}

/** Whether a sample comes from secretlint's snapshot tests (corpora/secrets/secretlint.jsonl). */
export function isSecretlint(sample: CorpusSample): boolean {
  return sample.source.startsWith('secretlint@');
}

/**
 * The held-out slice: a fifth of the rules, fixed by a seeded hash of the rule id before any
 * tuning, so rates on it say how the redactor does on formats it was not tuned on.
 */
export function isHeldOut(rule: string): boolean {
  let h = 0x811c9dc5;
  for (const c of `faultline-redaction-holdout:${rule}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h % 5 === 0;
}

export interface PositionRates {
  tp: number;
  leaked: number;
  fp: number;
  changed: number;
  /** False positives that no other rule of their set reports, and how many of those changed. */
  fpAlone: number;
  changedAlone: number;
  /**
   * False positives whose text is not also a true positive of the corpus (gitleaks tests some
   * texts as a secret of one rule and as a false positive of another, or of the same rule on
   * another file type), and how many of those changed: text alone cannot get both right.
   */
  fpDistinct: number;
  changedDistinct: number;
  leaks: { rule: string; sample: string }[];
  changes: { rule: string; sample: string; got: string }[];
}

export type CorpusRates = Record<Position, PositionRates>;

const URL_PREFIX = 'GET https://api.example.com/v1/search?q=';
const URL_SUFFIX = '&page=2 failed: HTTP 502';

function runtimeFor(redact: RedactOptions | false): { rt: Runtime; last: () => ToolExecutionRecord } {
  let last: ToolExecutionRecord | undefined;
  const input = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } as const;
  const rt = createRuntime({
    tools: [
      defineTool({ name: 'throws', description: 'throws its text', input, execute: (args: { text: string }) => Promise.reject(new Error(args.text)) }),
      defineTool({ name: 'returns', description: 'returns its text', input, execute: async (args: { text: string }) => args.text }),
    ],
    redact,
    maxOutputChars: 10_000_000,
    correctionMemory: false,
    retry: { maxRetries: 0 },
    breaker: { failureThreshold: Number.MAX_SAFE_INTEGER },
    onRecord: (r) => {
      last = r;
    },
  });
  return { rt, last: () => last! };
}

/** The field of the record where the position puts the sample. */
async function place(rt: Runtime, position: Position, sample: string): Promise<void> {
  if (position === 'text') await rt.execute('throws', { text: sample });
  else if (position === 'json') await rt.execute('returns', { text: JSON.stringify({ id: 7, note: sample }) });
  else await rt.execute('throws', { text: `${URL_PREFIX}${encodeURIComponent(sample)}${URL_SUFFIX}` });
}

function field(record: ToolExecutionRecord, position: Position): string {
  return (position === 'json' ? record.raw_output : record.error_message) ?? '';
}

/** Every way the secret may be written in the position's field. */
function spellings(secret: string, position: Position): string[] {
  if (position === 'json') return [secret, JSON.stringify(secret).slice(1, -1)];
  if (position === 'url') return [secret, encodeURIComponent(secret)];
  return [secret];
}

/**
 * `trueTexts`: the texts of every true positive in the corpus (not only in `samples`), for
 * {@link PositionRates.fpDistinct}.
 */
export async function measureCorpus(samples: readonly CorpusSample[], trueTexts: ReadonlySet<string> = new Set(), redact: RedactOptions = {}): Promise<CorpusRates> {
  const on = runtimeFor(redact);
  const off = runtimeFor(false);
  const rates = Object.fromEntries(
    POSITIONS.map((p) => [p, { tp: 0, leaked: 0, fp: 0, changed: 0, fpAlone: 0, changedAlone: 0, fpDistinct: 0, changedDistinct: 0, leaks: [], changes: [] }]),
  ) as unknown as CorpusRates;
  for (const s of samples) {
    for (const position of POSITIONS) {
      await place(on.rt, position, s.sample);
      const got = field(on.last(), position);
      const r = rates[position];
      if (s.kind === 'tp') {
        r.tp++;
        const leaked = (s.secrets ?? []).some((secret) => spellings(secret, position).some((spelled) => got.includes(spelled)));
        if (leaked) {
          r.leaked++;
          r.leaks.push({ rule: s.rule, sample: s.sample });
        }
      } else {
        r.fp++;
        const alone = s.reported_by === undefined;
        const distinct = !trueTexts.has(s.sample);
        if (alone) r.fpAlone++;
        if (distinct) r.fpDistinct++;
        await place(off.rt, position, s.sample);
        const plain = field(off.last(), position);
        if (got !== plain) {
          r.changed++;
          if (alone) r.changedAlone++;
          if (distinct) r.changedDistinct++;
          r.changes.push({ rule: s.rule, sample: s.sample, got });
        }
      }
    }
  }
  await on.rt.close();
  await off.rt.close();
  return rates;
}

const percent = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);

/** One line per position: leaked true positives and changed false positives. */
export function describeRates(name: string, rates: CorpusRates): string {
  return POSITIONS.map((p) => {
    const r = rates[p];
    return (
      `${name} ${p}: ${percent(r.leaked, r.tp)} of ${r.tp} true positives leak; ${percent(r.changed, r.fp)} of ${r.fp} false positives changed ` +
      `(${percent(r.changedAlone, r.fpAlone)} of the ${r.fpAlone} no other rule reports, ${percent(r.changedDistinct, r.fpDistinct)} of the ${r.fpDistinct} not also a true positive)`
    );
  }).join('\n');
}
