// Trajectory import throughput: the real tau-bench file (4 MB JSON array) and a synthetic
// 100k-line OpenAI chat JSONL, each against a plain JSON.parse pass over the same bytes, in the
// same run. Peak RSS is the process high-water mark after each phase (it only grows, so the
// phases run from the lightest to the heaviest). The store phases write through `importFile` in
// batches of 1000, as `faultline import` does.
import { appendFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { importFile, importOpenAi, importTauBench } from '../dist/trajectory/index.js';
import { createSqliteStore } from '../dist/store/sqlite/sqlite-store.js';
import { table, QUICK } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const TAU = join(here, '..', 'corpora', 'tau-bench', 'gpt-4o-airline.json');
const LINES = QUICK ? 10_000 : 100_000;

const peakMb = () => (process.resourceUsage().maxRSS / 1024).toFixed(0);

async function timed(fn, rounds = 3) {
  let best = Infinity;
  let value;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    value = await fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { ms: best, value };
}

/** Counts the importer's trajectories without keeping them: the streaming cost alone. */
async function drain(importer, path) {
  let n = 0;
  for await (const item of importer(createReadStream(path))) if (item.kind === 'trajectory') n += 1;
  return n;
}

/** `faultline import`'s path: importFile writing batches into a SQLite store. */
async function importIntoSqlite(format, path, dbPath) {
  if (dbPath !== ':memory:') rmSync(dbPath, { force: true });
  const store = createSqliteStore({ path: dbPath });
  let inserted = 0;
  try {
    await importFile(format, path, { write: async (batch) => void (inserted += await store.insertTrajectories(batch)) });
  } finally {
    await store.close();
  }
  return inserted;
}

async function jsonlParseOnly(path) {
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    if (line !== '') {
      JSON.parse(line);
      n += 1;
    }
  }
  return n;
}

/** Written in slices so that generating the file does not set the RSS high-water mark. */
function syntheticChats(path) {
  writeFileSync(path, '');
  let lines = [];
  for (let i = 0; i < LINES; i++) {
    const fail = i % 10 === 0;
    lines.push(
      JSON.stringify({
        id: `conv-${i}`,
        messages: [
          { role: 'system', content: 'You are a helpful travel agent.' },
          { role: 'user', content: `Book the cheapest flight to city ${i % 97} next week.` },
          { role: 'assistant', content: null, tool_calls: [{ id: `a${i}`, type: 'function', function: { name: 'search_flights', arguments: JSON.stringify({ to: `C${i % 97}`, week: 12 }) } }] },
          { role: 'tool', tool_call_id: `a${i}`, content: fail ? '{"error":{"message":"Too Many Requests"},"status":429}' : JSON.stringify({ flights: [{ id: `F${i}`, price: 100 + (i % 50) }] }) },
          { role: 'assistant', content: null, tool_calls: [{ id: `b${i}`, type: 'function', function: { name: 'book_flight', arguments: JSON.stringify({ flight: `F${i}` }) } }] },
          { role: 'tool', tool_call_id: `b${i}`, content: JSON.stringify({ booking: `B${i}`, status: 'confirmed' }) },
          { role: 'assistant', content: 'Booked.' },
        ],
      }),
    );
    if (lines.length === 2000) {
      appendFileSync(path, lines.join('\n') + '\n');
      lines = [];
    }
  }
  if (lines.length > 0) appendFileSync(path, lines.join('\n') + '\n');
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-import-bench-'));
  const rows = [];
  try {
    const tauMb = (statSync(TAU).size / 1e6).toFixed(1);
    const tauParse = await timed(() => JSON.parse(readFileSync(TAU, 'utf8')).length);
    rows.push([`tau-bench ${tauMb} MB: readFileSync + JSON.parse`, tauParse.value, `${tauParse.ms.toFixed(0)} ms`, '1.00x', peakMb()]);
    const tauStream = await timed(() => drain(importTauBench, TAU));
    rows.push([`tau-bench: importer, streamed, trajectories dropped`, tauStream.value, `${tauStream.ms.toFixed(0)} ms`, `${(tauStream.ms / tauParse.ms).toFixed(2)}x`, peakMb()]);
    const tauStore = await timed(() => importIntoSqlite('tau-bench', TAU, ':memory:'));
    rows.push([`tau-bench: importFile + SQLite insert (validated first, then written in batches)`, tauStore.value, `${tauStore.ms.toFixed(0)} ms`, `${(tauStore.ms / tauParse.ms).toFixed(2)}x`, peakMb()]);

    const chats = join(dir, 'chats.jsonl');
    syntheticChats(chats);
    const mb = (statSync(chats).size / 1e6).toFixed(0);
    const parse = await timed(() => jsonlParseOnly(chats), 2);
    rows.push([`OpenAI ${LINES / 1000}k lines (${mb} MB): readline + JSON.parse`, parse.value, `${parse.ms.toFixed(0)} ms`, '1.00x', peakMb()]);
    const stream = await timed(() => drain(importOpenAi, chats), 2);
    rows.push([`OpenAI: importer, streamed, trajectories dropped`, stream.value, `${stream.ms.toFixed(0)} ms`, `${(stream.ms / parse.ms).toFixed(2)}x`, peakMb()]);
    const collected = await timed(() => importIntoSqlite('openai', chats, join(dir, 'chats.db')), 1);
    rows.push([`OpenAI: importFile + SQLite file, batches of 1000 (as the CLI does)`, collected.value, `${collected.ms.toFixed(0)} ms`, `${(collected.ms / parse.ms).toFixed(2)}x`, peakMb()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'Trajectory import',
    markdown: [
      table(['pass', 'items', 'time (best)', 'vs JSON.parse', 'peak RSS MB (process, so far)'], rows),
      '',
      'The importers stream (readline for JSONL; an incremental array scanner for tau-bench), so their own memory is one line or one element, and `importFile` hands trajectories to the store in batches of 1000 as it reads. A tau-bench file (one JSON document) and any `--strict` import are read twice: validated in full, then written, so a bad file writes nothing.',
    ].join('\n'),
  };
}
