/** A small, fast seeded PRNG (mulberry32), for reproducible jitter and fault triggers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed every command and API uses when none is given (`bench`, `mock-tools`, `export`'s
 * split, `augment`'s variants, the review sample): one default, so "the default seed" means one thing.
 */
export const DEFAULT_SEED = 1;
