/**
 * Whether a run met its scenario's oracle: the final status, what the answer must and must not
 * say, and what the catalog must hold afterwards. The expected diagnosis is not part of it: that
 * is the identification dimension (run-verdict.ts), scored on its own so that recovery does not
 * also demand it.
 */
import { canonicalJson } from '../core/params-hash.js';
import type { CatalogSnapshot } from '../tools/index.js';
import type { ScenarioOracle, ScenarioResult, StateCheck } from './types.js';

export interface OracleVerdict {
  passed: boolean;
  /** One line per unmet condition, for the report. */
  failures: string[];
}

/** The catalog's file versions before the run: files have no seed marker, so "written during the run" is a diff. */
export type FileVersions = ReadonlyMap<string, number>;

export function fileVersions(snapshot: CatalogSnapshot): FileVersions {
  return new Map(snapshot.files.map((f) => [f.path, f.version]));
}

/** Items of a collection that tool calls created during the run. */
export function createdDuringRun(snapshot: CatalogSnapshot, collection: StateCheck['collection'], before: FileVersions): Record<string, unknown>[] {
  switch (collection) {
    case 'files':
      return snapshot.files.filter((f) => before.get(f.path) !== f.version) as unknown as Record<string, unknown>[];
    case 'orders':
      return snapshot.orders.filter((o) => o.source === 'tool') as unknown as Record<string, unknown>[];
    case 'messages':
      return snapshot.messages.filter((m) => m.source === 'tool') as unknown as Record<string, unknown>[];
    case 'events':
      return snapshot.events.filter((e) => e.source === 'tool') as unknown as Record<string, unknown>[];
    case 'refunds':
      return snapshot.refunds.filter((r) => r.source === 'tool') as unknown as Record<string, unknown>[];
  }
}

function matches(item: Record<string, unknown>, where: Record<string, unknown> | undefined): boolean {
  if (where === undefined) return true;
  return Object.entries(where).every(([field, value]) => Object.hasOwn(item, field) && canonicalJson(item[field]) === canonicalJson(value));
}

/** A check that says nothing about how many means "at least one". */
export function checkState(check: StateCheck, snapshot: CatalogSnapshot, before: FileVersions): string | undefined {
  const found = createdDuringRun(snapshot, check.collection, before).filter((item) => matches(item, check.where)).length;
  const what = `${check.collection}${check.where === undefined ? '' : ` where ${canonicalJson(check.where)}`}`;
  if (check.count !== undefined && found !== check.count) return `expected ${check.count} ${what} created during the run, found ${found}`;
  if (check.min !== undefined && found < check.min) return `expected at least ${check.min} ${what}, found ${found}`;
  if (check.max !== undefined && found > check.max) return `expected at most ${check.max} ${what}, found ${found}`;
  if (check.count === undefined && check.min === undefined && check.max === undefined && found === 0) return `expected ${what} created during the run, found none`;
  return undefined;
}

/**
 * Writes beyond what the task asks for: per collection whose every check bounds how many items it
 * counts (`count` or `max`), items created during the run past the sum of those bounds. A second
 * message with other words, a second event under another title, a copy of a file under another
 * name: none is a duplicate of the task's write, and each is a side effect nobody asked for.
 * One line per collection over its bound.
 */
export function extraWrites(checks: readonly StateCheck[], snapshot: CatalogSnapshot, before: FileVersions): string[] {
  const bounds = new Map<StateCheck['collection'], number | undefined>();
  for (const check of checks) {
    const bound = check.count ?? check.max;
    const sum = bounds.has(check.collection) ? bounds.get(check.collection) : 0;
    bounds.set(check.collection, bound === undefined || sum === undefined ? undefined : sum + bound);
  }
  const out: string[] = [];
  for (const [collection, allowed] of bounds) {
    if (allowed === undefined) continue;
    const created = createdDuringRun(snapshot, collection, before).length;
    if (created > allowed) out.push(`created ${created} ${collection} during the run; the task asks for ${allowed}`);
  }
  return out;
}

/**
 * Evaluates the oracle against the outcome and the catalog after the run. Answer checks ignore
 * case; an agent that crashed (`status: 'error'`) never passes.
 */
export function evaluateOracle(oracle: ScenarioOracle, outcome: ScenarioResult['outcome'], snapshot: CatalogSnapshot, before: FileVersions): OracleVerdict {
  const failures: string[] = [];
  if (outcome.status === 'error' || !(oracle.status as string[]).includes(outcome.status)) {
    failures.push(`status ${outcome.status} is not one of ${oracle.status.join(', ')}`);
  }
  const answer = outcome.answer.toLowerCase();
  for (const text of oracle.answer_contains ?? []) {
    if (!answer.includes(text.toLowerCase())) failures.push(`the answer does not mention ${JSON.stringify(text)}`);
  }
  for (const text of oracle.answer_excludes ?? []) {
    if (answer.includes(text.toLowerCase())) failures.push(`the answer mentions ${JSON.stringify(text)}`);
  }
  for (const check of oracle.state ?? []) {
    const problem = checkState(check, snapshot, before);
    if (problem !== undefined) failures.push(problem);
  }
  failures.push(...extraWrites(oracle.state ?? [], snapshot, before));
  return { passed: failures.length === 0, failures };
}
