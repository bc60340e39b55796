import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { importFile, ImportInputError, readTrajectories } from './import-file.js';
import { redactTrajectory } from './redact-trajectory.js';
import type { Trajectory } from '../core/trajectory-types.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-import-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const conversation = (i: number) =>
  JSON.stringify({
    id: `c${i}`,
    messages: [
      { role: 'user', content: `order ${i}` },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'create_order', arguments: JSON.stringify({ sku: `S${i}` }) } }] },
      { role: 'tool', tool_call_id: 'a', content: i % 5 === 0 ? '{"error":"busy","status":503}' : '{"order_id":1}' },
    ],
  });

/** `count` conversations, one per line; `bad` maps 1-based line numbers to text put there instead. */
function chatFile(name: string, count: number, bad: Record<number, string> = {}): string {
  const path = join(dir, name);
  writeFileSync(path, Array.from({ length: count }, (_, i) => bad[i + 1] ?? conversation(i + 1)).join('\n') + '\n');
  return path;
}

describe('importFile', () => {
  it('hands trajectories on in bounded batches, reading no further than the batch being written', async () => {
    const path = chatFile('big.jsonl', 2500);
    // openai's importer reads the clock once per trajectory it builds: a count of what it produced.
    let produced = 0;
    let written = 0;
    const batches: number[] = [];
    const result = await importFile('openai', path, {
      batchSize: 1000,
      now: () => {
        produced += 1;
        return Date.UTC(2026, 2, 29);
      },
      write: async (batch) => {
        // The importer is paused while a batch is written: it never holds more than one batch.
        expect(produced - written).toBe(batch.length);
        expect(batch.length).toBeLessThanOrEqual(1000);
        batches.push(batch.length);
        await new Promise((r) => setTimeout(r, 5));
        written += batch.length;
      },
    });
    expect(batches).toEqual([1000, 1000, 500]);
    expect(result.validatedFirst).toBe(false);
    expect(result.summary).toMatchObject({ trajectories: 2500, steps: 2500, failures: 500, skipped_lines: 0 });
  });

  it('writes into a real SQLite file batch by batch, and a re-import stores nothing new', async () => {
    const path = chatFile('sqlite.jsonl', 1200, { 7: '{not json' });
    const db = join(dir, 'import.db');
    const store = createSqliteStore({ path: db });
    const inserted: number[] = [];
    const write = async (batch: readonly Trajectory[]) => void inserted.push(await store.insertTrajectories(batch));
    const skipped: number[] = [];
    const first = await importFile('openai', path, { batchSize: 500, write, onSkip: (s) => skipped.push(s.line) });
    expect(inserted).toEqual([500, 500, 199]);
    expect(skipped).toEqual([7]);
    expect(first.skipped).toEqual([{ line: 7, reason: expect.stringMatching(/^not JSON: /) as unknown as string }]);
    expect(await store.countTrajectories()).toBe(1199);
    inserted.length = 0;
    await importFile('openai', path, { batchSize: 500, write });
    expect(inserted).toEqual([0, 0, 0]);
    expect(await store.countTrajectories()).toBe(1199);
    await store.close();
  });

  it('under strict, validates the whole file first: a malformed line late in it means no write at all', async () => {
    const path = chatFile('late-bad.jsonl', 2500, { 2400: '{"messages": 3}' });
    let writes = 0;
    const error = await importFile('openai', path, { strict: true, batchSize: 100, write: async () => void (writes += 1) }).catch((e: unknown) => e);
    expect(ImportInputError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ line: 2400, reason: 'expected "messages" to be an array' });
    expect(writes).toBe(0);
    // A clean file under strict is read twice (validated, then written) and fully written.
    const clean = await importFile('openai', chatFile('clean.jsonl', 250), { strict: true, batchSize: 100, write: async () => void (writes += 1) });
    expect(clean.validatedFirst).toBe(true);
    expect(writes).toBe(3);
  });

  it('validates a tau-bench file (one JSON document) before writing, so a truncated one writes nothing', async () => {
    const path = join(dir, 'truncated.json');
    const element = (id: number) => JSON.stringify({ task_id: id, reward: 1, traj: [{ role: 'user', content: 'hi' }] });
    writeFileSync(path, `[\n${Array.from({ length: 30 }, (_, i) => element(i)).join(',\n')},\n{"task_id": 99,`);
    let writes = 0;
    const error = await importFile('tau-bench', path, { batchSize: 10, write: async () => void (writes += 1) }).catch((e: unknown) => e);
    expect(error).toMatchObject({ line: 32, reason: 'the input ends inside the array (truncated file?)' });
    expect(writes).toBe(0);
  });

  it('lists at most 1000 skipped lines but counts them all', async () => {
    const path = join(dir, 'junk.jsonl');
    writeFileSync(path, Array.from({ length: 1500 }, () => 'junk').join('\n'));
    const result = await importFile('openai', path);
    expect(result.summary.skipped_lines).toBe(1500);
    expect(result.skipped).toHaveLength(1000);
    expect(result.skipped[999]!.line).toBe(1000);
  });

  it('readTrajectories yields trajectories one at a time and stops reading when the consumer stops', async () => {
    const path = chatFile('first.jsonl', 50);
    const seen: string[] = [];
    for await (const t of readTrajectories('openai', path)) {
      seen.push(t.source_id!);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['c1', 'c2', 'c3']);
  });
});

describe('readTrajectories redaction', () => {
  const leaky = JSON.stringify({
    id: 'leak',
    messages: [
      { role: 'system', content: 'Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for GitHub.' },
      { role: 'user', content: 'my api_key=sk-live-9f8e7d6c5b4a39281706abcd please order' },
      { role: 'assistant', content: 'Ordering with password=opensesame42', tool_calls: [{ id: 'a', type: 'function', function: { name: 'create_order', arguments: JSON.stringify({ sku: 'S1', password: 'hunter2hunter2' }) } }] },
      { role: 'tool', tool_call_id: 'a', content: '{"error":"card 4111 1111 1111 1111 declined","status":402}' },
      { role: 'assistant', content: 'Your card 4111 1111 1111 1111 was declined.' },
    ],
  });

  it('redacts the task, the arguments and the response by default, and hands a clean trajectory on untouched', async () => {
    const path = join(dir, 'leaky.jsonl');
    writeFileSync(path, `${leaky}\n${conversation(1)}\n`);
    const [dirty, clean] = await collect(readTrajectories('openai', path));
    const text = JSON.stringify(dirty);
    for (const secret of ['9f8e7d6c5b4a39281706', 'hunter2hunter2', '4111 1111 1111 1111', 'opensesame42', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789']) expect(text).not.toContain(secret);
    // The conversation's own text goes through the same redactor: system prompt, turns, the text said with a call, the result text.
    expect(dirty!.system_prompt).toContain('for GitHub.');
    expect(dirty!.steps[0]!.turns_before![0]!.content).toContain('please order');
    expect(dirty!.steps[0]!.call_text).toContain('Ordering with');
    expect(dirty!.steps[0]!.response.text).toContain('declined');
    expect(dirty!.closing_turns![0]!.content).toContain('was declined');
    expect(dirty!.steps[0]!.input_params).toEqual({ sku: 'S1', password: '[REDACTED]' });
    expect(dirty!.task_description).toContain('please order');
    const [raw] = await collect(readTrajectories('openai', path, { redactor: false }));
    expect(JSON.stringify(raw)).toContain('hunter2hunter2');
    // Nothing secret in it: the very object, not a copy.
    expect(redactTrajectory(clean!)).toBe(clean);
  });
});

describe('readTrajectories: a secret found in one message is scrubbed from the others', () => {
  it('a password keyed in the tool call and echoed bare in the tool result and the reply is gone from all of them', async () => {
    const password = 'Tr0ub4dor&3-horse';
    const token = 'rt_7Hq2LmZ9xW4vB8nK3pR6tY1c';
    const line = JSON.stringify({
      id: 'echo',
      messages: [
        { role: 'user', content: `log me in, my refresh_token=${token}` },
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'login', arguments: JSON.stringify({ user: 'ann', password }) } }] },
        { role: 'tool', tool_call_id: 'a', content: JSON.stringify({ error: `invalid credentials for ann / ${password}`, retried_with: [token] }) },
        { role: 'assistant', content: `The login failed with ${password}; token ${token} was refused too.` },
      ],
    });
    const path = join(dir, 'echo.jsonl');
    writeFileSync(path, `${line}\n`);
    const [trajectory] = await collect(readTrajectories('openai', path));
    const text = JSON.stringify(trajectory);
    expect(text).not.toContain(password);
    expect(text).not.toContain(JSON.stringify(password).slice(1, -1));
    expect(text).not.toContain(token);
    expect(text).toContain('invalid credentials for ann / [REDACTED]');
  });
});

async function collect(source: AsyncIterable<Trajectory>): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for await (const t of source) out.push(t);
  return out;
}
