/**
 * The LLM judge's verdict cache: one JSON line per verdict, appended as verdicts arrive, read
 * back whole on open. Keyed by a hash of everything the verdict depends on (model, prompt
 * version, intent, arguments, output), so re-annotating asks the model only about what changed.
 * A file beside the store rather than a table: it needs no schema migration, survives a store
 * rebuild, and can be shared or deleted on its own.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { readInputTextSync } from '../../io/read-input-file.js';
import { canonicalJson } from '../../core/params-hash.js';
import { JUDGE_PROMPT_VERSION, parseVerdict, type JudgeQuestion, type Verdict } from './llm-verdict.js';

export { DEFAULT_JUDGE_CACHE_PATH } from './judged-annotation.js';

export interface JudgeCache {
  get(key: string): Verdict | undefined;
  put(key: string, verdict: Verdict): void;
  readonly size: number;
}

interface CacheLine {
  key: string;
  model: string;
  prompt_version: number;
  verdict: Verdict;
  cached_at: string;
}

/** The cache key of a question put to a model. */
export function judgeCacheKey(model: string, question: JudgeQuestion): string {
  const text = canonicalJson([model, JUDGE_PROMPT_VERSION, question.intent, question.tool, question.params, question.output, question.started_at]);
  return createHash('sha256').update(text).digest('hex');
}

/** A cache held in memory only (tests, or `--judge-cache` off). */
export function memoryJudgeCache(): JudgeCache {
  const entries = new Map<string, Verdict>();
  return {
    get: (key) => entries.get(key),
    put: (key, verdict) => void entries.set(key, verdict),
    get size() {
      return entries.size;
    },
  };
}

/**
 * Opens (or starts) the cache file at `path`. Lines that do not parse or hold no valid verdict
 * (a write cut short) are ignored; the last line for a key wins.
 * @throws ConfigError with one line when `path` is there but cannot be read (a directory, say).
 */
export function fileJudgeCache(path: string, model: string): JudgeCache {
  const entries = new Map<string, Verdict>();
  if (existsSync(path)) {
    // A new cache may be empty, and a write cut short may end mid-character: both read, as the
    // lines they spoil are skipped below. A directory, a FIFO or an unreadable file is one line.
    const read = readInputTextSync(path, { allowEmpty: true, utf8: 'replace' });
    if (!read.ok) throw new ConfigError(`cannot read the judge cache ${path}: ${read.reason}`, 'judgeCache', { cause: read.cause });
    for (const line of read.value.split('\n')) {
      if (line.trim() === '') continue;
      let parsed: Partial<CacheLine>;
      try {
        parsed = JSON.parse(line) as Partial<CacheLine>;
      } catch {
        continue;
      }
      if (typeof parsed.key !== 'string') continue;
      const verdict = parseVerdict(JSON.stringify(parsed.verdict ?? null));
      if (verdict.ok) entries.set(parsed.key, verdict.verdict);
    }
  }
  let madeDirectory = false;
  return {
    get: (key) => entries.get(key),
    put(key, verdict) {
      entries.set(key, verdict);
      if (!madeDirectory) {
        mkdirSync(dirname(path), { recursive: true });
        madeDirectory = true;
      }
      const line: CacheLine = { key, model, prompt_version: JUDGE_PROMPT_VERSION, verdict, cached_at: new Date().toISOString() };
      // Synchronous append: a verdict paid for is on disk before the next request goes out.
      appendFileSync(path, `${JSON.stringify(line)}\n`);
    },
    get size() {
      return entries.size;
    },
  };
}
