// resolveAgent for the reference agents: `naive`, `robust`, `sampler` and `follow-feedback` by bare name.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { resolveAgent } from './index.js';

describe('resolveAgent: reference agents', () => {
  it('builds a fresh naive or robust agent by name', async () => {
    const robust = await resolveAgent('robust');
    const naive = await resolveAgent('naive');
    expect([robust.name, naive.name]).toEqual(['robust', 'naive']);
    expect(await resolveAgent('robust')).not.toBe(robust);
    const sampler = await resolveAgent('sampler');
    expect([sampler.name, sampler.canSample, robust.canSample]).toEqual(['sampler', true, undefined]);
    expect((await resolveAgent('follow-feedback')).name).toBe('follow-feedback');
  });

  it('names the reference agents when a spec is unknown', async () => {
    const error = await resolveAgent('robustest').catch((e: unknown) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/unknown agent "robustest": use naive, robust, sampler, follow-feedback, openai:<model>/);
  });
});
