/**
 * The reader contract: records by id, and the filtered, id-ordered, cursor-paged scan of
 * `query` and `count`, with bounds that are not epoch milliseconds refused by field.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { makeRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { RecordReader, RecordWriter } from '../../core/store-types.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';
import { CONTRACT_T0, HOUR, byId, contractDataset, createdMs, iso, richRecord } from './contract-data.test-helpers.js';

export const readerContract: CapabilityContract<RecordWriter & RecordReader> = {
  capability: 'reader',
  observes: [],
  register(current) {
    let store: RecordWriter & RecordReader;
    beforeEach(() => {
      store = current();
    });

  describe('empty store', () => {
      it('returns empty results everywhere', async () => {
        expect(await store.get('0195d1a0-0000-7000-8000-000000000000')).toBeNull();
        expect(await store.query({})).toEqual([]);
        expect(await store.count()).toBe(0);
        expect(await store.count({ toolName: 'get_weather' })).toBe(0);
      });

      it('refuses a query bound that is not epoch ms, naming the field', async () => {
        await expect(store.query({ until: '2026-12-01' as unknown as number })).rejects.toMatchObject({ field: 'until', message: expect.stringContaining('"2026-12-01"') });
        await expect(store.count({ since: Number.NaN })).rejects.toMatchObject({ field: 'since' });
        await expect(store.query({ limit: '10' as unknown as number })).rejects.toMatchObject({ field: 'limit' });
        // Numbers still work, and an empty window is an empty answer, not an error.
        expect(await store.query({ since: CONTRACT_T0, limit: 0 })).toEqual([]);
      });

      it('returns null for an unknown id', async () => {
        await store.insert([richRecord()]);
        expect(await store.get('0195d1a0-0000-7000-8000-000000000000')).toBeNull();
      });
    });

    describe('query', () => {
      let data: ToolExecutionRecord[];
      let sorted: ToolExecutionRecord[];
      beforeEach(async () => {
        data = contractDataset();
        sorted = [...data].sort(byId);
        // Out of order on purpose: the store, not the caller, orders by execution_id.
        await store.insert(data.slice(120));
        await store.insert(data.slice(0, 120));
      });

      it('orders by execution_id ascending by default and descending on request', async () => {
        expect((await store.query({})).map((r) => r.execution_id)).toEqual(sorted.map((r) => r.execution_id));
        expect((await store.query({ order: 'desc' })).map((r) => r.execution_id)).toEqual(
          [...sorted].reverse().map((r) => r.execution_id),
        );
      });

      it('filters by trace, tool and statuses', async () => {
        const trace = await store.query({ traceId: 'trace-3' });
        expect(trace).toStrictEqual(sorted.filter((r) => r.trace_id === 'trace-3'));
        expect(trace.length).toBeGreaterThan(0);

        const tool = await store.query({ toolName: 'send_email' });
        expect(tool.map((r) => r.execution_id)).toEqual(sorted.filter((r) => r.tool_name === 'send_email').map((r) => r.execution_id));

        const bad = await store.query({ statuses: ['timeout', 'rejected'] });
        const expectedBad = sorted.filter((r) => r.status === 'timeout' || r.status === 'rejected');
        expect(expectedBad.length).toBeGreaterThan(0);
        expect(bad.map((r) => r.execution_id)).toEqual(expectedBad.map((r) => r.execution_id));

        expect(await store.query({ statuses: [] })).toEqual([]);

        const combined = await store.query({ toolName: 'query_db', statuses: ['failure'] });
        expect(combined.map((r) => r.execution_id)).toEqual(
          sorted.filter((r) => r.tool_name === 'query_db' && r.status === 'failure').map((r) => r.execution_id),
        );
        expect(await store.query({ toolName: 'no_such_tool' })).toEqual([]);
      });

      it('filters by created_at with since inclusive and until exclusive', async () => {
        const boundary = sorted[40]!;
        const since = createdMs(boundary);
        const until = since + HOUR / 2;
        const inWindow = (r: ToolExecutionRecord) => createdMs(r) >= since && createdMs(r) < until;
        const got = await store.query({ since, until });
        expect(got.map((r) => r.execution_id)).toEqual(sorted.filter(inWindow).map((r) => r.execution_id));
        expect(got.map((r) => r.execution_id)).toContain(boundary.execution_id);
        expect((await store.query({ until: since })).map((r) => r.execution_id)).not.toContain(boundary.execution_id);
        expect(await store.count({ since, until })).toBe(sorted.filter(inWindow).length);
        expect(await store.count({ since: CONTRACT_T0 + 5 * HOUR })).toBe(sorted.filter((r) => createdMs(r) >= CONTRACT_T0 + 5 * HOUR).length);
      });

      it('pages with limit and the afterId cursor in both orders', async () => {
        const pages: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await store.query({ limit: 37, ...(cursor === undefined ? {} : { afterId: cursor }) });
          expect(page.length).toBeLessThanOrEqual(37);
          if (page.length === 0) break;
          pages.push(...page.map((r) => r.execution_id));
          cursor = page[page.length - 1]!.execution_id;
        }
        expect(pages).toEqual(sorted.map((r) => r.execution_id));

        const pivot = sorted[100]!.execution_id;
        const after = await store.query({ afterId: pivot, limit: 5 });
        expect(after.map((r) => r.execution_id)).toEqual(sorted.slice(101, 106).map((r) => r.execution_id));
        const before = await store.query({ afterId: pivot, limit: 5, order: 'desc' });
        expect(before.map((r) => r.execution_id)).toEqual(sorted.slice(95, 100).reverse().map((r) => r.execution_id));

        const filtered = await store.query({ afterId: pivot, toolName: 'get_weather', limit: 3 });
        expect(filtered.map((r) => r.execution_id)).toEqual(
          sorted.slice(101).filter((r) => r.tool_name === 'get_weather').slice(0, 3).map((r) => r.execution_id),
        );
      });

      it('applies a default limit of 1000', async () => {
        const bulk = Array.from({ length: 900 }, (_, i) =>
          makeRecord({ tool_name: 'bulk_tool', trace_id: `bulk-${i % 30}`, created_at: iso(CONTRACT_T0 + 30 * HOUR + i) }),
        );
        await store.insert(bulk);
        expect(await store.count()).toBe(1140);
        expect(await store.query({})).toHaveLength(1000);
        expect(await store.query({ limit: 0 })).toEqual([]);
      });

      it('counts with the same filters as query', async () => {
        expect(await store.count()).toBe(data.length);
        expect(await store.count({ toolName: 'search_orders', statuses: ['rejected'] })).toBe(
          data.filter((r) => r.tool_name === 'search_orders' && r.status === 'rejected').length,
        );
        expect(await store.count({ traceId: 'trace-0' })).toBe(data.filter((r) => r.trace_id === 'trace-0').length);
      });
    });
  },
};
