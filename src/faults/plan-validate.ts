/**
 * Loading and validating fault plans. Ajv checks the shape in three passes (the plan, then each
 * rule's trigger, then its params, whose schema depends on the fault kind), so every message can
 * name the exact field: `plan.yaml: rules[2].trigger.nth: must be an array of positive integers`.
 * Anything that is wrong is a ConfigError with that one line.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ConfigError } from '../core/errors.js';
import { readInputText } from '../io/read-input-file.js';
import { parseRetryAfter } from '../runtime/retry-after.js';
import { closestNames } from '../runtime/suggest.js';
import { cloneJson } from '../core/clone-json.js';
import { parseJsonText, parseYamlText } from '../io/yaml-text.js';
import { TOOL_PATTERN } from './glob.js';
import { isJsonText } from './output-rewrites.js';
import { FAULT_KINDS, HTTP_FAULT_STATUSES, MAX_FAULT_DELAY_MS, type FaultKind, type FaultPlanSpec, type FaultRule, type FaultWindow } from './plan-spec.js';
import { isIsoTimestamp, isoInstant } from './timestamps.js';

/**
 * A schema annotation: the message for any failure inside this schema (except unknown and
 * missing fields, which always name the field itself). `{value}` is replaced by the offending
 * value as JSON.
 */
const MESSAGE = 'x-message';

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
ajv.addKeyword({ keyword: MESSAGE, schemaType: 'string' });

// RFC 9110 section 10.2.3: delay-seconds is digits only; "1.5" is not a Retry-After every client reads.
const RETRY_AFTER_MESSAGE = 'must be a whole number of seconds, an HTTP-date, or null for none';
const TRIGGER_MESSAGE = 'must be always, first_call_only, or an object with one of nth, one_of, every, after, probability, window';
const WINDOW_BOUND_MESSAGE = 'must be an ISO-8601 time or a number of milliseconds after the plan starts';
const WINDOW_ZONE_MESSAGE = 'must give its time zone (Z, or an offset such as +08:00): without one it would depend on the machine';
/** Outputs kept per tool and arguments for stale replays (see output-history.ts). */
const MAX_AGE_CALLS = 32;

const positiveInteger = { type: 'integer', minimum: 1, [MESSAGE]: 'must be a positive integer' };
const nonNegativeInteger = { type: 'integer', minimum: 0, [MESSAGE]: 'must be a non-negative integer' };
const milliseconds = { type: 'number', minimum: 0, [MESSAGE]: 'must be a non-negative number of milliseconds' };
const fieldList = { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, [MESSAGE]: 'must be a non-empty array of field names' };
const fieldMap = (valueSchema: object, message: string) => ({
  type: 'object',
  minProperties: 1,
  propertyNames: { minLength: 1 },
  additionalProperties: valueSchema,
  [MESSAGE]: message,
});

function paramsSchema(properties: Record<string, object>, required: string[] = []): object {
  return { type: 'object', additionalProperties: false, properties, required };
}

const PARAM_SCHEMAS: Record<FaultKind, object> = {
  timeout: paramsSchema({
    delay_ms: milliseconds,
    delay_seconds: { type: 'number', minimum: 0, [MESSAGE]: 'must be a non-negative number of seconds' },
  }),
  hang: paramsSchema({}),
  latency: paramsSchema({
    ms: milliseconds,
    distribution: { enum: ['uniform', 'normal', 'exponential'], [MESSAGE]: 'must be uniform, normal or exponential' },
    min_ms: milliseconds,
    max_ms: milliseconds,
    mean_ms: milliseconds,
    stddev_ms: milliseconds,
  }),
  http_status: paramsSchema(
    {
      status: { enum: [...HTTP_FAULT_STATUSES], [MESSAGE]: `must be one of ${HTTP_FAULT_STATUSES.join(', ')}` },
      body: {},
      retry_after: { type: ['integer', 'string', 'null'], minimum: 0, [MESSAGE]: RETRY_AFTER_MESSAGE },
      headers: fieldMap({ type: 'string' }, 'must be a map of header names to strings'),
      message: { type: 'string', [MESSAGE]: 'must be a string' },
      delay_ms: milliseconds,
      commit: { type: 'boolean', [MESSAGE]: 'must be true or false' },
    },
    ['status'],
  ),
  connection_refused: paramsSchema({ delay_ms: milliseconds }),
  connection_reset: paramsSchema({ delay_ms: milliseconds, commit: { type: 'boolean', [MESSAGE]: 'must be true or false' } }),
  dns_failure: paramsSchema({ delay_ms: milliseconds }),
  malformed_json: paramsSchema({ text: { type: 'string', [MESSAGE]: 'must be a string' } }),
  partial: paramsSchema({
    drop_fields: fieldList,
    drop_fraction: { type: 'number', exclusiveMinimum: 0, maximum: 1, [MESSAGE]: 'must be a number greater than 0 and at most 1' },
    note_field: { type: 'string', minLength: 1, [MESSAGE]: 'must be a field name' },
    note: { type: 'string', [MESSAGE]: 'must be a string' },
    silent: { type: 'boolean', [MESSAGE]: 'must be true or false' },
  }),
  empty: paramsSchema({}),
  schema_drift: paramsSchema({
    rename: fieldMap({ type: 'string', minLength: 1 }, 'must be a map of old field names to new ones'),
    retype: fieldMap(
      { enum: ['string', 'number', 'boolean', 'array', 'object', 'null'] },
      'must be a map of field names to string, number, boolean, array, object or null',
    ),
  }),
  semantic_drift: paramsSchema({
    shift_date: { type: 'integer', not: { const: 0 }, [MESSAGE]: 'must be a non-zero whole number of days' },
    other_entity: {
      type: 'object',
      additionalProperties: false,
      required: ['field'],
      properties: {
        field: { type: 'string', minLength: 1, [MESSAGE]: 'must be a field name' },
        value: {},
        values: { type: 'array', minItems: 1, [MESSAGE]: 'must be a non-empty array' },
      },
    },
    timezone_shift: { type: 'number', not: { const: 0 }, minimum: -24, maximum: 24, [MESSAGE]: 'must be a non-zero number of hours from -24 to 24' },
    fields: fieldList,
  }),
  stale: paramsSchema(
    {
      age_ms: { type: 'number', exclusiveMinimum: 0, [MESSAGE]: 'must be a positive number of milliseconds' },
      age_calls: { type: 'integer', minimum: 1, maximum: MAX_AGE_CALLS, [MESSAGE]: `must be an integer from 1 to ${MAX_AGE_CALLS}` },
      fields: fieldList,
    },
    ['age_ms'],
  ),
  auth_expiry: paramsSchema({ after_calls: nonNegativeInteger }, ['after_calls']),
  rate_limit_burst: paramsSchema(
    {
      capacity: positiveInteger,
      refill_per_sec: { type: 'number', exclusiveMinimum: 0, [MESSAGE]: 'must be a positive number' },
    },
    ['capacity', 'refill_per_sec'],
  ),
  commit_then_drop: paramsSchema({}),
  lost_write: paramsSchema({}),
};

const PLAN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'rules'],
  properties: {
    version: { const: 1, [MESSAGE]: 'must be 1' },
    seed: { type: 'integer', minimum: 0, maximum: 0xffffffff, [MESSAGE]: 'must be an integer from 0 to 4294967295' },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['tool', 'fault'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_.:@/-]{1,128}$', [MESSAGE]: 'must be 1-128 letters, digits or _ . : @ / -' },
          tool: { type: 'string', pattern: TOOL_PATTERN.source, [MESSAGE]: 'must be a tool name, or a glob using * and ?' },
          when: { type: 'object', [MESSAGE]: 'must be a map of argument names to values' },
          trigger: { type: ['string', 'object'], [MESSAGE]: TRIGGER_MESSAGE },
          fault: { enum: [...FAULT_KINDS], [MESSAGE]: `unknown fault kind {value} (expected one of: ${FAULT_KINDS.join(', ')})` },
          params: { type: 'object', [MESSAGE]: 'must be a map of parameters' },
          max_injections: positiveInteger,
        },
      },
    },
  },
};

const TRIGGER_OBJECT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  [MESSAGE]: TRIGGER_MESSAGE,
  properties: {
    nth: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 1 }, [MESSAGE]: 'must be an array of positive integers' },
    one_of: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'integer', minimum: 1 }, [MESSAGE]: 'must be an array of distinct positive integers' },
    every: positiveInteger,
    after: nonNegativeInteger,
    probability: { type: 'number', minimum: 0, maximum: 1, [MESSAGE]: 'must be a number from 0 to 1' },
    window: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      [MESSAGE]: 'must be an object with from, until or both (and jitter_ms)',
      properties: {
        from: { type: ['string', 'number'], minimum: 0, [MESSAGE]: WINDOW_BOUND_MESSAGE },
        until: { type: ['string', 'number'], minimum: 0, [MESSAGE]: WINDOW_BOUND_MESSAGE },
        jitter_ms: { type: 'integer', minimum: 0, maximum: MAX_FAULT_DELAY_MS, [MESSAGE]: `must be an integer from 0 to ${MAX_FAULT_DELAY_MS} (ms)` },
      },
    },
  },
};

// Compiled on first use: every CLI command imports this module, and most never read a plan.
let compiled: { plan: ValidateFunction; trigger: ValidateFunction; params: Record<FaultKind, ValidateFunction> } | undefined;
function validators(): NonNullable<typeof compiled> {
  compiled ??= {
    plan: ajv.compile(PLAN_SCHEMA),
    trigger: ajv.compile(TRIGGER_OBJECT_SCHEMA),
    params: Object.fromEntries(FAULT_KINDS.map((kind) => [kind, ajv.compile(PARAM_SCHEMAS[kind])])) as Record<FaultKind, ValidateFunction>,
  };
  return compiled;
}

/** `rules[2].trigger.nth` from path segments. */
function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number' || /^\d+$/.test(s)) out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s)) out += out === '' ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

interface Annotation {
  message: string;
  /** How many instance-path segments lead to the annotated schema. */
  depth: number;
}

/** The deepest `x-message` on the way from the root schema to the failing keyword. */
function annotationFor(root: object, error: ErrorObject): Annotation | undefined {
  const segments = decodePointer(error.schemaPath.replace(/^#/, ''));
  let node = root as Record<string, unknown> | undefined;
  let depth = 0;
  let found: Annotation | undefined;
  const last = segments.length - 1;
  for (let i = 0; node !== undefined; ) {
    const message = node[MESSAGE];
    if (typeof message === 'string') found = { message, depth };
    if (i >= last) break;
    const segment = segments[i]!;
    const child = node[segment] as Record<string, unknown> | undefined;
    if (segment === 'properties' || segment === 'patternProperties') {
      node = child?.[segments[i + 1]!] as Record<string, unknown> | undefined;
      i += 2;
      depth++;
    } else if (segment === 'items' || segment === 'additionalProperties') {
      node = child;
      i++;
      depth++;
    } else if (segment === 'oneOf' || segment === 'anyOf' || segment === 'allOf') {
      node = child?.[segments[i + 1]!] as Record<string, unknown> | undefined;
      i += 2;
    } else if (segment === 'not' || segment === 'if' || segment === 'then' || segment === 'else' || segment === 'propertyNames') {
      // A property name is checked at its object's own path, so these do not go deeper.
      node = child;
      i++;
    } else {
      break;
    }
  }
  return found;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  null: 'null',
};

interface Issue {
  path: (string | number)[];
  message: string;
}

function issueOf(root: object, error: ErrorObject, base: (string | number)[]): Issue {
  const at = decodePointer(error.instancePath);
  if (error.keyword === 'additionalProperties') {
    const field = String((error.params as { additionalProperty: string }).additionalProperty);
    const close = closestNames(field, propertiesAt(root, at), 1);
    return { path: [...base, ...at, field], message: `unknown field${close[0] === undefined ? '' : ` (did you mean "${close[0]}"?)`}` };
  }
  if (error.keyword === 'required') {
    return { path: [...base, ...at, String((error.params as { missingProperty: string }).missingProperty)], message: 'is required' };
  }
  const note = annotationFor(root, error);
  if (note !== undefined) {
    const message = note.message.replace('{value}', () => JSON.stringify(error.data) ?? String(error.data));
    return { path: [...base, ...at.slice(0, note.depth)], message };
  }
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'type') {
    const types = String((error.params as { type: string }).type).split(',');
    message = `must be ${types.map((t) => TYPE_NAMES[t] ?? t).join(' or ')}`;
  }
  return { path: [...base, ...at], message };
}

/** Unknown fields and missing ones are the likeliest typos, so they are reported before the rest. */
function firstIssue(root: object, errors: readonly ErrorObject[], base: (string | number)[]): Issue {
  const rank = (e: ErrorObject) => (e.keyword === 'additionalProperties' ? 0 : e.keyword === 'required' ? 1 : 2);
  const ruleOf = (e: ErrorObject) => {
    const m = /^\/rules\/(\d+)/.exec(e.instancePath);
    return m === null ? -1 : Number(m[1]);
  };
  const sorted = [...errors].sort((a, b) => ruleOf(a) - ruleOf(b) || rank(a) - rank(b));
  return issueOf(root, sorted[0]!, base);
}

class PlanIssue extends Error {
  constructor(readonly issue: Issue) {
    super(issue.message);
  }
}

function fail(path: (string | number)[], message: string): never {
  throw new PlanIssue({ path, message });
}

/** The field names the schema declares at an instance path, for "did you mean" suggestions. */
function propertiesAt(schema: object, path: string[]): string[] {
  let node = schema as Record<string, unknown> | undefined;
  for (const segment of path) {
    if (node === undefined) return [];
    if (/^\d+$/.test(segment) && node['items'] !== undefined) node = node['items'] as Record<string, unknown>;
    else node = (node['properties'] as Record<string, Record<string, unknown>> | undefined)?.[segment];
  }
  return Object.keys((node?.['properties'] as object | undefined) ?? {});
}

function checkWindow(window: FaultWindow, path: (string | number)[]): void {
  if (window.jitter_ms !== undefined && window.until === undefined) fail([...path, 'jitter_ms'], 'needs until: it moves the end of the window');
  if (window.from === undefined && window.until === undefined) fail(path, 'must be an object with from, until or both (and jitter_ms)');
  for (const key of ['from', 'until'] as const) {
    const bound = window[key];
    if (typeof bound === 'string' && isoInstant(bound) === undefined) {
      const zoneless = isIsoTimestamp(bound, true) && !/(?:Z|[+-]\d{2}(?::?\d{2})?)$/.test(bound);
      fail([...path, key], zoneless ? WINDOW_ZONE_MESSAGE : WINDOW_BOUND_MESSAGE);
    }
  }
  const { from, until } = window;
  if (from === undefined || until === undefined || typeof from !== typeof until) return;
  const [a, b] = typeof from === 'number' ? [from, until as number] : [isoInstant(from)!, isoInstant(until as string)!];
  if (a >= b) fail(path, 'from must be before until');
}

function checkTrigger(trigger: unknown, path: (string | number)[]): void {
  if (typeof trigger === 'string') {
    if (trigger !== 'always' && trigger !== 'first_call_only') fail(path, TRIGGER_MESSAGE);
    return;
  }
  const validateTriggerObject = validators().trigger;
  if (!validateTriggerObject(trigger)) {
    throw new PlanIssue(firstIssue(TRIGGER_OBJECT_SCHEMA, validateTriggerObject.errors ?? [], path));
  }
  const window = (trigger as { window?: FaultWindow }).window;
  if (window !== undefined) checkWindow(window, [...path, 'window']);
}

function exclusive(params: Record<string, unknown>, path: (string | number)[], a: string, b: string): void {
  if (params[a] !== undefined && params[b] !== undefined) fail(path, `give ${a} or ${b}, not both`);
}

function needsOne(params: Record<string, unknown>, path: (string | number)[], keys: string[]): void {
  if (keys.every((k) => params[k] === undefined)) fail(path, `needs ${keys.slice(0, -1).join(', ')}${keys.length > 2 ? ',' : ''} or ${keys[keys.length - 1]}`);
}

/** RFC 9110 section 5.6.2: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What node:http refuses in a header value (ERR_INVALID_CHAR): control characters other than tab, and anything beyond Latin-1. */
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Headers that frame the message or the connection: the transport sets them for the body it sends. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

/**
 * The servers write these headers as given, and node:http throws on a name or value that is not
 * valid HTTP; a plan must not get that far, where every matching call would fail as the
 * server's own error instead of the fault the record names.
 */
function checkHeaders(headers: Record<string, string> | undefined, path: (string | number)[]): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(name)) fail([...path, name], 'is not a valid HTTP header name');
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) fail([...path, name], 'is set by the transport, not by a plan');
    if (BAD_HEADER_VALUE.test(value)) fail([...path, name], 'must not contain line breaks or other control characters');
  }
}

/** Params that are waits on a timer, in milliseconds. */
const DELAY_FIELDS = ['delay_ms', 'ms', 'min_ms', 'max_ms', 'mean_ms', 'stddev_ms'];

/** What the schemas cannot say: fields that go together or exclude each other, texts that must parse (or must not). */
function checkParams(kind: FaultKind, params: Record<string, unknown>, path: (string | number)[]): void {
  for (const key of DELAY_FIELDS) {
    const ms = params[key];
    if (typeof ms === 'number' && ms > MAX_FAULT_DELAY_MS) fail([...path, key], `must be at most ${MAX_FAULT_DELAY_MS} (one day); for no answer at all, use hang`);
  }
  const seconds = params['delay_seconds'];
  if (typeof seconds === 'number' && seconds * 1000 > MAX_FAULT_DELAY_MS) fail([...path, 'delay_seconds'], `must be at most ${MAX_FAULT_DELAY_MS / 1000} (one day); for no answer at all, use hang`);
  switch (kind) {
    case 'timeout':
      exclusive(params, path, 'delay_ms', 'delay_seconds');
      return;
    case 'latency': {
      needsOne(params, path, ['ms', 'distribution']);
      exclusive(params, path, 'ms', 'distribution');
      const distribution = params['distribution'];
      const allowed =
        distribution === undefined
          ? ['ms']
          : distribution === 'uniform'
            ? ['distribution', 'min_ms', 'max_ms']
            : distribution === 'normal'
              ? ['distribution', 'mean_ms', 'stddev_ms', 'min_ms', 'max_ms']
              : ['distribution', 'mean_ms', 'min_ms', 'max_ms'];
      const required = distribution === 'uniform' ? ['min_ms', 'max_ms'] : distribution === 'normal' ? ['mean_ms', 'stddev_ms'] : distribution === 'exponential' ? ['mean_ms'] : [];
      for (const key of Object.keys(params)) {
        if (!allowed.includes(key)) fail([...path, key], distribution === undefined ? 'applies only with a distribution' : `does not apply to a ${String(distribution)} distribution`);
      }
      for (const key of required) if (params[key] === undefined) fail([...path, key], `is required for a ${String(distribution)} distribution`);
      const min = params['min_ms'];
      const max = params['max_ms'];
      if (typeof min === 'number' && typeof max === 'number' && max < min) fail([...path, 'max_ms'], 'must be at least min_ms');
      return;
    }
    case 'http_status': {
      const retryAfter = params['retry_after'];
      if (typeof retryAfter === 'string' && !/^\d+$/.test(retryAfter.trim()) && (!/[a-z]/i.test(retryAfter) || parseRetryAfter(retryAfter, 0) === undefined)) {
        fail([...path, 'retry_after'], RETRY_AFTER_MESSAGE);
      }
      checkHeaders(params['headers'] as Record<string, string> | undefined, [...path, 'headers']);
      return;
    }
    case 'malformed_json': {
      const text = params['text'];
      if (typeof text === 'string' && isJsonText(text)) fail([...path, 'text'], 'must not be valid JSON');
      return;
    }
    case 'partial':
      needsOne(params, path, ['drop_fields', 'drop_fraction']);
      return;
    case 'schema_drift':
      needsOne(params, path, ['rename', 'retype']);
      return;
    case 'semantic_drift': {
      needsOne(params, path, ['shift_date', 'other_entity', 'timezone_shift']);
      const entity = params['other_entity'] as Record<string, unknown> | undefined;
      if (entity !== undefined) {
        needsOne(entity, [...path, 'other_entity'], ['value', 'values']);
        exclusive(entity, [...path, 'other_entity'], 'value', 'values');
      }
      return;
    }
    default:
      return;
  }
}

function invalid(sourceName: string, issue: Issue): ConfigError {
  const field = formatPath(issue.path);
  return new ConfigError(field === '' ? `${sourceName}: ${issue.message}` : `${sourceName}: ${field}: ${issue.message}`, field === '' ? undefined : field);
}

/**
 * Checks a plan (as parsed from a file, or built in code) and returns a normalized copy: every
 * rule has its `id` (default `rule-<index>`), `trigger` (default `always`) and `params`.
 * Throws a {@link ConfigError} naming the first problem, e.g.
 * `plan.yaml: rules[2].trigger.nth: must be an array of positive integers`.
 */
export function validateFaultPlan(value: unknown, sourceName = 'fault plan'): FaultPlanSpec {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(sourceName, { path: [], message: 'must be an object with version and rules' });
  }
  const validatePlanShape = validators().plan;
  if (!validatePlanShape(value)) {
    throw invalid(sourceName, firstIssue(PLAN_SCHEMA, validatePlanShape.errors ?? [], []));
  }
  const plan = cloneJson(value) as { version: 1; seed?: number; rules: Record<string, unknown>[] };
  const ids = new Map<string, number>();
  try {
    plan.rules.forEach((rule, index) => {
      const path = ['rules', index];
      rule['id'] ??= `rule-${index}`;
      const id = rule['id'] as string;
      const earlier = ids.get(id);
      if (earlier !== undefined) fail([...path, 'id'], `duplicate rule id "${id}" (also rules[${earlier}])`);
      ids.set(id, index);
      rule['trigger'] ??= 'always';
      checkTrigger(rule['trigger'], [...path, 'trigger']);
      const kind = rule['fault'] as FaultKind;
      const params = (rule['params'] ??= {}) as Record<string, unknown>;
      const check = validators().params[kind];
      if (!check(params)) {
        throw new PlanIssue(firstIssue(PARAM_SCHEMAS[kind], check.errors ?? [], [...path, 'params']));
      }
      checkParams(kind, params, [...path, 'params']);
    });
  } catch (error) {
    if (error instanceof PlanIssue) throw invalid(sourceName, error.issue);
    throw error;
  }
  const spec: FaultPlanSpec = { version: 1, rules: plan.rules as unknown as FaultRule[] };
  if (plan.seed !== undefined) spec.seed = plan.seed;
  return spec;
}

/**
 * Parses a plan from YAML or JSON text (by `sourceName`'s extension: `.json` is read as JSON,
 * anything else as YAML, which also accepts JSON) and validates it.
 *
 * @example
 * const spec = parseFaultPlan('version: 1\nrules:\n  - { tool: get_weather, fault: http_status, params: { status: 503 } }\n', 'inline.yaml');
 */
export function parseFaultPlan(text: string, sourceName = 'fault plan'): FaultPlanSpec {
  let value: unknown;
  const parsed = sourceName.toLowerCase().endsWith('.json') ? parseJsonText(text) : parseYamlText(text);
  if (!parsed.ok) throw new ConfigError(`${sourceName}: ${parsed.problem}`, undefined, { cause: parsed.cause });
  value = parsed.value;
  return validateFaultPlan(value, sourceName);
}

/** Reads and validates a plan file (YAML, or JSON for `.json`). Throws {@link ConfigError}. */
export async function loadFaultPlan(path: string): Promise<FaultPlanSpec> {
  const read = await readInputText(path);
  if (!read.ok) throw new ConfigError(`cannot read fault plan ${path}: ${read.reason}`, 'path', { cause: read.cause });
  return parseFaultPlan(read.value, path);
}
