/**
 * `domain` variants: the trajectory mapped onto another domain of the mock catalog or tau-bench's
 * airline (weather → sales, orders → calendar, airline → payments, …). Each tool becomes the target domain's tool with the same role
 * (read, list, search, create, cancel: the verb of its name), each argument the target's field
 * of the same kind (text, date, number, enum, id: from its first value; nested keys too), and,
 * when the source domain is one of these, its nouns in prose become the target's. Values are kept, so the arguments that failed still fail
 * the same way; response-body fields that are not arguments keep their names.
 */
import { nameWords } from '../../annotate/step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { parseDateValue } from '../predictor-exporter.js';
import { DOMAINS, ROLE_VERBS, type DomainProfile, type FieldKind, type ToolRole } from './vocabulary.js';
import { bodyKeysOf, choose, identityPlan, parameterKeysOf, toolNamesOf, wholeNameReplacer, type VariantPlan } from './variant-plan.js';

const ROLES: readonly ToolRole[] = ['read', 'list', 'search', 'create', 'cancel'];
const SHORT_NAME = 3;

export function roleOf(tool: string): ToolRole {
  for (const word of nameWords(tool)) for (const role of ROLES) if (ROLE_VERBS[role].includes(word)) return role;
  return 'read';
}

export function fieldKindOf(key: string, value: unknown): FieldKind {
  const words = nameWords(key);
  if (words[words.length - 1] === 'id' || (typeof value === 'string' && /^[A-Z]{2,}[-_]?\d+$/.test(value))) return 'id';
  if (typeof value === 'string' && parseDateValue(value) !== undefined) return 'date';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean' || (typeof value === 'string' && /^[a-z][a-z_-]{0,23}$/.test(value))) return 'enum';
  if (typeof value === 'string') return 'text';
  return 'other';
}

/** The domain a trajectory is about: its `metadata.domain`, else the one whose keywords its tool names use most. */
export function domainOf(trajectory: Trajectory): DomainProfile | undefined {
  const named = DOMAINS.find((d) => d.name === trajectory.metadata.domain);
  if (named !== undefined) return named;
  const words = toolNamesOf(trajectory).flatMap(nameWords);
  let best: DomainProfile | undefined;
  let hits = 0;
  for (const d of DOMAINS) {
    const n = words.filter((w) => d.keywords.includes(w)).length;
    if (n > hits) [best, hits] = [d, n];
  }
  return best;
}

export interface DomainMapping {
  source: DomainProfile | undefined;
  target: DomainProfile;
  tools: Map<string, string>;
  keys: Map<string, string>;
}

export function domainMapping(trajectory: Trajectory, seed: number, variant: number): DomainMapping {
  const source = domainOf(trajectory);
  const target = choose(
    DOMAINS.filter((d) => d !== source),
    seed, 'domain', variant, trajectory.trajectory_id,
  );
  const oldTools = toolNamesOf(trajectory);
  const taken = new Set<string>(oldTools);
  const claim = (candidates: readonly string[]): string => {
    const free = candidates.find((c) => !taken.has(c));
    let name = free ?? candidates[0]!;
    for (let n = 2; taken.has(name); n++) name = `${candidates[0]}_${n}`;
    taken.add(name);
    return name;
  };
  const tools = new Map<string, string>();
  for (const tool of oldTools) {
    const role = roleOf(tool);
    tools.set(tool, claim([target.tools[role], ...ROLES.map((r) => target.tools[r])]));
  }
  const keys = new Map<string, string>();
  const params = parameterKeysOf(trajectory);
  // Body fields keep their names: no argument may be renamed onto one of them.
  for (const key of bodyKeysOf(trajectory, params).keys()) taken.add(key);
  for (const [key, value] of params) {
    const fields = target.fields[fieldKindOf(key, value)];
    keys.set(key, claim(fields));
  }
  return { source, target, tools, keys };
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export function domainPlan(trajectory: Trajectory, seed: number, variant: number): { plan: VariantPlan; target: string } {
  const { source, target, tools, keys } = domainMapping(trajectory, seed, variant);
  const prose = new Map<string, string>();
  for (const word of source?.keywords ?? []) {
    prose.set(word, target.noun);
    prose.set(capitalized(word), capitalized(target.noun));
  }
  for (const [k, v] of keys) if (k.length >= SHORT_NAME) prose.set(k, v);
  for (const [k, v] of tools) prose.set(k, v);
  return { plan: { ...identityPlan, tool: (n) => tools.get(n) ?? n, key: (k) => keys.get(k) ?? k, text: wholeNameReplacer(prose) }, target: target.name };
}
