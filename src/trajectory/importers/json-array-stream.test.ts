import { describe, expect, it } from 'vitest';
import { chunks } from './collect.test-helpers.js';
import { JsonArrayShapeError, readJsonArray, type ArrayElement } from './json-array-stream.js';

async function read(text: string, size: number): Promise<ArrayElement[]> {
  const out: ArrayElement[] = [];
  for await (const e of readJsonArray(chunks(text, size))) out.push(e);
  return out;
}

describe('readJsonArray', () => {
  const text = '[\n  {"a": "x]}\\"{", "b": [1, {"c": null}]},\n  "s,t", 12 ,\n  true,\n  {"d": "中文"}\n]\n';

  it('yields each element with the line it starts on, whatever the chunk size', async () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(await read(text, size)).toEqual([
        { index: 0, line: 2, value: { a: 'x]}"{', b: [1, { c: null }] } },
        { index: 1, line: 3, value: 's,t' },
        { index: 2, line: 3, value: 12 },
        { index: 3, line: 4, value: true },
        { index: 4, line: 5, value: { d: '中文' } },
      ]);
    }
  });

  it('decodes multi-byte characters split across Buffer chunks', async () => {
    const bytes = Buffer.from('[{"d":"中文"}]');
    const parts = [bytes.subarray(0, 8), bytes.subarray(8)];
    const out: ArrayElement[] = [];
    for await (const e of readJsonArray(parts)) out.push(e);
    expect(out).toEqual([{ index: 0, line: 1, value: { d: '中文' } }]);
  });

  it('reports a malformed element and goes on with the next', async () => {
    const out = await read('[\n{"a": 1,},\n{"b": 2}\n]', 4);
    expect(out[0]).toMatchObject({ index: 0, line: 2, error: expect.stringMatching(/element 0 is not valid JSON/) as unknown as string });
    expect(out[1]).toEqual({ index: 1, line: 3, value: { b: 2 } });
  });

  it('throws for input that is not an array or ends inside it', async () => {
    await expect(read('{"a": 1}', 3)).rejects.toThrow(JsonArrayShapeError);
    await expect(read('[{"a": 1},\n{"b":', 3)).rejects.toThrow(/ends inside the array/);
    await expect(read('', 3)).rejects.toThrow(/empty input/);
    await expect(read('[1] 2', 3)).rejects.toThrow(/after the end/);
  });
});
