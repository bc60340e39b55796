/**
 * `rename` variants: every tool and field name rewritten with synonyms of its words
 * (`get_weather` → `fetchForecast`, `city` → `town`), consistently in calls, arguments, bodies,
 * decisions, annotations and every text, so that a model trained on failures does not learn the
 * names instead of the pattern. The style (snake or camel case) is drawn per variant too.
 */
import { nameWords } from '../../annotate/step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { SYNONYMS } from './vocabulary.js';
import { bodyKeysOf, choose, joinName, parameterKeysOf, toolNamesOf, wholeNameReplacer, identityPlan, type NameStyle, type VariantPlan } from './variant-plan.js';

/** Used when none of a tool name's words has a synonym, so the old name still disappears. */
const CODENAMES = ['nova', 'orbit', 'quartz', 'pixel', 'ember', 'cobalt', 'atlas', 'zephyr'];
const SHORT_NAME = 3;

export interface RenameMaps {
  tools: Map<string, string>;
  keys: Map<string, string>;
  style: NameStyle;
}

/** The names of the variant: the same word always becomes the same synonym within it. */
export function renameMaps(trajectory: Trajectory, seed: number, variant: number): RenameMaps {
  const at = (...parts: (string | number)[]) => [seed, 'rename', variant, trajectory.trajectory_id, ...parts];
  const style = choose<NameStyle>(['snake', 'camel'], ...at('style'));
  const words = new Map<string, string>();
  const wordOf = (word: string): string => {
    let out = words.get(word);
    if (out === undefined) {
      const options = SYNONYMS[word];
      out = options === undefined ? word : choose(options, ...at('word', word));
      words.set(word, out);
    }
    return out;
  };
  const oldTools = toolNamesOf(trajectory);
  const taken = new Set<string>();
  const unique = (name: string): string => {
    let candidate = name;
    for (let n = 2; taken.has(candidate); n++) candidate = `${name}${style === 'snake' ? '_' : ''}${n}`;
    taken.add(candidate);
    return candidate;
  };
  const containsOldTool = (name: string) => oldTools.some((old) => name.toLowerCase().includes(old.toLowerCase()));

  const tools = new Map<string, string>();
  for (const tool of oldTools) {
    let renamed = joinName(nameWords(tool).map(wordOf), style);
    if (renamed === '' || containsOldTool(renamed)) renamed = joinName([choose(CODENAMES, ...at('codename', tool)), 'action'], style);
    tools.set(tool, unique(renamed));
  }
  const keys = new Map<string, string>();
  const params = parameterKeysOf(trajectory);
  const candidates = [...params.keys(), ...bodyKeysOf(trajectory, params).keys()].map((key) => [key, joinName(nameWords(key).map(wordOf), style)] as const);
  // Keys that keep their name are claimed first, so a renamed key never lands on one of them.
  for (const [key, renamed] of candidates) if (renamed === '' || renamed === key) keys.set(key, unique(key));
  for (const [key, renamed] of candidates) if (!keys.has(key)) keys.set(key, unique(renamed));
  return { tools, keys, style };
}

export function renamePlan(trajectory: Trajectory, seed: number, variant: number): VariantPlan {
  const { tools, keys } = renameMaps(trajectory, seed, variant);
  // Tool names win over a key spelled the same; keys too short to be told from ordinary words stay out of prose.
  const inText = new Map([...[...keys].filter(([k]) => k.length >= SHORT_NAME), ...tools]);
  return { ...identityPlan, tool: (n) => tools.get(n) ?? n, key: (k) => keys.get(k) ?? k, text: wholeNameReplacer(inText) };
}
