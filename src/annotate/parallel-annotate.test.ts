import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportInputError } from '../trajectory/import-file.js';
import { annotateFile, NO_SEMANTIC_JUDGE } from './annotate-file.js';
import { AnnotatedLines, addTally, emptyTally } from './annotated-lines.js';
import { annotateFileParallel, type AnnotationChunk, type ParallelAnnotateOptions } from './parallel-annotate.js';
import { typeScriptWorkerUrl } from '../ts-worker.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-parallel-annotate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const workerUrl = typeScriptWorkerUrl(new URL('./parallel-annotate-worker.ts', import.meta.url), join(dir, 'worker'));
const now = () => 1_774_800_000_000;

const TOOLS = ['fetch', 'search_flights', 'book_flight', 'get_weather', 'send_email'];
const ERRORS = ['{"error":"db down","status":503}', '{"error":{"message":"Too Many Requests"},"status":429,"retry_after":2}', 'Error: reservation 7 not found', '{"error":"invalid token","status":401}'];

/** Conversation `n`: a few calls, some failing (with an error that depends on n, so new failure signatures keep turning up), retried or not. */
function conversation(n: number, shape: 'openai' | 'anthropic'): unknown {
  const messages: unknown[] = [{ role: 'user', content: `Book a flight to Paris on 2026-03-${String(1 + (n % 28)).padStart(2, '0')} for order ${n % 40}` }];
  for (let c = 0; c < 1 + (n % 6); c++) {
    const tool = TOOLS[(n + c) % TOOLS.length]!;
    const args = { id: (n * 7) % 13, city: c % 2 === 0 ? 'Paris' : 'Tokyo' };
    const failed = (n + c) % 4 === 0;
    const body = failed ? ERRORS[(n * 3 + c) % ERRORS.length]!.replace('7', String(n % 97)) : `{"ok":true,"n":${n}}`;
    const id = `c${n}_${c}`;
    if (shape === 'openai') {
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }] });
      messages.push({ role: 'tool', tool_call_id: id, content: body });
    } else {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: tool, input: args }] });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, is_error: failed, content: body }] });
    }
  }
  return { id: n % 11 === 0 ? undefined : `conv-${n}`, messages, ...(n % 3 === 0 ? { reward: n % 2 } : {}) };
}

/** A file of `count` conversations with a BOM, blank and malformed lines, CRLF ends in its second half and no final line end. */
function writeMixedFile(name: string, count: number, shape: 'openai' | 'anthropic'): string {
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    lines.push(JSON.stringify(conversation(n, shape)));
    if (n % 97 === 5) lines.push('not json {');
    if (n % 150 === 7) lines.push('', '   ');
    if (n % 211 === 9) lines.push('{"messages":3}');
  }
  const half = lines.length >> 1;
  const path = join(dir, name);
  writeFileSync(path, `\uFEFF${lines.slice(0, half).join('\n')}\n${lines.slice(half).join('\r\n')}`);
  return path;
}

type Judge = 'none' | 'heuristic';

/** What `annotate --input --json --out` writes (both streams, skipped-line warnings between the lines they came between) and its summary counts. */
function written() {
  const w = { json: '', out: '', tally: emptyTally() };
  return {
    w,
    chunk: (c: AnnotationChunk) => {
      w.json += c.json;
      w.out += c.out;
      addTally(w.tally, c.tally);
    },
    skip: (s: { line: number; reason: string }) => {
      w.json += `skip ${s.line}: ${s.reason}\n`;
      w.out += `skip ${s.line}: ${s.reason}\n`;
    },
  };
}

/** The one-thread path, rendered one trajectory at a time. */
async function singleThread(format: 'openai' | 'anthropic', path: string, judge: Judge) {
  const { w, chunk, skip } = written();
  const options = { now, onSkip: skip, ...(judge === 'none' ? { judge: NO_SEMANTIC_JUDGE } : {}) };
  for await (const r of annotateFile(format, path, options)) {
    const lines = new AnnotatedLines({ json: true, out: true });
    lines.add(r.trajectory, r.stored, r.marks.length, JSON.stringify(r.trajectory));
    chunk(lines);
  }
  return w;
}

async function parallel(path: string, options: Omit<ParallelAnnotateOptions, 'workerUrl' | 'now' | 'onSkip'>) {
  const { w, chunk, skip } = written();
  for await (const c of annotateFileParallel(path, { ...options, workerUrl, now, onSkip: skip, json: true, out: true })) chunk(c);
  return w;
}

describe('annotateFileParallel', () => {
  const openai = writeMixedFile('openai.jsonl', 3000, 'openai');
  const anthropic = writeMixedFile('anthropic.jsonl', 1500, 'anthropic');

  it.each<[string, 'openai' | 'anthropic', Judge, number]>([
    ['openai, judge none, 8 KiB blocks', 'openai', 'none', 8192],
    ['openai, heuristic judge, 64 KiB blocks', 'openai', 'heuristic', 65536],
    ['anthropic, heuristic judge, 4 KiB blocks', 'anthropic', 'heuristic', 4096],
  ])('gives exactly what the one-thread path gives: %s', async (_name, format, judge, blockBytes) => {
    const path = format === 'openai' ? openai : anthropic;
    const expected = await singleThread(format, path, judge);
    const got = await parallel(path, { format, judge, blockBytes, threads: 2, maxInFlight: 3 });
    expect(got.json).toBe(expected.json);
    expect(got.out).toBe(expected.out);
    expect(got.tally).toEqual(expected.tally);
    // The file exercises what the comparison is about: skipped lines with their numbers, rare failures.
    expect(expected.json.split('\n').filter((l) => l.startsWith('skip ')).length).toBeGreaterThan(20);
    expect(expected.tally.counts.get('rare_failure')).toBeGreaterThan(10);
  }, 60_000);

  it('fails on the first malformed line under strict, with its line number in the file, after the trajectories before it', async () => {
    const lines = Array.from({ length: 400 }, (_, n) => JSON.stringify(conversation(n, 'openai')));
    lines.splice(300, 0, '{"messages": [{"no_role": 1}]}');
    const path = join(dir, 'strict.jsonl');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const seen: string[] = [];
    const run = async () => {
      for await (const c of annotateFileParallel(path, { format: 'openai', judge: 'none', strict: true, json: true, blockBytes: 4096, threads: 2, workerUrl, now })) seen.push(...c.json.trimEnd().split('\n'));
    };
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ImportInputError.isInstance(error)).toBe(true);
    expect((error as ImportInputError).line).toBe(301);
    expect((error as ImportInputError).reason).toBe('messages[0] has no role');
    expect(seen).toHaveLength(300);
  }, 60_000);

  it('fails, rather than waits forever, when a worker dies', async () => {
    const crash = join(dir, 'crash-worker.mjs');
    writeFileSync(crash, "throw new Error('worker broke on start');\n");
    const run = async () => {
      for await (const r of annotateFileParallel(openai, { format: 'openai', judge: 'none', blockBytes: 4096, threads: 2, workerUrl: new URL(`file://${crash}`) })) void r;
    };
    await expect(run()).rejects.toThrow('worker broke on start');
  }, 60_000);
});
