/**
 * Which tool a proxied request calls. Records, fault rules and stats are all keyed by tool name,
 * so a REST API in front of the proxy needs its requests named the way an agent names its tools:
 * configured routes first (`GET /v1/weather` -> `get_weather`, `POST /tools/:name` -> `{name}`),
 * then `POST /tools/<name>` (the mock tool server's shape), then `METHOD /path` with the
 * identifiers in the path replaced by `:id`, so that `GET /orders/ORD-10041` and
 * `GET /orders/ORD-10042` count as one tool.
 */
import { ConfigError } from '../../core/errors.js';
import { readInputText } from '../../io/read-input-file.js';
import { parseYamlText } from '../../io/yaml-text.js';

/** One configured route. */
export interface ProxyRoute {
  /**
   * `METHOD /path`. METHOD is an HTTP method or `*`. Path segments are literals, `:param` (one
   * segment, captured), `*` (any one segment), or a final `**` (whatever follows, possibly nothing).
   */
  match: string;
  /** The tool name; `{param}` inserts a captured segment, e.g. `{name}` or `orders.{action}`. */
  tool: string;
  /** Whether repeating a call is safe. Default: by method; GET, HEAD, OPTIONS, PUT and DELETE are idempotent in HTTP. */
  idempotent?: boolean;
}

/** What a request resolved to. */
export interface RouteMatch {
  toolName: string;
  /** The configured `match` that named the tool, or the built-in rule (`POST /tools/:name`, `METHOD /path`). */
  route: string;
  /** Captured path segments the tool name does not use (arguments carried in the path). */
  params: Record<string, string>;
  idempotent: boolean;
}

export interface RouteTable {
  /** `path` is the request path without its query string. */
  resolve(method: string, path: string): RouteMatch;
}

/** RFC 9110 section 9.2.2: methods whose repetition has the same effect as one request. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const METHOD = /^(?:\*|[A-Za-z]{1,20})$/;
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Segment = { kind: 'literal'; text: string } | { kind: 'param'; name: string } | { kind: 'any' } | { kind: 'rest' };

interface CompiledRoute {
  source: ProxyRoute;
  method: string;
  segments: Segment[];
  toolParams: Set<string>;
  /** The tool name split at its placeholders: literal text at even indexes, parameter names at odd ones. */
  toolParts: string[];
  idempotent: boolean | undefined;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function fail(sourceName: string, where: string, message: string): never {
  throw new ConfigError(`${sourceName}: ${where}: ${message}`, where);
}

function compileRoute(route: ProxyRoute, where: string, sourceName: string): CompiledRoute {
  if (typeof route.match !== 'string') fail(sourceName, `${where}.match`, 'must be a string like "GET /v1/weather"');
  const parts = route.match.trim().split(/\s+/);
  const [method, path] = parts;
  if (parts.length !== 2 || method === undefined || path === undefined || !METHOD.test(method) || !path.startsWith('/')) {
    fail(sourceName, `${where}.match`, `expected "METHOD /path" (e.g. "POST /tools/:name"), got ${JSON.stringify(route.match)}`);
  }
  const names = new Set<string>();
  const raw = splitPath(path);
  const segments = raw.map((text, i): Segment => {
    if (text === '**') {
      if (i !== raw.length - 1) fail(sourceName, `${where}.match`, '"**" may only be the last segment');
      return { kind: 'rest' };
    }
    if (text === '*') return { kind: 'any' };
    if (text.startsWith(':')) {
      const name = text.slice(1);
      if (!PARAM_NAME.test(name)) fail(sourceName, `${where}.match`, `invalid parameter ${JSON.stringify(text)}`);
      if (names.has(name)) fail(sourceName, `${where}.match`, `parameter :${name} appears twice`);
      names.add(name);
      return { kind: 'param', name };
    }
    return { kind: 'literal', text: decodeSegment(text) };
  });
  if (typeof route.tool !== 'string' || route.tool.trim() === '') fail(sourceName, `${where}.tool`, 'must be a non-empty string');
  const toolParams = new Set<string>();
  for (const m of route.tool.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    if (!names.has(name)) fail(sourceName, `${where}.tool`, `{${name}} is not a parameter of ${JSON.stringify(route.match)}`);
    toolParams.add(name);
  }
  if (route.idempotent !== undefined && typeof route.idempotent !== 'boolean') fail(sourceName, `${where}.idempotent`, 'must be true or false');
  // split() with a capturing group keeps the captured names at the odd indexes.
  const toolParts = route.tool.split(/\{([A-Za-z_][A-Za-z0-9_]*)\}/);
  return { source: route, method: method.toUpperCase(), segments, toolParams, toolParts, idempotent: route.idempotent };
}

function toolNameOf(route: CompiledRoute, captured: Record<string, string>): string {
  const parts = route.toolParts;
  if (parts.length === 1) return parts[0]!;
  let name = '';
  for (let i = 0; i < parts.length; i++) name += i % 2 === 0 ? parts[i]! : (captured[parts[i]!] ?? '');
  return name;
}

function matchSegments(segments: readonly Segment[], path: readonly string[]): Record<string, string> | undefined {
  if (segments.length < path.length && segments[segments.length - 1]?.kind !== 'rest') return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.kind === 'rest') break;
    const actual = path[i];
    if (actual === undefined) return undefined;
    if (segment.kind === 'literal' && decodeSegment(actual) !== segment.text) return undefined;
    if (segment.kind === 'param') (params ??= {})[segment.name] = decodeSegment(actual);
  }
  return params ?? NO_PARAMS;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX_ID = /^[0-9a-f]{16,}$/i;
const VERSION = /^v\d+(?:\.\d+)*[a-z]*$/i;
const TOKEN = /^[A-Za-z0-9_-]{16,}$/;

/**
 * Whether a path segment is an identifier rather than part of the API's shape. Heuristic, tuned
 * to keep words with a digit or two (`v2`, `oauth2`, `s3`) and replace numbers, UUIDs, hex and
 * base62 ids, prefixed ids (`ORD-10041`, `cus_123abc`) and dates.
 */
export function isIdSegment(segment: string): boolean {
  let digits = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  // Most segments of an API's shape are words: without a digit only a UUID spelled in a-f is an id.
  if (digits === 0) return segment.length === 36 && UUID.test(segment);
  if (digits === segment.length || UUID.test(segment)) return true;
  if (VERSION.test(segment)) return false;
  if (HEX_ID.test(segment)) return true;
  if (digits >= 3) return true;
  return digits > 0 && TOKEN.test(segment) && /[A-Za-z]/.test(segment);
}

/** The path with empty segments dropped and identifiers replaced by `:id`: `/v1/orders/:id/items`. */
export function normalizePath(path: string): string {
  return normalizedSegments(splitPath(path));
}

function normalizedSegments(segments: readonly string[]): string {
  let out = '';
  for (const s of segments) out += isIdSegment(decodeSegment(s)) ? '/:id' : `/${s}`;
  return out === '' ? '/' : out;
}

function idempotentMethod(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method);
}

/**
 * Compiles routes; they are tried in order, then the built-in rules.
 * @throws ConfigError naming the first bad route, e.g. `routes.yaml: routes[1].match: expected "METHOD /path" ...`.
 * @example
 * const table = compileRoutes([{ match: 'GET /v1/weather', tool: 'get_weather' }]);
 * table.resolve('GET', '/v1/weather').toolName; // 'get_weather'
 * table.resolve('GET', '/v1/orders/ORD-10041').toolName; // 'GET /v1/orders/:id'
 */
export function compileRoutes(routes: readonly ProxyRoute[] = [], sourceName = 'routes'): RouteTable {
  const compiled = routes.map((route, i) => compileRoute(route, `routes[${i}]`, sourceName));
  return {
    resolve(rawMethod, path) {
      const method = rawMethod.toUpperCase();
      const segments = splitPath(path);
      for (const route of compiled) {
        if (route.method !== '*' && route.method !== method) continue;
        const captured = matchSegments(route.segments, segments);
        if (captured === undefined) continue;
        let params = captured;
        if (route.toolParams.size > 0) {
          params = {};
          for (const name in captured) if (!route.toolParams.has(name)) params[name] = captured[name]!;
        }
        return { toolName: toolNameOf(route, captured), route: route.source.match, params, idempotent: route.idempotent ?? idempotentMethod(method) };
      }
      if (method === 'POST' && segments.length === 2 && segments[0] === 'tools') {
        return { toolName: decodeSegment(segments[1]!), route: 'POST /tools/:name', params: NO_PARAMS, idempotent: false };
      }
      return { toolName: `${method} ${normalizedSegments(segments)}`, route: 'METHOD /path', params: NO_PARAMS, idempotent: idempotentMethod(method) };
    },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Reads routes from YAML or JSON text: `routes:` (or the document itself) is either a list of
 * `{ match, tool, idempotent? }` or a mapping of `"METHOD /path": tool`.
 * @throws ConfigError with one line naming the problem.
 * @example
 * parseRoutes('routes:\n  - { match: "GET /v1/weather", tool: get_weather }\n  - { match: "POST /tools/:name", tool: "{name}" }\n');
 */
export function parseRoutes(text: string, sourceName = 'routes'): ProxyRoute[] {
  const parsed = parseYamlText(text);
  if (!parsed.ok) throw new ConfigError(`${sourceName}: ${parsed.problem}`, undefined, { cause: parsed.cause });
  const value = parsed.value;
  const list = isPlainObject(value) && Object.hasOwn(value, 'routes') ? value['routes'] : value;
  let routes: ProxyRoute[];
  if (Array.isArray(list)) {
    routes = list.map((item, i) => {
      if (!isPlainObject(item)) fail(sourceName, `routes[${i}]`, 'must be an object with match and tool');
      const unknown = Object.keys(item).find((k) => k !== 'match' && k !== 'tool' && k !== 'idempotent');
      if (unknown !== undefined) fail(sourceName, `routes[${i}]`, `unknown field ${JSON.stringify(unknown)} (expected match, tool, idempotent)`);
      return item as unknown as ProxyRoute;
    });
  } else if (isPlainObject(list)) {
    routes = Object.entries(list).map(([match, tool]) => {
      if (typeof tool !== 'string') fail(sourceName, `routes[${JSON.stringify(match)}]`, 'must be a tool name');
      return { match, tool };
    });
  } else {
    throw new ConfigError(`${sourceName}: expected a list of routes or a mapping of "METHOD /path": tool`);
  }
  compileRoutes(routes, sourceName);
  return routes;
}

/** Reads and checks a routes file. @throws ConfigError. */
export async function loadRoutes(path: string): Promise<ProxyRoute[]> {
  const read = await readInputText(path);
  if (!read.ok) throw new ConfigError(`cannot read routes ${path}: ${read.reason}`, 'path', { cause: read.cause });
  return parseRoutes(read.value, path);
}
