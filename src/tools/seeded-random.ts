/**
 * Deterministic randomness for the mock catalog. Every generated value is drawn from a stream
 * keyed by (seed, what it is for), e.g. (seed, "weather", "shanghai", "2026-03-29"), so a value
 * does not depend on which other values were generated before it: asking for one city's weather
 * never shifts another's, and adding a domain never changes the existing ones.
 */
import { seededRandom } from '../core/seeded-random.js';

/** FNV-1a over the seed and the key parts: a stable 32-bit stream id. */
export function streamId(seed: number, parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  const text = parts.join('\u0000');
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A generator of numbers in [0, 1) for one keyed stream. */
export function keyedRandom(seed: number, ...parts: (string | number)[]): () => number {
  return seededRandom(streamId(seed, parts));
}

/** An integer in [min, max]. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick from an empty list');
  return item;
}

/** Roughly normal noise (sum of three uniforms), mean 0, in [-spread, spread]. */
export function noise(random: () => number, spread: number): number {
  return ((random() + random() + random()) / 1.5 - 1) * spread;
}

export function roundTo(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
