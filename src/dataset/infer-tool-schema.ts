/**
 * JSON Schema for a tool's parameters, inferred from the arguments it was called with, for
 * when the source logged calls but not the tool definitions.
 */

/** The subset of JSON Schema the inference produces. */
export interface InferredSchema {
  type?: string | string[];
  properties?: Record<string, InferredSchema>;
  required?: string[];
  items?: InferredSchema;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'boolean' : 'string';
}

function typesOf(schema: InferredSchema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

function schemaOf(value: unknown): InferredSchema {
  const type = jsonType(value);
  if (type === 'array') {
    const items = (value as unknown[]).reduce<InferredSchema | undefined>((acc, item) => merge(acc, schemaOf(item)), undefined);
    return items === undefined ? { type } : { type, items };
  }
  if (type === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return { type, properties: Object.fromEntries(entries.map(([k, v]) => [k, schemaOf(v)])), required: entries.map(([k]) => k).sort() };
  }
  return { type };
}

/** The schema that accepts everything either accepts (properties missing on one side become optional). */
function merge(a: InferredSchema | undefined, b: InferredSchema): InferredSchema {
  if (a === undefined) return b;
  let types = [...new Set([...typesOf(a), ...typesOf(b)])];
  // An integer seen beside a fraction is a number.
  if (types.includes('integer') && types.includes('number')) types = types.filter((t) => t !== 'integer');
  types.sort();
  const out: InferredSchema = { type: types.length === 1 ? types[0]! : types };
  if (a.properties !== undefined || b.properties !== undefined) {
    const keys = [...new Set([...Object.keys(a.properties ?? {}), ...Object.keys(b.properties ?? {})])].sort();
    out.properties = Object.fromEntries(keys.map((k) => [k, merge(a.properties?.[k], b.properties?.[k] ?? {})]));
    const required = a.required === undefined ? b.required ?? [] : b.required === undefined ? a.required : a.required.filter((k) => b.required!.includes(k));
    out.required = [...required].sort();
  }
  if (a.items !== undefined || b.items !== undefined) {
    out.items = b.items === undefined ? a.items! : merge(a.items, b.items);
  }
  return out;
}

/**
 * The parameters schema accepting every object in `calls` (arguments that are not objects,
 * such as a model's unparseable argument text, are ignored): property types are the union of
 * the JSON types seen, and a property is required when every call had it.
 * @example inferParametersSchema([{ city: 'Paris' }, { city: 'Rome', days: 2 }])
 * // { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] }
 */
export function inferParametersSchema(calls: readonly unknown[]): InferredSchema {
  let schema: InferredSchema | undefined;
  for (const args of calls) {
    if (jsonType(args) === 'object') schema = merge(schema, schemaOf(args));
  }
  return schema ?? { type: 'object', properties: {}, required: [] };
}
