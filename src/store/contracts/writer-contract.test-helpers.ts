/**
 * The writer contract: inserts are validated as a whole batch, stored field for field, idempotent
 * by execution_id (in counts and in every rollup), and a store closes twice without error.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { makeRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { RecordReader, RecordWriter, StatsReader } from '../../core/store-types.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';
import { CONTRACT_T0, CONTRACT_WINDOW, byId, contractDataset, expectedToolStats, fallbackRecord, iso, richRecord, summaryRecord } from './contract-data.test-helpers.js';

export const writerContract: CapabilityContract<RecordWriter & RecordReader & StatsReader> = {
  capability: 'writer',
  observes: ['reader', 'stats'],
  register(current) {
    let store: RecordWriter & RecordReader & StatsReader;
    beforeEach(() => {
      store = current();
    });

  describe('empty store', () => {
      it('accepts an empty batch', async () => {
        await store.insert([]);
        expect(await store.count()).toBe(0);
      });

      it('reports its kind', () => {
        expect(['memory', 'sqlite', 'postgres']).toContain(store.kind);
      });
    });

    describe('insert and get', () => {
      it('refuses a batch holding a malformed record, naming its execution_id and the field, and stores none of it', async () => {
        const [good, base] = contractDataset(2) as [ToolExecutionRecord, ToolExecutionRecord];
        const malformed: [field: keyof ToolExecutionRecord, value: unknown][] = [
          ['duration_ms', Number.NaN],
          ['duration_ms', Number.POSITIVE_INFINITY],
          ['retry_count', 1.5],
          ['step_index', '3'],
          ['schema_version', 2 ** 40],
          ['output_length', -0.5],
          ['idempotent', 'yes'],
          ['summary_only', null],
          ['trace_id', undefined],
          ['status', 7],
          ['attempts', null],
          ['context_snapshot', null],
          ['created_at', 'yesterday'],
        ];
        for (const [field, value] of malformed) {
          const bad = { ...base, [field]: value } as ToolExecutionRecord;
          const inserting = store.insert([good, bad]);
          await expect(inserting, field).rejects.toSatisfy(ConfigError.isInstance);
          await expect(inserting, field).rejects.toMatchObject({
            field,
            message: expect.stringMatching(new RegExp(`^store\\.insert: record ${base.execution_id} has an invalid ${field}: expected .*, got `)),
          });
        }
        expect(await store.count()).toBe(0);
        expect(await store.toolStats(CONTRACT_WINDOW)).toEqual([]);
        // Valid records with the nullable numbers null still go in.
        await store.insert([good, { ...base, output_length: null }]);
        expect(await store.count()).toBe(2);
      });

      it('round-trips every field of rich, summary and fallback records', async () => {
        const rich = richRecord();
        const summary = summaryRecord();
        const fallback = fallbackRecord(rich.execution_id);
        await store.insert([rich, summary, fallback]);
        expect(await store.get(rich.execution_id)).toStrictEqual(rich);
        expect(await store.get(summary.execution_id)).toStrictEqual(summary);
        expect(await store.get(fallback.execution_id)).toStrictEqual(fallback);
        expect(await store.query({ traceId: rich.trace_id })).toStrictEqual([rich, fallback]);
      });

      it('round-trips the whole varied dataset through query', async () => {
        const data = contractDataset();
        await store.insert(data);
        expect(await store.query({ limit: 10_000 })).toStrictEqual([...data].sort(byId));
      });

      it('does not let later mutation of the inserted object change what is stored', async () => {
        const record = richRecord();
        const expected = structuredClone(record);
        await store.insert([record]);
        record.context_snapshot['intent'] = 'changed';
        record.attempts.length = 0;
        expect(await store.get(expected.execution_id)).toStrictEqual(expected);
      });

      it('gives arguments back with their keys in the order they were recorded', async () => {
        // JSON.stringify compares the text: toStrictEqual ignores key order, which is what a
        // model's training data keeps (jsonb, for one, sorts keys shortest first).
        const record = { ...richRecord(), input_params: { zone: 'UTC+8', date: '2026-03-29', a: { z: 1, b: [{ yy: 2, x: 3 }] } } };
        await store.insert([record]);
        expect(JSON.stringify((await store.get(record.execution_id))?.input_params)).toBe(JSON.stringify(record.input_params));
        expect(JSON.stringify((await store.query({ traceId: record.trace_id }))[0]?.input_params)).toBe(
          JSON.stringify(record.input_params),
        );
      });
    });

    describe('idempotent insert', () => {
      it('inserting the same batch twice changes neither counts nor stats', async () => {
        const data = contractDataset();
        await store.insert(data);
        const before = {
          count: await store.count(),
          stats: await store.toolStats(CONTRACT_WINDOW),
          breakdown: await store.failureBreakdown(CONTRACT_WINDOW),
          hourly: await store.hourly(CONTRACT_WINDOW),
          signatures: await store.signatures(CONTRACT_WINDOW),
        };
        await store.insert(data);
        await store.insert(data.slice(10, 50));
        expect(await store.count()).toBe(data.length);
        expect(await store.toolStats(CONTRACT_WINDOW)).toEqual(before.stats);
        expect(await store.failureBreakdown(CONTRACT_WINDOW)).toEqual(before.breakdown);
        expect(await store.hourly(CONTRACT_WINDOW)).toEqual(before.hourly);
        expect(await store.signatures(CONTRACT_WINDOW)).toEqual(before.signatures);
      });

      it('keeps the first copy when a batch repeats an id, and counts it once', async () => {
        const original = makeRecord({ created_at: iso(CONTRACT_T0 + 1000), tool_name: 'dup_tool' });
        const changed = { ...original, status: 'failure' as const, failure_stage: 'execution' as const, failure_category: 'system' as const, failure_type: 'server_error', error_message: 'boom' };
        await store.insert([original, changed]);
        await store.insert([changed]);
        expect(await store.count()).toBe(1);
        expect(await store.get(original.execution_id)).toStrictEqual(original);
        const [stats] = await store.toolStats(CONTRACT_WINDOW);
        expect(stats).toMatchObject({ tool_name: 'dup_tool', total: 1, success: 1, failure: 0 });
        expect(await store.signatures(CONTRACT_WINDOW)).toEqual([]);
      });

      it('counts only the new records of a partly known batch', async () => {
        const data = contractDataset(80);
        await store.insert(data.slice(0, 50));
        await store.insert(data.slice(30));
        expect(await store.count()).toBe(80);
        const stats = await store.toolStats(CONTRACT_WINDOW);
        expect(stats.reduce((s, t) => s + t.total, 0)).toBe(80);
        expect(stats.map((s) => [s.tool_name, s.total, s.retries])).toEqual(
          expectedToolStats(data).map((s) => [s.tool_name, s.total, s.retries]),
        );
      });
    });

    describe('close', () => {
      it('is safe to call twice', async () => {
        await store.insert([richRecord()]);
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  },
};
