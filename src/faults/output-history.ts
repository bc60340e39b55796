/**
 * Outputs a plan has seen, per tool and arguments, so `stale` can replay an old one. Bounded:
 * a few entries per key and a cap on keys (least recently written is evicted first).
 */
import { paramsHash } from '../core/params-hash.js';
import { cloneJson } from '../core/clone-json.js';

interface Seen {
  output: unknown;
  at: number;
}

export interface HistoryQuery {
  /** The entry this many outputs back (1 = the latest seen). */
  ageCalls?: number;
  /** Otherwise the newest entry at least this old. */
  ageMs: number;
}

export interface Replay {
  output: unknown;
  /** How long ago it was seen. */
  ageMs: number;
}

export class OutputHistory {
  private readonly entries = new Map<string, Seen[]>();

  constructor(
    private readonly perKey = 32,
    private readonly maxKeys = 1024,
  ) {}

  private key(toolName: string, args: unknown): string {
    return `${toolName}\u0000${paramsHash(args)}`;
  }

  record(toolName: string, args: unknown, output: unknown, at: number): void {
    const key = this.key(toolName, args);
    const list = this.entries.get(key) ?? [];
    // Re-inserting moves the key to the end of the Map's order, which makes eviction LRU.
    this.entries.delete(key);
    list.push({ output: cloneJson(output), at });
    if (list.length > this.perKey) list.splice(0, list.length - this.perKey);
    this.entries.set(key, list);
    if (this.entries.size > this.maxKeys) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  find(toolName: string, args: unknown, query: HistoryQuery, now: number): Replay | undefined {
    const list = this.entries.get(this.key(toolName, args));
    if (list === undefined || list.length === 0) return undefined;
    let hit: Seen | undefined;
    if (query.ageCalls !== undefined) {
      hit = list[list.length - query.ageCalls];
    } else {
      for (let i = list.length - 1; i >= 0 && hit === undefined; i--) if (now - list[i]!.at >= query.ageMs) hit = list[i];
    }
    return hit === undefined ? undefined : { output: cloneJson(hit.output), ageMs: now - hit.at };
  }
}
