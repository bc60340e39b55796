import { describe, expect, it } from 'vitest';
import { notify } from './notify.js';

describe('notify', () => {
  it('hands what a listener throws to onError and never throws itself', () => {
    const seen: unknown[] = [];
    const boom = new Error('listener failed');
    notify((value: number) => seen.push(value), 1, (error) => seen.push(error));
    notify(() => { throw boom; }, 2, (error) => seen.push(error));
    expect(() => notify(() => { throw boom; }, 3, () => { throw new Error('handler failed'); })).not.toThrow();
    expect(seen).toEqual([1, boom]);
  });
});
