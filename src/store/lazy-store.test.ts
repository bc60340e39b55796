import { describe, expect, it } from 'vitest';
import { makeRecord } from '../record/fixture.js';
import { lazyStore } from './lazy-store.js';
import { runStoreContracts } from './contracts/run-store-contracts.test-helpers.js';
import { createMemoryStore } from './memory/memory-store.js';
import type { BatchEncoding, Store } from '../core/store-types.js';

const utf8 = { encoder: new TextEncoder(), decoder: new TextDecoder() };
const jsonEncoding: BatchEncoding = {
  encode: (records) => utf8.encoder.encode(JSON.stringify(records)),
  decode: (bytes) => JSON.parse(utf8.decoder.decode(bytes)),
};

// Every call forwards to the store once it is open, so the lazy store keeps each capability's contract.
runStoreContracts('lazy (a memory store opened on first use)', async () => lazyStore('memory', async () => createMemoryStore()));

describe('lazyStore', () => {
  it('declares what it is told before the open, and hands encoded batches to a store that lacks insertEncoded as records', async () => {
    let opens = 0;
    const inner = createMemoryStore();
    const lazy = lazyStore('memory', async () => {
      opens++;
      return inner;
    }, { maxInsertsInFlight: 4, batchEncoding: jsonEncoding });
    expect(lazy.maxInsertsInFlight).toBe(4);
    expect(lazy.batchEncoding).toBe(jsonEncoding);
    expect(opens).toBe(0);
    const records = [makeRecord(), makeRecord()];
    await lazy.insertEncoded!(jsonEncoding.encode(records));
    expect(await inner.count()).toBe(2);
    expect(await inner.get(records[1]!.execution_id)).toStrictEqual(records[1]);
    expect(opens).toBe(1);
    await lazy.close();
  });

  it('forwards encoded batches to the opened store when it takes them', async () => {
    const got: Uint8Array[] = [];
    const inner: Store = Object.assign(createMemoryStore(), { batchEncoding: jsonEncoding, insertEncoded: async (b: Uint8Array) => void got.push(b) });
    const lazy = lazyStore('memory', async () => inner, { batchEncoding: jsonEncoding });
    const bytes = jsonEncoding.encode([makeRecord()]);
    await lazy.insertEncoded!(bytes);
    expect(got).toEqual([bytes]);
    const plain = lazyStore('memory', async () => inner);
    expect(plain.batchEncoding).toBeUndefined();
    expect(plain.insertEncoded).toBeUndefined();
    expect(plain.maxInsertsInFlight).toBeUndefined();
  });
});
