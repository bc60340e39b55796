/**
 * `perturb` variants: the values changed, the names kept. Every real date and timestamp moves by
 * the same whole number of weeks (so weekdays and "tomorrow" stay true, and so do the gaps
 * between calls), known entity names (cities, people, companies) are swapped within their pool,
 * ids like `ORD-1001` get other digits, and numbers are scaled by 0.8–1.25. The same value always
 * becomes the same new value within a variant.
 *
 * What a failure may hinge on is left alone: dates that are no real date (`2026-13-45`), numbers
 * that also appear in any text of the trajectory (an error message quoting the bad value, the
 * instruction asking for it), and small integers (−2..2: flags, pages, counts of one).
 */
import type { Trajectory } from '../../core/trajectory-types.js';
import { ENTITY_POOLS } from './vocabulary.js';
import { choose, unitHash, wholeNameReplacer, identityPlan, type VariantPlan } from './variant-plan.js';

const DAY_MS = 86_400_000;
const DATE_IN_TEXT = /(?<!\d)(\d{4})-(\d{2})(?:-(\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?)?(?![\d-])/g;
const ID_IN_TEXT = /(?<![\p{L}\p{N}])([A-Z]{2,5})([-_]?)(\d{2,})(?![\p{L}\p{N}])/gu;
const NUMBER_IN_TEXT = /-?\d+(?:\.\d+)?/g;
/** Prefixes of codes rather than ids (`HTTP_429`): their digits mean something. */
const CODE_PREFIXES = new Set(['HTTP', 'HTTPS', 'TAU', 'ERR', 'ISO', 'UTC', 'GMT', 'SHA', 'RFC', 'TLS', 'SSL', 'UTF']);

/** Every string anywhere in the trajectory (instruction, messages, reasons, string values). */
function stringsOf(trajectory: Trajectory): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk([trajectory.task_description, trajectory.steps.map((s) => [s.input_params, s.response, s.agent_decision, s.correctness_reason, s.correct_action]), trajectory.labels?.map((l) => l.reason)]);
  return out;
}

function decimalsOf(value: number): number {
  const text = String(value);
  const dot = text.indexOf('.');
  return dot < 0 || text.includes('e') ? 0 : text.length - dot - 1;
}

export interface PerturbSettings {
  weeks: number;
  months: number;
}

export function perturbSettings(trajectory: Trajectory, seed: number, variant: number): PerturbSettings {
  const at = (what: string) => unitHash(seed, 'perturb', variant, trajectory.trajectory_id, what);
  const weeks = (2 + Math.floor(at('weeks') * 25)) * (at('sign') < 0.5 ? -1 : 1);
  return { weeks, months: Math.round((weeks * 7) / 30.4375) || Math.sign(weeks) };
}

export function perturbPlan(trajectory: Trajectory, seed: number, variant: number): VariantPlan {
  const at = (...parts: (string | number)[]) => [seed, 'perturb', variant, trajectory.trajectory_id, ...parts];
  const { weeks, months } = perturbSettings(trajectory, seed, variant);
  const shiftMs = weeks * 7 * DAY_MS;

  const shiftDate = (found: string, y: string, mo: string, d: string | undefined, time: string | undefined): string => {
    const year = Number(y);
    const month = Number(mo);
    if (month < 1 || month > 12) return found;
    if (d === undefined) {
      const shifted = new Date(Date.UTC(year, month - 1 + months, 1));
      return `${shifted.getUTCFullYear()}-${String(shifted.getUTCMonth() + 1).padStart(2, '0')}`;
    }
    const day = Number(d);
    if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return found;
    if (time === undefined) return new Date(Date.UTC(year, month - 1, day) + shiftMs).toISOString().slice(0, 10);
    const ms = Date.parse(found);
    if (Number.isNaN(ms)) return found;
    // Keep the original's zone suffix and precision: shift the date part, keep the clock time.
    const shiftedDay = new Date(Date.UTC(year, month - 1, day) + shiftMs).toISOString().slice(0, 10);
    return `${shiftedDay}${time}`;
  };

  // Entities: each name found gets another of its pool, never one already used in this variant.
  const entities = new Map<string, string>();
  const corpus = stringsOf(trajectory).join('\n');
  for (const [p, pool] of ENTITY_POOLS.entries()) {
    const present = pool.filter((name) => new RegExp(`(?<![\\p{L}])${name}(?![\\p{L}])`, 'u').test(corpus));
    const used = new Set(present);
    for (const name of present) {
      const free = pool.filter((n) => !used.has(n));
      if (free.length === 0) continue;
      const swapped = choose(free, ...at('entity', p, name));
      used.add(swapped);
      entities.set(name, swapped);
    }
  }
  const swapEntities = wholeNameReplacer(entities);

  const ids = new Map<string, string>();
  const newDigits = (digits: string): string => {
    let out = ids.get(digits);
    if (out === undefined) {
      const n = 10 ** (digits.length - 1);
      out = String(n + Math.floor(unitHash(...at('id', digits)) * 9 * n)).slice(0, digits.length);
      if (out === digits) out = String(n + ((Number(digits) - n + 1) % (9 * n)));
      ids.set(digits, out);
    }
    return out;
  };

  const quoted = new Set<number>();
  for (const text of stringsOf(trajectory)) for (const m of text.match(NUMBER_IN_TEXT) ?? []) quoted.add(Number(m));

  return {
    ...identityPlan,
    text: (text) => swapEntities(text.replace(DATE_IN_TEXT, shiftDate).replace(ID_IN_TEXT, (found: string, prefix: string, sep: string, digits: string) => (CODE_PREFIXES.has(prefix) ? found : `${prefix}${sep}${newDigits(digits)}`))),
    number: (value) => {
      if (!Number.isFinite(value) || quoted.has(value) || (Number.isInteger(value) && Math.abs(value) <= 2)) return value;
      const factor = 0.8 + 0.45 * unitHash(...at('number', value));
      const places = decimalsOf(value);
      let out = Math.round(value * factor * 10 ** places) / 10 ** places;
      if (out === value) out = value + Math.sign(value) * 10 ** -places;
      return out;
    },
    timestamp: (iso) => {
      const ms = Date.parse(iso);
      return Number.isNaN(ms) ? iso : new Date(ms + shiftMs).toISOString();
    },
  };
}
