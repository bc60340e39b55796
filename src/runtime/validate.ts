/**
 * Argument and output validation with Ajv, compiled once per tool.
 *
 * Input validation normalizes before it rejects, because agents get small things wrong that
 * have only one sensible reading: it fills defaults, coerces "123" to 123 where the schema says
 * number, and matches enum values case-insensitively or through declared synonyms
 * (`"x-synonyms": { "ascending": "asc" }` next to the `enum`). Extra properties pass unless the
 * schema forbids them. Whatever is still wrong comes back as issues with a code, a path and a
 * message the agent can act on.
 *
 * Output validation is strict: no coercion, no defaults, because a tool that starts returning
 * "123" where it promised a number is exactly the drift worth catching.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { cloneJson } from '../core/clone-json.js';
import { REDACTED, type Redactor } from '../record/redact.js';
import type { ParameterFailureType } from './tool-errors.js';

export type ValidationIssueCode =
  | 'missing_required'
  | 'type_mismatch'
  | 'enum_mismatch'
  | 'boundary_violation'
  | 'unknown_property'
  | 'format_mismatch'
  | 'schema_mismatch';

/** One thing wrong with a value, precise enough for an agent to fix it. */
export interface ValidationIssue {
  code: ValidationIssueCode;
  /** Where, e.g. `filters.region` or `items[2].qty`; empty for the value itself. */
  path: string;
  message: string;
  /** What the schema allows, when it says (allowed values, a bound, a type). */
  expected?: unknown;
  /** What was sent, when it is a scalar. */
  received?: unknown;
}

export type ValidationResult = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

export type Validator = (value: unknown) => ValidationResult;

export const SYNONYMS_KEYWORD = 'x-synonyms';

// ajv-formats ships CommonJS with `module.exports = formatsPlugin` and a `.default` alias.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

function makeAjv(normalizing: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    verbose: true,
    coerceTypes: normalizing,
    useDefaults: normalizing,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: SYNONYMS_KEYWORD, schemaType: 'object' });
  return ajv;
}

const inputAjv = makeAjv(true);
const outputAjv = makeAjv(false);

/** Distinct schemas kept compiled per Ajv instance before the cache starts over. */
const MAX_COMPILED = 1000;

/**
 * Compiles through a cache keyed by the schema's JSON text. Tool sets are rebuilt from the same
 * schemas over and over (a mock catalog per test, per benchmark run, per FailBench scenario), and
 * compiling dominates the cost of defining a tool; Ajv's own cache is keyed by object identity,
 * so it neither hits for an equal schema nor lets go of the old objects.
 */
function compileCached(ajv: Ajv, cache: Map<string, ValidateFunction>, schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = cache.get(key);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    ajv.removeSchema(schema);
    if (cache.size >= MAX_COMPILED) cache.clear();
    cache.set(key, validate);
  }
  return validate;
}

const compiledInputs = new Map<string, ValidateFunction>();
const compiledOutputs = new Map<string, ValidateFunction>();

/** Compiles a schema, throwing the Ajv error (the caller wraps it with the tool's name). */
export function compileInputValidator(schema: object): Validator {
  const validate = compileCached(inputAjv, compiledInputs, withoutMetaSchema(schema));
  return (value) => {
    // Ajv normalizes in place; the caller's arguments (and the record of them) stay as sent.
    const data = cloneJson(value);
    if (validate(data)) return { ok: true, value: data };
    if (fixEnums(data, validate.errors ?? []) && validate(data)) return { ok: true, value: data };
    return { ok: false, issues: toIssues(validate.errors ?? []) };
  };
}

export function compileOutputValidator(schema: object): Validator {
  const validate = compileCached(outputAjv, compiledOutputs, withoutMetaSchema(schema));
  return (value) => (validate(value) ? { ok: true, value } : { ok: false, issues: toIssues(validate.errors ?? []) });
}

/** The failure type a set of issues amounts to: the first issue decides. */
export function failureTypeOf(issues: readonly ValidationIssue[]): ParameterFailureType {
  const code = issues[0]?.code;
  switch (code) {
    case 'missing_required':
    case 'type_mismatch':
    case 'enum_mismatch':
    case 'boundary_violation':
      return code;
    default:
      return 'schema_mismatch';
  }
}

/** The object keys an issue path goes through: `creds["x-api-key"][0]` -> `['creds', 'x-api-key']` (indexes left out). */
export function issuePathKeys(path: string): string[] {
  const keys: string[] = [];
  for (const m of path.matchAll(/(?:^|\.)([A-Za-z_$][\w$]*)|\[("(?:[^"\\]|\\.)*")\]/g)) {
    if (m[1] !== undefined) keys.push(m[1]);
    else keys.push(JSON.parse(m[2]!) as string);
  }
  return keys;
}

/**
 * The issue without the value that was sent: `received` becomes `mask`, and so does the `got …`
 * its message ends with. For values under secret keys, which must not be quoted back.
 */
export function hideReceived(issue: ValidationIssue, mask: string): ValidationIssue {
  return replaceReceived(issue, mask, mask);
}

/**
 * The issue quoting `received` redacted: the message's `got …` is cut to a few dozen characters,
 * and a secret cut in the middle no longer matches its rule, so redacting the message afterwards
 * would keep the secret's first half. The value is redacted whole, then quoted and cut.
 */
export function redactReceived(issue: ValidationIssue, redact: (value: unknown) => unknown): ValidationIssue {
  if (!('received' in issue)) return issue;
  const redacted = redact(issue.received);
  return redacted === issue.received ? issue : replaceReceived(issue, redacted, show(redacted));
}

/**
 * Issues fit for a record: a value under a secret key (`password: must NOT have fewer than 12
 * characters, got "…"`) is hidden, as it is in the record's input_params; any other value is
 * redacted before the message quotes it cut short (see {@link redactReceived}).
 */
export function redactIssues(issues: ValidationIssue[], redactor: Pick<Redactor, 'isSecretKey' | 'value'>): ValidationIssue[] {
  const hidden = issues.map((issue) =>
    issuePathKeys(issue.path).some((key) => redactor.isSecretKey(key)) ? hideReceived(issue, REDACTED) : redactReceived(issue, (value) => redactor.value(value)),
  );
  return redactor.value(hidden);
}

function replaceReceived(issue: ValidationIssue, received: unknown, quoted: string): ValidationIssue {
  if (!('received' in issue)) return issue;
  const got = `got ${show(issue.received)}`;
  const message = issue.message.endsWith(got) ? `${issue.message.slice(0, -got.length)}got ${quoted}` : issue.message;
  return { ...issue, message, received };
}

/** One line listing the issues, for messages and hints. */
export function describeIssues(issues: readonly ValidationIssue[], max = 5): string {
  const shown = issues.slice(0, max).map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`));
  if (issues.length > max) shown.push(`and ${issues.length - max} more`);
  return shown.join('; ');
}

// Ajv's default meta-schema is draft-07; tools written for 2019-09/2020-12 (zod's default, many
// MCP servers) use the same keywords for argument objects, so the declaration is dropped rather
// than refused.
function withoutMetaSchema(schema: object): object {
  if (!('$schema' in schema)) return schema;
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Rewrites enum values that match case-insensitively or by synonym. Returns whether any changed. */
function fixEnums(data: unknown, errors: readonly ErrorObject[]): boolean {
  let changed = false;
  for (const error of errors) {
    if (error.keyword !== 'enum' || typeof error.data !== 'string') continue;
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    const replacement = matchEnum(error.data, allowed, (error.parentSchema as Record<string, unknown> | undefined)?.[SYNONYMS_KEYWORD]);
    if (replacement === undefined) continue;
    const segments = decodePointer(error.instancePath);
    const last = segments.pop();
    if (last === undefined) continue;
    let parent: unknown = data;
    for (const segment of segments) parent = (parent as Record<string, unknown> | undefined)?.[segment];
    if (parent === null || typeof parent !== 'object') continue;
    (parent as Record<string, unknown>)[last] = replacement;
    changed = true;
  }
  return changed;
}

function canonical(text: string): string {
  return text.trim().toLowerCase().replace(/[\s_-]+/g, '');
}

function matchEnum(received: string, allowed: readonly unknown[], synonyms: unknown): unknown {
  const wanted = canonical(received);
  for (const value of allowed) {
    if (typeof value === 'string' && canonical(value) === wanted) return value;
  }
  if (synonyms !== null && typeof synonyms === 'object') {
    for (const [alias, target] of Object.entries(synonyms as Record<string, unknown>)) {
      if (canonical(alias) === wanted && allowed.includes(target)) return target;
    }
  }
  return undefined;
}

/** `/items/0/qty` -> `items[0].qty` */
export function formatPath(pointer: string): string {
  let out = '';
  for (const segment of decodePointer(pointer)) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function joinPath(base: string, key: string): string {
  return formatPath(`${base}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

function scalar(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return Array.isArray(value) ? `array(${value.length})` : 'object';
}

function show(value: unknown): string {
  const s = JSON.stringify(scalar(value));
  return s === undefined ? String(value) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const BOUNDS: Record<string, string> = {
  minimum: '>=',
  maximum: '<=',
  exclusiveMinimum: '>',
  exclusiveMaximum: '<',
};

function toIssue(error: ErrorObject): ValidationIssue | undefined {
  const path = formatPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const received = scalar(error.data);
  switch (error.keyword) {
    case 'required': {
      const missing = String(params['missingProperty']);
      return { code: 'missing_required', path: joinPath(error.instancePath, missing), message: `required property "${missing}" is missing` };
    }
    case 'dependentRequired':
    case 'dependencies':
      return { code: 'missing_required', path, message: error.message ?? 'a required property is missing' };
    case 'type':
      return {
        code: 'type_mismatch',
        path,
        message: `must be ${String(params['type'])}, got ${show(error.data)}`,
        expected: params['type'],
        received,
      };
    case 'enum': {
      const allowed = (params['allowedValues'] as unknown[]) ?? [];
      return {
        code: 'enum_mismatch',
        path,
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}; got ${show(error.data)}`,
        expected: allowed,
        received,
      };
    }
    case 'const':
      return { code: 'enum_mismatch', path, message: `must be ${JSON.stringify(params['allowedValue'])}; got ${show(error.data)}`, expected: params['allowedValue'], received };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return {
        code: 'boundary_violation',
        path,
        message: `must be ${BOUNDS[error.keyword]} ${String(params['limit'])}, got ${show(error.data)}`,
        expected: { [error.keyword]: params['limit'] },
        received,
      };
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
    case 'multipleOf':
      return { code: 'boundary_violation', path, message: `${error.message ?? 'out of bounds'}, got ${show(error.data)}`, expected: { [error.keyword]: params['limit'] ?? params['multipleOf'] }, received };
    case 'additionalProperties': {
      const extra = String(params['additionalProperty']);
      return { code: 'unknown_property', path: joinPath(error.instancePath, extra), message: `unknown property "${extra}" is not allowed` };
    }
    case 'format':
      return { code: 'format_mismatch', path, message: `must be a valid ${String(params['format'])}, got ${show(error.data)}`, expected: params['format'], received };
    case 'pattern':
      return { code: 'format_mismatch', path, message: `must match ${String(params['pattern'])}, got ${show(error.data)}`, expected: params['pattern'], received };
    // anyOf/oneOf report their branches' errors separately; the summary line adds nothing an agent can act on.
    case 'anyOf':
    case 'oneOf':
    case 'if':
      return undefined;
    default:
      return { code: 'schema_mismatch', path, message: error.message ?? 'does not match the schema', received };
  }
}

function toIssues(errors: readonly ErrorObject[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const issue = toIssue(error);
    if (issue === undefined) continue;
    const key = `${issue.code}|${issue.path}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  if (issues.length === 0) issues.push({ code: 'schema_mismatch', path: '', message: 'does not match the schema' });
  return issues;
}
