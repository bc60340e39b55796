/**
 * `defineTool`: a tool's contract, checked and compiled once, at definition time.
 */
import { toJSONSchema } from 'zod';
import type * as z from 'zod';
import { ToolDefinitionError } from '../core/errors.js';
import type { BreakerOptions } from './breaker.js';
import type { Clock } from '../core/clock.js';
import type { FeedbackOverrides } from './feedback.js';
import { compilePostConditions, type PostConditions, type Verify, type VerifyContext } from './post-conditions.js';
import type { AdaptiveTimeoutOptions } from './adaptive-timeout.js';
import type { RetryOptions } from './retry-policy.js';
import { compileInputValidator, compileOutputValidator, type Validator } from './validate.js';

/** A JSON Schema object. Tool inputs must be `type: "object"` schemas. */
export type JsonSchema = Record<string, unknown>;

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the call times out or the caller cancels it. Pass it to fetch and friends. */
  readonly signal: AbortSignal;
  /** 0 for the first attempt, 1 for the first retry, ... */
  readonly attempt: number;
  /** The same on every attempt of one logical call: send it to APIs that deduplicate writes. */
  readonly idempotencyKey: string;
  readonly traceId: string;
  readonly toolName: string;
  /** The runtime's clock: use it instead of Date.now / setTimeout so virtual time applies. */
  readonly clock: Clock;
  /**
   * Set when a fault plan's `lost_write` runs this call as a dry run: answer as the real call
   * would, and apply nothing. A tool that ignores it applies the call (the fault then is not what
   * it says); faultline's mock tools honour it.
   */
  readonly dryRun?: boolean;
}

/** MCP tool annotations; `readOnlyHint` / `idempotentHint` declare idempotency when `idempotent` is not given. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

type SchemaInput = JsonSchema | z.ZodType;

export interface ToolSpec<Args, Output> {
  /** 1-128 characters of letters, digits, `_`, `-` and `.` (the MCP tool-name rule). */
  name: string;
  /** What the tool does, and how it fails: agents read this. */
  description: string;
  /** JSON Schema of the arguments, or a zod 4 schema (converted to JSON Schema). */
  input: SchemaInput;
  /**
   * If given, outputs are checked strictly; a mismatch is a `result_parse` failure. Its
   * annotations `x-echoes`, `x-within`, `x-max-age-ms` and `x-non-empty-when` declare
   * post-conditions (see `post-conditions.ts`).
   */
  output?: SchemaInput;
  /**
   * A post-condition in code: whether a successful answer answers the request. Return nothing
   * (or `true`) when it does, else the issues (`{ field, expected, actual }`); they become a
   * `result_parse` / `semantic` failure whose feedback names the field and both values.
   * @example verify: (args, out) => out.city === args.city ? undefined : { field: 'city', expected: args.city, actual: out.city }
   */
  verify?(args: Args, output: Output, ctx: VerifyContext): ReturnType<Verify>;
  /** Per-attempt timeout. Default 10 s. */
  timeoutMs?: number;
  /**
   * Opt in to an adaptive timeout: k x p99 of recent successes, clamped to `floorMs` and
   * `ceilingMs` (default `timeoutMs`), read back from the store at startup. `true`: the defaults.
   */
  adaptiveTimeout?: AdaptiveTimeoutOptions | boolean;
  retry?: Partial<RetryOptions>;
  /**
   * Whether repeating the call is harmless. Undeclared tools are treated as non-idempotent and
   * are never retried after an ambiguous failure (timeout, connection reset).
   */
  idempotent?: boolean;
  /** The tool accepts `ctx.idempotencyKey` and deduplicates on it, so retrying writes is safe. */
  idempotencyKey?: boolean;
  /** A tool to call instead when this one's circuit is open or its rate limit is exhausted. */
  fallback?: string;
  breaker?: Partial<BreakerOptions>;
  /**
   * A cheap call that says whether the tool is up, for the runtime's background probes of an
   * open circuit (`breakerProbes`); throwing or returning a failure means down. Without it, an
   * idempotent tool is probed with the call that opened the circuit.
   */
  healthCheck?: (ctx: ToolContext) => unknown;
  feedback?: FeedbackOverrides;
  annotations?: ToolAnnotations;
  execute(args: Args, ctx: ToolContext): Promise<Output> | Output;
}

const TOOL_MARKER = Symbol.for('faultline.tool');

/** A checked, compiled tool. Create with {@link defineTool}. */
export interface Tool<Args = any, Output = unknown> {
  readonly [TOOL_MARKER]: true;
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema | undefined;
  readonly timeoutMs: number;
  readonly adaptiveTimeout: AdaptiveTimeoutOptions | undefined;
  /** Overrides of the runtime's retry defaults (only what the tool set). */
  readonly retry: Readonly<Partial<RetryOptions>>;
  readonly idempotent: boolean;
  readonly idempotencyKey: boolean;
  readonly fallback: string | undefined;
  /** Overrides of the runtime's breaker defaults (only what the tool set). */
  readonly breaker: Readonly<Partial<BreakerOptions>>;
  readonly healthCheck: ((ctx: ToolContext) => unknown) | undefined;
  readonly feedback: FeedbackOverrides | undefined;
  readonly annotations: ToolAnnotations | undefined;
  readonly validateInput: Validator;
  readonly validateOutput: Validator | undefined;
  /** The post-conditions of the output schema's annotations and `verify`; undefined when there are none. */
  readonly postConditions: PostConditions | undefined;
  readonly execute: (args: Args, ctx: ToolContext) => Promise<Output> | Output;
}

export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_MARKER] === true;
}

const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

function isZod(schema: unknown): schema is z.ZodType {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

function toSchema(name: string, which: 'input' | 'output', schema: unknown): JsonSchema {
  if (isZod(schema)) {
    try {
      return toJSONSchema(schema, { io: which, target: 'draft-7', unrepresentable: 'any' }) as JsonSchema;
    } catch (error) {
      throw new ToolDefinitionError(name, `the ${which} zod schema cannot be expressed as JSON Schema: ${(error as Error).message}`, { cause: error });
    }
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new ToolDefinitionError(name, `${which} must be a JSON Schema object or a zod 4 schema`);
  }
  if ('_def' in schema && 'safeParse' in schema) {
    throw new ToolDefinitionError(name, `${which} looks like a zod 3 schema; use zod 4 or plain JSON Schema`);
  }
  return schema as JsonSchema;
}

function positive(name: string, field: string, value: number | undefined, allowZero = false): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new ToolDefinitionError(name, `${field} must be a ${allowZero ? 'non-negative' : 'positive'} finite number, got ${String(value)}`);
  }
}

/**
 * Checks and compiles a tool. Throws {@link ToolDefinitionError} for anything wrong, so mistakes
 * surface when the program starts rather than on the first call.
 *
 * @example
 * const getWeather = defineTool({
 *   name: 'get_weather',
 *   description: 'Weather for a city on a date. 404 if the city is unknown.',
 *   input: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' } }, required: ['city'] },
 *   idempotent: true,
 *   timeoutMs: 3000,
 *   execute: async ({ city, unit }, { signal }) => (await fetch(`https://api.example/weather?city=${city}&unit=${unit}`, { signal })).json(),
 * });
 */
export function defineTool<S extends z.ZodType, Output = unknown>(spec: ToolSpec<z.output<S>, Output> & { input: S }): Tool<z.output<S>, Output>;
export function defineTool<Args = Record<string, unknown>, Output = unknown>(spec: ToolSpec<Args, Output>): Tool<Args, Output>;
export function defineTool(spec: ToolSpec<any, unknown>): Tool {
  if (typeof spec !== 'object' || spec === null) throw new ToolDefinitionError(String(spec), 'a tool definition must be an object');
  const name = spec.name;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new ToolDefinitionError(String(name), 'name must be 1-128 characters of letters, digits, "_", "-" or "."');
  }
  if (typeof spec.description !== 'string' || spec.description.trim() === '') throw new ToolDefinitionError(name, 'description is required');
  if (typeof spec.execute !== 'function') throw new ToolDefinitionError(name, 'execute must be a function');
  if (spec.healthCheck !== undefined && typeof spec.healthCheck !== 'function') throw new ToolDefinitionError(name, 'healthCheck must be a function');
  if (spec.verify !== undefined && typeof spec.verify !== 'function') throw new ToolDefinitionError(name, 'verify must be a function');
  positive(name, 'timeoutMs', spec.timeoutMs);
  positive(name, 'retry.maxRetries', spec.retry?.maxRetries, true);
  positive(name, 'retry.baseDelayMs', spec.retry?.baseDelayMs, true);
  positive(name, 'retry.maxDelayMs', spec.retry?.maxDelayMs, true);
  positive(name, 'retry.maxRetryAfterMs', spec.retry?.maxRetryAfterMs, true);
  positive(name, 'breaker.failureThreshold', spec.breaker?.failureThreshold);
  positive(name, 'breaker.cooldownMs', spec.breaker?.cooldownMs, true);
  if (spec.retry?.factor !== undefined && !(spec.retry.factor >= 1)) throw new ToolDefinitionError(name, `retry.factor must be >= 1, got ${spec.retry.factor}`);
  if (spec.retry?.maxRetries !== undefined && !Number.isInteger(spec.retry.maxRetries)) throw new ToolDefinitionError(name, 'retry.maxRetries must be an integer');
  if (spec.fallback !== undefined && (typeof spec.fallback !== 'string' || spec.fallback === name)) {
    throw new ToolDefinitionError(name, 'fallback must name another tool');
  }

  const inputSchema = toSchema(name, 'input', spec.input);
  if (inputSchema['type'] !== 'object') throw new ToolDefinitionError(name, 'the input schema must describe an object (type: "object")');
  const outputSchema = spec.output === undefined ? undefined : toSchema(name, 'output', spec.output);

  let validateInput: Validator;
  let validateOutput: Validator | undefined;
  try {
    validateInput = compileInputValidator(inputSchema);
  } catch (error) {
    throw new ToolDefinitionError(name, `invalid input schema: ${(error as Error).message}`, { cause: error });
  }
  try {
    validateOutput = outputSchema === undefined ? undefined : compileOutputValidator(outputSchema);
  } catch (error) {
    throw new ToolDefinitionError(name, `invalid output schema: ${(error as Error).message}`, { cause: error });
  }

  const annotations = spec.annotations;
  const idempotent = spec.idempotent ?? (annotations?.idempotentHint === true || annotations?.readOnlyHint === true);

  return Object.freeze({
    [TOOL_MARKER]: true as const,
    name,
    description: spec.description,
    inputSchema,
    outputSchema,
    timeoutMs: spec.timeoutMs ?? 10_000,
    adaptiveTimeout: spec.adaptiveTimeout === true ? {} : spec.adaptiveTimeout === false ? undefined : spec.adaptiveTimeout,
    retry: Object.freeze(definedOnly(spec.retry)),
    idempotent,
    idempotencyKey: spec.idempotencyKey ?? false,
    fallback: spec.fallback,
    breaker: Object.freeze(definedOnly(spec.breaker)),
    healthCheck: spec.healthCheck,
    feedback: spec.feedback,
    annotations,
    validateInput,
    validateOutput,
    postConditions: compilePostConditions(outputSchema, spec.verify as Verify | undefined),
    execute: spec.execute,
  });
}

export function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
