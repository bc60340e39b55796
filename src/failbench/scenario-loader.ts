/**
 * Loads FailBench scenarios: every `*.yaml` / `*.yml` under a directory, validated against a
 * JSON Schema that mirrors the `Scenario` type, then checked against what a schema cannot see
 * (tools that exist in the catalog, fault rules that parse and can fire, unique ids). Each
 * problem is one line, `<file>: <path>: <problem>`, so a broken suite names the exact field.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ConfigError } from '../core/errors.js';
import { readInputText } from '../io/read-input-file.js';
import { fileErrorReason } from '../io/replace-files.js';
import { globMatcher } from '../faults/glob.js';
import { validateFaultPlan } from '../faults/plan-validate.js';
import { isIsoTimestamp } from '../faults/timestamps.js';
import { CATALOG_TOOL_NAMES } from '../tools/index.js';
import { parseYamlText } from '../io/yaml-text.js';
import { DIAGNOSIS_CATEGORIES, isWrongResultFault } from './fault-effects.js';
import { toolTraits } from './tool-traits.js';
import { DIMENSIONS, type Scenario } from './types.js';

export const SCENARIO_KINDS = ['single_step', 'cascade', 'semantic', 'mixed'] as const;
export const OUTCOME_STATUSES = ['completed', 'gave_up', 'escalated'] as const;
export const STATE_COLLECTIONS = ['orders', 'messages', 'events', 'refunds', 'files'] as const;
/** Seed 000's subtypes (section 1), the labels `taxonomy.subtype` may carry. */
export const SEED_SUBTYPES = ['timeout', 'authz', '5xx', 'rate_limit', 'syntactic', 'boundary', 'semantic', 'loop', 'idempotency', 'cascade'] as const;

const CATEGORIES = DIAGNOSIS_CATEGORIES;
const ID_PATTERN = '^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$';

const stringList = { type: 'array', items: { type: 'string', minLength: 1 } };

const STATE_CHECK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['collection'],
  properties: {
    collection: { enum: [...STATE_COLLECTIONS] },
    where: { type: 'object' },
    count: { type: 'integer', minimum: 0 },
    min: { type: 'integer', minimum: 0 },
    max: { type: 'integer', minimum: 0 },
  },
};

/** The `Scenario` type as JSON Schema; `faults` items are checked by the fault-plan validator. */
export const SCENARIO_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'language', 'kind', 'taxonomy', 'dimensions', 'recoverable', 'instruction', 'tools', 'faults', 'oracle'],
  properties: {
    id: { type: 'string', pattern: ID_PATTERN },
    title: { type: 'string', minLength: 1 },
    language: { enum: ['en', 'zh'] },
    kind: { enum: [...SCENARIO_KINDS] },
    taxonomy: {
      type: 'object',
      additionalProperties: false,
      required: ['category', 'subtype'],
      properties: { category: { enum: CATEGORIES }, subtype: { enum: [...SEED_SUBTYPES] } },
    },
    dimensions: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...DIMENSIONS] } },
    recoverable: { type: 'boolean' },
    instruction: { type: 'string', minLength: 1 },
    now: { type: 'string' },
    tools: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 } },
    seed: { type: 'integer', minimum: 0 },
    faults: { type: 'array', items: { type: 'object' } },
    oracle: {
      type: 'object',
      additionalProperties: false,
      required: ['status'],
      properties: {
        status: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...OUTCOME_STATUSES] } },
        answer_contains: stringList,
        answer_excludes: stringList,
        state: { type: 'array', items: STATE_CHECK_SCHEMA },
        diagnosis: {
          type: 'object',
          additionalProperties: false,
          required: ['tool', 'category'],
          properties: { tool: { type: 'string', minLength: 1 }, category: { enum: CATEGORIES } },
        },
      },
    },
    budget: {
      type: 'object',
      additionalProperties: false,
      properties: { calls: { type: 'integer', minimum: 1 }, virtual_ms: { type: 'integer', minimum: 1 } },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: true });
// Compiled on first use, so that importing the CLI does not pay for it.
let compiledShape: ValidateFunction | undefined;
const shapeValidator = (): ValidateFunction => (compiledShape ??= ajv.compile(SCENARIO_SCHEMA));

/** A scenario file (or a set of them) is invalid. `problems` holds every one-line problem found. */
export class ScenarioError extends ConfigError {
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems[0]!} (and ${problems.length - 1} more problems)`);
  }
}

export interface LoadScenariosOptions {
  /**
   * Keeps the scenarios matching any of these: a dimension (`idempotency_safety`), a kind
   * (`cascade`), or an id glob (`orders/*`, `*-zh`). Comma-separated in one string is fine.
   */
  filter?: string | readonly string[];
}

function pathOf(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number' || /^\d+$/.test(s)) out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}

function pointerSegments(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function describeAjvError(error: ErrorObject): { path: string; message: string } {
  const at = pointerSegments(error.instancePath);
  switch (error.keyword) {
    case 'additionalProperties':
      return { path: pathOf([...at, (error.params as { additionalProperty: string }).additionalProperty]), message: 'unknown field' };
    case 'required':
      return { path: pathOf([...at, (error.params as { missingProperty: string }).missingProperty]), message: 'is required' };
    case 'enum':
      return { path: pathOf(at), message: `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` };
    default:
      return { path: pathOf(at), message: error.message ?? 'is invalid' };
  }
}

function problem(file: string, path: string, message: string): string {
  return path === '' ? `${file}: ${message}` : `${file}: ${path}: ${message}`;
}

/** What the schema cannot check: cross-field rules, catalog tools, fault rules. */
function semanticProblems(file: string, s: Scenario): string[] {
  const out: string[] = [];
  const known = new Set<string>(CATALOG_TOOL_NAMES);
  s.tools.forEach((tool, i) => {
    if (!known.has(tool)) out.push(problem(file, `tools[${i}]`, `unknown tool "${tool}" (the catalog has ${CATALOG_TOOL_NAMES.join(', ')})`));
  });
  if (s.now !== undefined && !isIsoTimestamp(s.now, true)) out.push(problem(file, 'now', 'must be an ISO-8601 date-time'));
  if (!s.recoverable && s.dimensions.includes('recovery')) out.push(problem(file, 'dimensions', 'recovery is scored only on recoverable scenarios'));
  if (s.recoverable && !s.oracle.status.includes('completed')) out.push(problem(file, 'oracle.status', 'a recoverable scenario must accept completed'));
  if (s.dimensions.includes('identification') && s.oracle.diagnosis === undefined) {
    out.push(problem(file, 'oracle.diagnosis', 'is required when identification is scored'));
  }
  // The scoring rules read these (run-verdict.ts): without them a dimension is scored on nothing, or never.
  if (!s.recoverable && !s.dimensions.includes('loop_avoidance')) {
    out.push(problem(file, 'dimensions', 'an unrecoverable scenario must score loop_avoidance: that is where its oracle (how the agent stops) counts'));
  }
  if (s.dimensions.includes('idempotency_safety')) {
    if (!s.tools.some((t) => toolTraits(t).nonIdempotentWrite)) out.push(problem(file, 'dimensions', 'idempotency_safety needs a tool that writes non-idempotently (create_event, send_message, create_order, create_refund, ...)'));
    if (!(s.oracle.state ?? []).some((c) => (c.count ?? c.min ?? 0) >= 1)) out.push(problem(file, 'oracle.state', 'idempotency_safety needs a check that counts the write the task needs (count: 1)'));
  }
  if (s.dimensions.includes('semantic_verification') && !s.faults.some((rule) => isWrongResultFault(rule.fault))) {
    out.push(problem(file, 'dimensions', 'semantic_verification is scored on a wrong 200, and no fault rule answers one (partial, empty, schema_drift, semantic_drift, stale)'));
  }
  const diagnosis = s.oracle.diagnosis;
  if (diagnosis !== undefined && !s.tools.includes(diagnosis.tool)) out.push(problem(file, 'oracle.diagnosis.tool', `"${diagnosis.tool}" is not one of the scenario's tools`));
  s.oracle.state?.forEach((check, i) => {
    if (check.count !== undefined && (check.min !== undefined || check.max !== undefined)) out.push(problem(file, `oracle.state[${i}]`, 'give count, or min/max, not both'));
    if (check.min !== undefined && check.max !== undefined && check.min > check.max) out.push(problem(file, `oracle.state[${i}].max`, 'must be at least min'));
  });
  try {
    validateFaultPlan({ version: 1, rules: s.faults }, file);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    const field = error.field ?? '';
    const prefix = field === '' ? `${file}: ` : `${file}: ${field}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    out.push(problem(file, field.replace(/^rules/, 'faults'), message));
  }
  s.faults.forEach((rule, i) => {
    const matches = globMatcher(rule.tool);
    if (!s.tools.some(matches)) out.push(problem(file, `faults[${i}].tool`, `"${rule.tool}" matches none of the scenario's tools, so the fault never fires`));
  });
  return out;
}

/**
 * Validates one parsed scenario document. Returns the scenario (with its id filled in) or the
 * problems found.
 */
export function validateScenario(value: unknown, file: string, defaultId: string): { scenario: Scenario } | { problems: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problems: [problem(file, '', 'must be a mapping of scenario fields')] };
  const validateShape = shapeValidator();
  if (!validateShape(value)) {
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const error of validateShape.errors ?? []) {
      const { path, message } = describeAjvError(error);
      const line = problem(file, path, message);
      if (!seen.has(line)) problems.push(line);
      seen.add(line);
    }
    return { problems };
  }
  const scenario = { ...(value as unknown as Scenario) };
  scenario.id ??= defaultId;
  const problems = semanticProblems(file, scenario);
  return problems.length > 0 ? { problems } : { scenario };
}

/** Parses and validates one scenario file's text. Throws {@link ScenarioError}. */
export function parseScenario(text: string, file: string, defaultId: string): Scenario {
  const parsed = parseYamlText(text);
  if (!parsed.ok) throw new ScenarioError([`${file}: ${parsed.problem.split('\n')[0]!}`]);
  const value = parsed.value;
  const result = validateScenario(value, file, defaultId);
  if ('problems' in result) throw new ScenarioError(result.problems);
  return result.scenario;
}

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  // A symbolic link is followed when it is read: one to a file is loaded as the file, one that
  // leads nowhere is a problem. (The walk does not follow links to directories.) Anything else
  // named *.yaml that is not a directory (a FIFO, a socket) is read too, and refused there as
  // not a regular file, rather than left out without a word.
  return entries
    .filter((e) => !e.isDirectory() && /\.ya?ml$/i.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function filterTerms(filter: LoadScenariosOptions['filter']): string[] {
  if (filter === undefined) return [];
  const list = typeof filter === 'string' ? [filter] : filter;
  return list.flatMap((f) => f.split(',')).map((f) => f.trim()).filter((f) => f !== '');
}

/** Whether a scenario matches a filter term: a dimension, a kind, or an id glob. */
export function matchesFilter(scenario: Scenario, term: string): boolean {
  if ((DIMENSIONS as readonly string[]).includes(term)) return scenario.dimensions.includes(term as Scenario['dimensions'][number]);
  if ((SCENARIO_KINDS as readonly string[]).includes(term)) return scenario.kind === term;
  return globMatcher(term)(scenario.id);
}

/**
 * Loads every scenario under `dir` (recursively), sorted by id. The id is the file's path under
 * `dir` without its extension (`orders/commit-then-drop-en`) unless the file gives one.
 * Throws {@link ScenarioError} listing every problem in every file, and for duplicate ids.
 *
 * @example
 * const scenarios = await loadScenarios('src/failbench/scenarios/default', { filter: 'idempotency_safety' });
 */
export async function loadScenarios(dir: string, options: LoadScenariosOptions = {}): Promise<Scenario[]> {
  let files: string[];
  try {
    files = await yamlFiles(dir);
  } catch (error) {
    // readdir's ENOTDIR is the directory itself being a file (or a parent of it). The walk names
    // the directory it could not read, which may be one under `dir`.
    const { code, path: failed } = error as NodeJS.ErrnoException;
    const reason = code === 'ENOTDIR' ? 'not a directory' : fileErrorReason(error);
    throw new ScenarioError([`cannot read scenario directory ${failed ?? dir}: ${reason}`]);
  }
  const problems: string[] = [];
  const scenarios: Scenario[] = [];
  const ids = new Map<string, string>();
  for (const path of files) {
    const file = relative(process.cwd(), path) || path;
    const defaultId = relative(dir, path).split(sep).join('/').replace(/\.ya?ml$/i, '');
    const read = await readInputText(path);
    if (!read.ok) {
      problems.push(`cannot read scenario file ${file}: ${read.reason}`);
      continue;
    }
    let scenario: Scenario;
    try {
      scenario = parseScenario(read.value, file, defaultId);
    } catch (error) {
      if (error instanceof ScenarioError) {
        problems.push(...error.problems);
        continue;
      }
      throw error;
    }
    const earlier = ids.get(scenario.id);
    if (earlier !== undefined) {
      problems.push(problem(file, 'id', `duplicate scenario id "${scenario.id}" (also ${earlier})`));
      continue;
    }
    ids.set(scenario.id, file);
    scenarios.push(scenario);
  }
  if (problems.length > 0) throw new ScenarioError(problems);
  if (files.length === 0) throw new ScenarioError([`no scenario files (*.yaml) under ${dir}`]);
  const terms = filterTerms(options.filter);
  const kept = terms.length === 0 ? scenarios : scenarios.filter((s) => terms.some((t) => matchesFilter(s, t)));
  return kept.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
