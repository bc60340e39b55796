import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { createVirtualClock } from '../core/clock.js';
import { appliesOnlyOnSuccess, type FaultDecision } from './decision.js';
import { createFaultPlan, type FaultPlan } from './plan.js';
import type { FaultPlanSpec, FaultRule, FaultTrigger } from './plan-spec.js';
import { loadFaultPlan, parseFaultPlan, validateFaultPlan } from './plan-validate.js';
import { YAML_ALIAS_BOMB } from '../io/yaml-alias-bomb.test-helpers.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const messageOf = (fn: () => unknown) => configError(fn).message;

function planOf(...rules: FaultRule[]): FaultPlanSpec {
  return { version: 1, rules };
}

/** Which of `n` calls to `toolName` get a fault. */
function firing(plan: FaultPlan, n: number, toolName = 't', args: unknown = {}): number[] {
  const hits: number[] = [];
  for (let i = 1; i <= n; i++) if (plan.decide({ toolName, args }) !== undefined) hits.push(i);
  return hits;
}

describe('parseFaultPlan: the file format', () => {
  it('reads YAML, fills in ids, triggers and params', () => {
    const spec = parseFaultPlan(
      [
        'version: 1',
        'seed: 7',
        'rules:',
        '  - tool: query_sales_data',
        '    trigger: first_call_only',
        '    fault: timeout',
        '    params: { delay_seconds: 35 }',
        '  - id: orders-429',
        '    tool: create_*',
        '    when: { region: eu }',
        '    trigger: { nth: [1, 3] }',
        '    fault: http_status',
        '    params: { status: 429, retry_after: 30 }',
        '    max_injections: 5',
        '  - tool: "*"',
        '    fault: hang',
      ].join('\n'),
      'plan.yaml',
    );
    expect(spec).toEqual({
      version: 1,
      seed: 7,
      rules: [
        { id: 'rule-0', tool: 'query_sales_data', trigger: 'first_call_only', fault: 'timeout', params: { delay_seconds: 35 } },
        { id: 'orders-429', tool: 'create_*', when: { region: 'eu' }, trigger: { nth: [1, 3] }, fault: 'http_status', params: { status: 429, retry_after: 30 }, max_injections: 5 },
        { id: 'rule-2', tool: '*', trigger: 'always', fault: 'hang', params: {} },
      ],
    });
  });

  it('reads JSON by extension, and JSON inside YAML', () => {
    const json = '{"version": 1, "rules": [{"tool": "a", "fault": "empty"}]}';
    expect(parseFaultPlan(json, 'plan.json').rules[0]).toMatchObject({ id: 'rule-0', fault: 'empty' });
    expect(parseFaultPlan(json, 'plan.yaml').rules[0]).toMatchObject({ id: 'rule-0', fault: 'empty' });
  });

  it('loads from a file, and says which file cannot be read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'faultline-plan-'));
    try {
      const path = join(dir, 'plan.yml');
      await writeFile(path, 'version: 1\nrules:\n  - { tool: get_weather, fault: dns_failure }\n');
      expect((await loadFaultPlan(path)).rules).toEqual([{ id: 'rule-0', tool: 'get_weather', trigger: 'always', fault: 'dns_failure', params: {} }]);
      await writeFile(path, 'version: 1\nrules:\n  - { tool: get_weather, fault: explode }\n');
      await expect(loadFaultPlan(path)).rejects.toThrow(`${path}: rules[0].fault: unknown fault kind "explode"`);
      // In the words the rest of the CLI uses, not errno codes.
      await expect(loadFaultPlan(join(dir, 'missing.yaml'))).rejects.toThrow(new ConfigError(`cannot read fault plan ${join(dir, 'missing.yaml')}: no such file or directory`, 'path'));
      await expect(loadFaultPlan(dir)).rejects.toThrow(new ConfigError(`cannot read fault plan ${dir}: is a directory`, 'path'));
      await expect(loadFaultPlan(join(path, 'plan.yaml'))).rejects.toThrow(new ConfigError(`cannot read fault plan ${join(path, 'plan.yaml')}: a parent is not a directory`, 'path'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('parseFaultPlan: errors are one line naming the field', () => {
  const bad = (yaml: string) => messageOf(() => parseFaultPlan(yaml, 'plan.yaml'));

  it('bad YAML, with line and column', () => {
    expect(bad('version: 1\nrules:\n  - tool: a\n   fault: x\n')).toBe('plan.yaml: invalid YAML at line 4, column 1: Sequence item without - indicator');
    expect(bad('version: 1\nversion: 1\nrules: []\n')).toBe('plan.yaml: invalid YAML at line 2, column 1: Map keys must be unique');
  });

  it('a YAML alias bomb, as a ConfigError', () => {
    expect(() => parseFaultPlan(YAML_ALIAS_BOMB, 'plan.yaml')).toThrow(ConfigError);
    expect(bad(YAML_ALIAS_BOMB)).toBe('plan.yaml: invalid YAML: Excessive alias count indicates a resource exhaustion attack');
  });

  it('bad JSON', () => {
    expect(messageOf(() => parseFaultPlan('{"version": 1,', 'plan.json'))).toMatch(/^plan\.json: invalid JSON: /);
  });

  it('the plan itself', () => {
    expect(bad('')).toBe('plan.yaml: must be an object with version and rules');
    expect(bad('- 1\n')).toBe('plan.yaml: must be an object with version and rules');
    expect(bad('rules: []\n')).toBe('plan.yaml: version: is required');
    expect(bad('version: 2\nrules: []\n')).toBe('plan.yaml: version: must be 1');
    expect(bad('version: 1\nrules: {}\n')).toBe('plan.yaml: rules: must be an array');
    expect(bad('version: 1\nseed: -1\nrules: []\n')).toBe('plan.yaml: seed: must be an integer from 0 to 4294967295');
    expect(bad('version: 1\nrules: []\nrule: []\n')).toBe('plan.yaml: rule: unknown field (did you mean "rules"?)');
  });

  it('unknown fault kind', () => {
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: explode }\n')).toBe(
      'plan.yaml: rules[0].fault: unknown fault kind "explode" (expected one of: timeout, hang, latency, http_status, connection_refused, connection_reset, dns_failure, malformed_json, partial, empty, schema_drift, semantic_drift, stale, auth_expiry, rate_limit_burst, commit_then_drop, lost_write)',
    );
  });

  it('unknown and missing fields, with a suggestion', () => {
    // Seed 000's fault_config spelling is the likeliest mistake.
    expect(bad('version: 1\nrules:\n  - { tool: a, fault_type: timeout }\n')).toBe('plan.yaml: rules[0].fault_type: unknown field (did you mean "fault"?)');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: timeout, triger: always }\n')).toBe('plan.yaml: rules[0].triger: unknown field (did you mean "trigger"?)');
    expect(bad('version: 1\nrules:\n  - { tool: a }\n')).toBe('plan.yaml: rules[0].fault: is required');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: http_status, params: { stauts: 500 } }\n')).toBe('plan.yaml: rules[0].params.stauts: unknown field (did you mean "status"?)');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: http_status }\n')).toBe('plan.yaml: rules[0].params.status: is required');
  });

  it('bad triggers', () => {
    const rule = (trigger: string) => bad(`version: 1\nrules:\n  - { tool: a, fault: empty }\n  - { tool: b, fault: empty }\n  - { tool: c, fault: empty, trigger: ${trigger} }\n`);
    expect(rule('{ nth: [1, 0] }')).toBe('plan.yaml: rules[2].trigger.nth: must be an array of positive integers');
    expect(rule('{ nth: 3 }')).toBe('plan.yaml: rules[2].trigger.nth: must be an array of positive integers');
    expect(rule('{ nth: [] }')).toBe('plan.yaml: rules[2].trigger.nth: must be an array of positive integers');
    expect(rule('{ every: 0 }')).toBe('plan.yaml: rules[2].trigger.every: must be a positive integer');
    expect(rule('{ after: -1 }')).toBe('plan.yaml: rules[2].trigger.after: must be a non-negative integer');
    expect(rule('{ probability: 1.5 }')).toBe('plan.yaml: rules[2].trigger.probability: must be a number from 0 to 1');
    expect(rule('sometimes')).toBe('plan.yaml: rules[2].trigger: must be always, first_call_only, or an object with one of nth, one_of, every, after, probability, window');
    expect(rule('{ every: 2, after: 3 }')).toBe('plan.yaml: rules[2].trigger: must be always, first_call_only, or an object with one of nth, one_of, every, after, probability, window');
    expect(rule('{ evrey: 2 }')).toBe('plan.yaml: rules[2].trigger.evrey: unknown field (did you mean "every"?)');
    expect(rule('{ window: {} }')).toBe('plan.yaml: rules[2].trigger.window: must be an object with from, until or both (and jitter_ms)');
    expect(rule('{ window: { from: yesterday } }')).toBe('plan.yaml: rules[2].trigger.window.from: must be an ISO-8601 time or a number of milliseconds after the plan starts');
    expect(rule('{ window: { from: 5000, until: 1000 } }')).toBe('plan.yaml: rules[2].trigger.window: from must be before until');
    expect(rule('{ one_of: [2, 2] }')).toBe('plan.yaml: rules[2].trigger.one_of: must be an array of distinct positive integers');
    expect(rule('{ window: { from: 0, jitter_ms: 500 } }')).toBe('plan.yaml: rules[2].trigger.window.jitter_ms: needs until: it moves the end of the window');
    expect(rule('{ window: { until: 5000, jitter_ms: 1.5 } }')).toBe('plan.yaml: rules[2].trigger.window.jitter_ms: must be an integer from 0 to 86400000 (ms)');
    expect(rule('{ window: { jitter_ms: 5 } }')).toBe('plan.yaml: rules[2].trigger.window.jitter_ms: needs until: it moves the end of the window');
    expect(rule('[always]')).toBe('plan.yaml: rules[2].trigger: must be always, first_call_only, or an object with one of nth, one_of, every, after, probability, window');
  });

  it('bad params, per kind', () => {
    const rule = (fault: string, params: string) => bad(`version: 1\nrules:\n  - { tool: a, fault: ${fault}, params: ${params} }\n`);
    expect(rule('http_status', '{ status: 418 }')).toBe('plan.yaml: rules[0].params.status: must be one of 400, 401, 403, 404, 409, 429, 500, 502, 503, 504');
    expect(rule('http_status', '{ status: 429, retry_after: soon }')).toBe('plan.yaml: rules[0].params.retry_after: must be a whole number of seconds, an HTTP-date, or null for none');
    expect(rule('http_status', '{ status: 429, retry_after: -1 }')).toBe('plan.yaml: rules[0].params.retry_after: must be a whole number of seconds, an HTTP-date, or null for none');
    // Retry-After is digits or a date on the wire: a fraction is a header strict clients cannot read.
    expect(rule('http_status', '{ status: 429, retry_after: 1.5 }')).toBe('plan.yaml: rules[0].params.retry_after: must be a whole number of seconds, an HTTP-date, or null for none');
    expect(rule('http_status', '{ status: 429, retry_after: "1.5" }')).toBe('plan.yaml: rules[0].params.retry_after: must be a whole number of seconds, an HTTP-date, or null for none');
    for (const ok of ['30', '"30"', '"Wed, 21 Oct 2026 07:28:00 GMT"']) {
      expect(parseFaultPlan(`version: 1\nrules:\n  - { tool: a, fault: http_status, params: { status: 503, retry_after: ${ok} } }\n`, 'plan.yaml').rules).toHaveLength(1);
    }
    expect(parseFaultPlan('version: 1\nrules:\n  - { tool: a, fault: http_status, params: { status: 429, retry_after: null } }\n', 'plan.yaml').rules[0]!.params).toEqual({ status: 429, retry_after: null });
    expect(rule('http_status', '{ status: 429, headers: { x-a: 1 } }')).toBe('plan.yaml: rules[0].params.headers: must be a map of header names to strings');
    expect(rule('http_status', '{ status: 429, headers: { "": x } }')).toBe('plan.yaml: rules[0].params.headers: must be a map of header names to strings');
    expect(rule('schema_drift', '{ rename: {} }')).toBe('plan.yaml: rules[0].params.rename: must be a map of old field names to new ones');
    expect(rule('latency', '{}')).toBe('plan.yaml: rules[0].params: needs ms or distribution');
    expect(rule('latency', '{ ms: 5, distribution: uniform }')).toBe('plan.yaml: rules[0].params: give ms or distribution, not both');
    expect(rule('latency', '{ distribution: uniform, min_ms: 10 }')).toBe('plan.yaml: rules[0].params.max_ms: is required for a uniform distribution');
    expect(rule('latency', '{ distribution: uniform, min_ms: 10, max_ms: 5 }')).toBe('plan.yaml: rules[0].params.max_ms: must be at least min_ms');
    expect(rule('latency', '{ distribution: uniform, min_ms: 1, max_ms: 5, mean_ms: 3 }')).toBe('plan.yaml: rules[0].params.mean_ms: does not apply to a uniform distribution');
    expect(rule('latency', '{ distribution: pareto, mean_ms: 3 }')).toBe('plan.yaml: rules[0].params.distribution: must be uniform, normal or exponential');
    expect(rule('latency', '{ ms: -3 }')).toBe('plan.yaml: rules[0].params.ms: must be a non-negative number of milliseconds');
    expect(rule('timeout', '{ delay_ms: 1, delay_seconds: 1 }')).toBe('plan.yaml: rules[0].params: give delay_ms or delay_seconds, not both');
    expect(rule('malformed_json', '{ text: "{}" }')).toBe('plan.yaml: rules[0].params.text: must not be valid JSON');
    expect(rule('partial', '{}')).toBe('plan.yaml: rules[0].params: needs drop_fields or drop_fraction');
    expect(rule('partial', '{ drop_fraction: 0 }')).toBe('plan.yaml: rules[0].params.drop_fraction: must be a number greater than 0 and at most 1');
    expect(rule('schema_drift', '{ retype: { temp: date } }')).toBe('plan.yaml: rules[0].params.retype: must be a map of field names to string, number, boolean, array, object or null');
    expect(rule('semantic_drift', '{ fields: [date] }')).toBe('plan.yaml: rules[0].params: needs shift_date, other_entity, or timezone_shift');
    expect(rule('semantic_drift', '{ other_entity: { field: city } }')).toBe('plan.yaml: rules[0].params.other_entity: needs value or values');
    expect(rule('semantic_drift', '{ shift_date: 0 }')).toBe('plan.yaml: rules[0].params.shift_date: must be a non-zero whole number of days');
    expect(rule('stale', '{ age_calls: 2 }')).toBe('plan.yaml: rules[0].params.age_ms: is required');
    expect(rule('auth_expiry', '{ after_calls: 1.5 }')).toBe('plan.yaml: rules[0].params.after_calls: must be a non-negative integer');
    expect(rule('rate_limit_burst', '{ capacity: 2 }')).toBe('plan.yaml: rules[0].params.refill_per_sec: is required');
    expect(rule('hang', '{ ms: 1 }')).toBe('plan.yaml: rules[0].params.ms: unknown field');
  });

  it('http_status headers a server could not send: names that are not tokens, line breaks, framing headers', () => {
    const rule = (headers: string) => bad(`version: 1\nrules:\n  - { tool: a, fault: http_status, params: { status: 503, headers: ${headers} } }\n`);
    expect(rule('{ "bad header": x }')).toBe('plan.yaml: rules[0].params.headers["bad header"]: is not a valid HTTP header name');
    expect(rule('{ "x-a:": x }')).toBe('plan.yaml: rules[0].params.headers["x-a:"]: is not a valid HTTP header name');
    expect(rule('{ x-a: "one\\ntwo" }')).toBe('plan.yaml: rules[0].params.headers.x-a: must not contain line breaks or other control characters');
    expect(rule('{ x-a: "中文" }')).toBe('plan.yaml: rules[0].params.headers.x-a: must not contain line breaks or other control characters');
    expect(rule('{ Content-Length: "5" }')).toBe('plan.yaml: rules[0].params.headers.Content-Length: is set by the transport, not by a plan');
    expect(rule('{ transfer-encoding: chunked }')).toBe('plan.yaml: rules[0].params.headers.transfer-encoding: is set by the transport, not by a plan');
    const ok = parseFaultPlan('version: 1\nrules:\n  - { tool: a, fault: http_status, params: { status: 503, headers: { X-Request-Id: "abc\\t1 é", www-authenticate: "Bearer realm=\\"x\\"" } } }\n', 'plan.yaml');
    expect(ok.rules[0]!.params).toMatchObject({ headers: { 'X-Request-Id': 'abc\t1 é', 'www-authenticate': 'Bearer realm="x"' } });
  });

  it('waits longer than a day, which a timer cannot hold (node fires one over 24.8 days at once)', () => {
    const rule = (fault: string, params: string) => bad(`version: 1\nrules:\n  - { tool: a, fault: ${fault}, params: ${params} }\n`);
    expect(rule('latency', '{ ms: 3000000000 }')).toBe('plan.yaml: rules[0].params.ms: must be at most 86400000 (one day); for no answer at all, use hang');
    expect(rule('timeout', '{ delay_seconds: 2592000 }')).toBe('plan.yaml: rules[0].params.delay_seconds: must be at most 86400 (one day); for no answer at all, use hang');
    expect(rule('http_status', '{ status: 503, delay_ms: 86400001 }')).toBe('plan.yaml: rules[0].params.delay_ms: must be at most 86400000 (one day); for no answer at all, use hang');
    expect(rule('latency', '{ distribution: exponential, mean_ms: 1e10 }')).toBe('plan.yaml: rules[0].params.mean_ms: must be at most 86400000 (one day); for no answer at all, use hang');
    expect(parseFaultPlan('version: 1\nrules:\n  - { tool: a, fault: timeout, params: { delay_seconds: 86400 } }\n', 'plan.yaml').rules).toHaveLength(1);
    // A distribution's tail stops at a day too.
    const plan = createFaultPlan(planOf({ tool: 't', fault: 'latency', params: { distribution: 'normal', mean_ms: 86_400_000, stddev_ms: 86_400_000 } }));
    const delays = Array.from({ length: 50 }, () => plan.decide({ toolName: 't', args: {} })!.delayMs);
    expect(Math.max(...delays)).toBe(86_400_000);
    expect(Math.min(...delays)).toBeLessThan(86_400_000);
  });

  it('other rule fields', () => {
    expect(bad('version: 1\nrules:\n  - { tool: " get_weather", fault: empty }\n')).toBe('plan.yaml: rules[0].tool: must be a tool name, or a glob using * and ?');
    expect(bad('version: 1\nrules:\n  - { tool: "get\\tweather", fault: empty }\n')).toBe('plan.yaml: rules[0].tool: must be a tool name, or a glob using * and ?');
    expect(bad(`version: 1\nrules:\n  - { tool: "${'x'.repeat(257)}", fault: empty }\n`)).toBe('plan.yaml: rules[0].tool: must be a tool name, or a glob using * and ?');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: empty, max_injections: 0 }\n')).toBe('plan.yaml: rules[0].max_injections: must be a positive integer');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: empty, when: [1] }\n')).toBe('plan.yaml: rules[0].when: must be a map of argument names to values');
    expect(bad('version: 1\nrules:\n  - { id: x, tool: a, fault: empty }\n  - { id: x, tool: b, fault: empty }\n')).toBe('plan.yaml: rules[1].id: duplicate rule id "x" (also rules[0])');
    expect(bad('version: 1\nrules:\n  - { tool: a, fault: empty }\n  - { id: rule-0, tool: b, fault: empty }\n')).toBe('plan.yaml: rules[1].id: duplicate rule id "rule-0" (also rules[0])');
  });

  it('carries the field on the error, and validates plans written in code the same way', () => {
    const error = configError(() => validateFaultPlan({ version: 1, rules: [{ tool: 'a', fault: 'latency', params: { ms: 'slow' } }] }));
    expect(error.message).toBe('fault plan: rules[0].params.ms: must be a non-negative number of milliseconds');
    expect(error.field).toBe('rules[0].params.ms');
    expect(() => createFaultPlan({ version: 1, rules: [{ tool: 'a', fault: 'http_status', params: { status: 999 as 500 } }] })).toThrow(
      'fault plan: rules[0].params.status: must be one of',
    );
  });
});

describe('triggers', () => {
  const rule = (trigger: FaultTrigger): FaultRule => ({ tool: 't', trigger, fault: 'empty' });

  it('always, first_call_only, nth, every, after', () => {
    expect(firing(createFaultPlan(planOf(rule('always'))), 4)).toEqual([1, 2, 3, 4]);
    expect(firing(createFaultPlan(planOf(rule('first_call_only'))), 4)).toEqual([1]);
    expect(firing(createFaultPlan(planOf(rule({ nth: [1, 3] }))), 5)).toEqual([1, 3]);
    expect(firing(createFaultPlan(planOf(rule({ every: 2 }))), 7)).toEqual([2, 4, 6]);
    expect(firing(createFaultPlan(planOf(rule({ after: 3 }))), 6)).toEqual([4, 5, 6]);
    expect(firing(createFaultPlan(planOf(rule({ after: 0 }))), 2)).toEqual([1, 2]);
  });

  it('counts calls per tool', () => {
    const plan = createFaultPlan(planOf({ tool: '*', trigger: { nth: [2] }, fault: 'empty' }));
    const fired = ['a', 'b', 'a', 'b', 'a'].map((toolName) => plan.decide({ toolName, args: {} }) !== undefined);
    expect(fired).toEqual([false, false, true, true, false]);
    expect(plan.state().calls).toEqual({ a: 3, b: 2 });
    expect(plan.state().rules['rule-0']!.matched).toEqual({ a: 3, b: 2 });
  });

  it('counts only the calls that match `when`', () => {
    const plan = createFaultPlan(planOf({ tool: 'get_weather', when: { city: 'Paris', opts: { unit: 'c' } }, trigger: 'first_call_only', fault: 'empty' }));
    const call = (args: unknown) => plan.decide({ toolName: 'get_weather', args }) !== undefined;
    expect(call({ city: 'Lyon', opts: { unit: 'c' } })).toBe(false);
    expect(call({ city: 'Paris', opts: { unit: 'f' } })).toBe(false);
    expect(call(null)).toBe(false);
    expect(call({ opts: { unit: 'c' }, city: 'Paris', extra: 1 })).toBe(true);
    expect(call({ city: 'Paris', opts: { unit: 'c' } })).toBe(false);
    expect(plan.state().calls).toEqual({ get_weather: 5 });
  });

  it('probability is reproducible for a seed, and independent per tool and of other rules', () => {
    const spec = (seed: number, extra: FaultRule[] = []): FaultPlanSpec => ({ version: 1, seed, rules: [...extra, { id: 'p', tool: '*', trigger: { probability: 0.3 }, fault: 'empty' }] });
    const run = (plan: FaultPlan, tools: string[]) => tools.map((toolName) => plan.decide({ toolName, args: {} })?.ruleId === 'p');
    const onlyA = Array.from({ length: 200 }, () => 'a');
    const a1 = run(createFaultPlan(spec(42)), onlyA);
    const a2 = run(createFaultPlan(spec(42)), onlyA);
    expect(a2).toEqual(a1);
    const rate = a1.filter(Boolean).length / a1.length;
    expect(rate).toBeGreaterThan(0.2);
    expect(rate).toBeLessThan(0.4);
    expect(run(createFaultPlan(spec(43)), onlyA)).not.toEqual(a1);
    // The options' seed overrides the plan's.
    expect(run(createFaultPlan(spec(43), { seed: 42 }), onlyA)).toEqual(a1);
    // Calls to another tool in between do not change tool a's draws.
    const mixed = run(createFaultPlan(spec(42)), onlyA.flatMap((t) => [t, 'b']));
    expect(mixed.filter((_, i) => i % 2 === 0)).toEqual(a1);
    // Nor does an earlier rule that matches other calls.
    const withOther = run(createFaultPlan(spec(42, [{ id: 'first', tool: 'c', fault: 'empty' }])), onlyA);
    expect(withOther).toEqual(a1);
    expect(firing(createFaultPlan(planOf(rule({ probability: 0 }))), 50)).toEqual([]);
    expect(firing(createFaultPlan(planOf(rule({ probability: 1 }))), 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it('window: offsets from the plan start and ISO times, on the injected clock', async () => {
    const clock = createVirtualClock({ startMs: Date.parse('2026-01-01T00:00:00Z'), autoAdvance: false });
    const plan = createFaultPlan(
      planOf(
        { id: 'offset', tool: 'a', trigger: { window: { from: 10_000, until: 20_000 } }, fault: 'empty' },
        { id: 'iso', tool: 'b', trigger: { window: { from: '2026-01-01T00:00:15Z' } }, fault: 'empty' },
      ),
      { clock },
    );
    const at = () => [plan.decide({ toolName: 'a', args: {} })?.ruleId ?? '-', plan.decide({ toolName: 'b', args: {} })?.ruleId ?? '-'];
    expect(at()).toEqual(['-', '-']);
    await clock.advance(10_000);
    expect(at()).toEqual(['offset', '-']);
    await clock.advance(5_000);
    expect(at()).toEqual(['offset', 'iso']);
    await clock.advance(5_000);
    expect(at()).toEqual(['-', 'iso']);
    // An explicit `now` (a proxy's own reading) wins over the clock.
    expect(plan.decide({ toolName: 'a', args: {}, now: clock.now() - 5_000 })?.ruleId).toBe('offset');
  });

  it('one_of: exactly one of the listed calls, per tool, picked by the seed', () => {
    const spec = (seed: number): FaultPlanSpec => ({ version: 1, seed, rules: [rule({ one_of: [1, 2, 3] })] });
    const picks = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const hits = firing(createFaultPlan(spec(seed)), 6);
      expect(hits.length, `seed ${seed}`).toBe(1);
      expect([1, 2, 3]).toContain(hits[0]);
      // The same seed picks the same call.
      expect(firing(createFaultPlan(spec(seed)), 6)).toEqual(hits);
      picks.add(String(hits[0]));
    }
    // Every call of the list is picked by some seed.
    expect([...picks].sort()).toEqual(['1', '2', '3']);
    // Each tool gets its own pick, and calls to another tool do not move it.
    const a = firing(createFaultPlan({ version: 1, seed: 5, rules: [{ tool: '*', trigger: { one_of: [1, 2, 3, 4] }, fault: 'empty' }] }), 4, 'a');
    const plan = createFaultPlan({ version: 1, seed: 5, rules: [{ tool: '*', trigger: { one_of: [1, 2, 3, 4] }, fault: 'empty' }] });
    const interleaved: number[] = [];
    for (let i = 1; i <= 4; i++) {
      if (plan.decide({ toolName: 'a', args: {} }) !== undefined) interleaved.push(i);
      plan.decide({ toolName: 'b', args: {} });
    }
    expect(interleaved).toEqual(a);
  });

  it('window jitter_ms: the window ends up to that much later, fixed by the seed', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const endOf = (seed: number, trigger: FaultTrigger = { window: { until: 2_000, jitter_ms: 3_000 } }) => {
      const plan = createFaultPlan({ version: 1, seed, rules: [{ tool: 'a', trigger, fault: 'empty' }] }, { startedAt: start });
      let t = 0;
      while (t < 10_000 && plan.decide({ toolName: 'a', args: {}, now: start + t }) !== undefined) t += 100;
      return t;
    };
    const ends = Array.from({ length: 30 }, (_, seed) => endOf(seed));
    for (const end of ends) {
      expect(end).toBeGreaterThanOrEqual(2_000);
      expect(end).toBeLessThanOrEqual(5_000);
    }
    // Reproducible for a seed, different across seeds.
    expect(Array.from({ length: 30 }, (_, seed) => endOf(seed))).toEqual(ends);
    expect(new Set(ends).size).toBeGreaterThan(10);
    // No jitter: the window ends where it says, whatever the seed.
    expect(new Set(Array.from({ length: 10 }, (_, seed) => endOf(seed, { window: { until: 2_000 } })))).toEqual(new Set([2_000]));
    expect(endOf(3, { window: { until: 2_000, jitter_ms: 0 } })).toBe(2_000);
  });

  it('window: ISO times in any offset form name the same instant on every machine; a date-time without a zone is refused', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    // 10:00 at +10 and 05:30 at +05:30 are both midnight UTC; `+10` alone is a valid ISO offset that Date.parse cannot read.
    for (const from of ['2026-01-01T10:00:00+10', '2026-01-01T05:30:00+0530', '2025-12-31T19:00-05:00', '2026-01-01']) {
      const plan = createFaultPlan(planOf({ tool: 'a', trigger: { window: { from, until: '2026-01-01T01:00:00Z' } }, fault: 'empty' }));
      const firesAt = (now: number) => plan.decide({ toolName: 'a', args: {}, now }) !== undefined;
      expect([firesAt(start - 1), firesAt(start), firesAt(start + 3_599_999), firesAt(start + 3_600_000)], from).toEqual([false, true, true, false]);
    }
    const bad = (window: string) => messageOf(() => parseFaultPlan(`version: 1\nrules:\n  - { tool: a, fault: empty, trigger: { window: ${window} } }\n`, 'plan.yaml'));
    expect(bad('{ from: "2026-01-01T10:00:00" }')).toBe(
      'plan.yaml: rules[0].trigger.window.from: must give its time zone (Z, or an offset such as +08:00): without one it would depend on the machine',
    );
    expect(bad('{ until: "2026-01-01T10:75:00Z" }')).toBe('plan.yaml: rules[0].trigger.window.until: must be an ISO-8601 time or a number of milliseconds after the plan starts');
    expect(bad('{ until: "2026-01-01T10:00:00+25:00" }')).toBe('plan.yaml: rules[0].trigger.window.until: must be an ISO-8601 time or a number of milliseconds after the plan starts');
    // Ordered by the instants, not by the text: 09:00 at +08 comes before 02:00 UTC.
    expect(bad('{ from: "2026-01-01T02:00:00Z", until: "2026-01-01T09:00:00+08:00" }')).toBe('plan.yaml: rules[0].trigger.window: from must be before until');
  });
});

describe('rules: order, globs, max_injections', () => {
  it('the first rule whose trigger fires wins; later ones still count the call', () => {
    const plan = createFaultPlan(
      planOf({ id: 'first', tool: 't', trigger: { nth: [1] }, fault: 'empty' }, { id: 'second', tool: 't', trigger: { nth: [1, 2] }, fault: 'dns_failure' }),
    );
    expect(plan.decide({ toolName: 't', args: {} })?.ruleId).toBe('first');
    expect(plan.decide({ toolName: 't', args: {} })?.ruleId).toBe('second');
    expect(plan.decide({ toolName: 't', args: {} })).toBeUndefined();
    expect(plan.state().rules).toEqual({ first: { matched: { t: 3 }, injections: 1 }, second: { matched: { t: 3 }, injections: 1 } });
  });

  it('globs', () => {
    const plan = createFaultPlan(planOf({ id: 'writes', tool: 'create_*', fault: 'empty' }, { id: 'v', tool: 'get_v?', fault: 'hang' }));
    const rule = (toolName: string) => plan.decide({ toolName, args: {} })?.ruleId;
    expect(rule('create_order')).toBe('writes');
    expect(rule('create_')).toBe('writes');
    expect(rule('get_create_order')).toBeUndefined();
    expect(rule('recreate_order')).toBeUndefined();
    expect(rule('get_v2')).toBe('v');
    expect(rule('get_v10')).toBeUndefined();
    // A dot is literal, not "any character".
    const dotted = createFaultPlan(planOf({ tool: 'fs.read*', fault: 'empty' }));
    expect(dotted.decide({ toolName: 'fs.readFile', args: {} })).toBeDefined();
    expect(dotted.decide({ toolName: 'fsxreadFile', args: {} })).toBeUndefined();
    // The HTTP proxy's names: spaces, slashes and colons are literal too, and * spans them.
    const http = createFaultPlan(parseFaultPlan('version: 1\nrules:\n  - { id: orders, tool: "GET /orders/*", fault: empty }\n  - { id: mail, tool: "send mail", fault: hang }\n'));
    const httpRule = (toolName: string) => http.decide({ toolName, args: {} })?.ruleId;
    expect(httpRule('GET /orders/:id')).toBe('orders');
    expect(httpRule('GET /orders/:id/items')).toBe('orders');
    expect(httpRule('GET /orders')).toBeUndefined();
    expect(httpRule('POST /orders/:id')).toBeUndefined();
    expect(httpRule('send mail')).toBe('mail');
  });

  it('max_injections caps a rule over all its tools; the next rule takes over', () => {
    const plan = createFaultPlan(planOf({ id: 'capped', tool: '*', fault: 'empty', max_injections: 2 }, { id: 'rest', tool: 'a', fault: 'hang' }));
    const rules = ['a', 'b', 'a', 'b'].map((toolName) => plan.decide({ toolName, args: {} })?.ruleId);
    expect(rules).toEqual(['capped', 'capped', 'rest', undefined]);
    expect(plan.state().rules['capped']!.injections).toBe(2);
  });
});

describe('decide: what each transport is told', () => {
  const one = (rule: FaultRule, call: { toolName?: string; transport?: string } = {}): FaultDecision => {
    const decision = createFaultPlan(planOf({ id: 'r', ...rule })).decide({ toolName: call.toolName ?? 't', args: { q: 1 }, ...(call.transport ? { transport: call.transport } : {}) });
    if (decision === undefined) throw new Error('no decision');
    return decision;
  };

  it('http_status: status, headers, body, delay, whether the upstream runs', () => {
    const d = one({ tool: 't', fault: 'http_status', params: { status: 429, retry_after: 30, delay_ms: 250 } }, { transport: 'http' });
    expect(d).toMatchObject({
      kind: 'http_status',
      ruleId: 'r',
      delayMs: 250,
      forward: false,
      effect: { type: 'respond', status: 429, headers: { 'retry-after': '30', 'content-type': 'application/json' }, body: { error: { status: 429, message: 'Too Many Requests' } }, message: 'HTTP 429 Too Many Requests' },
      fault: { kind: 'http_status', rule_id: 'r', params: { status: 429, retry_after: 30, delay_ms: 250 }, transport: 'http' },
    });
    const custom = one({ tool: 't', fault: 'http_status', params: { status: 502, body: '<html>bad gateway</html>', headers: { 'X-Upstream': 'db' }, message: 'upstream said no', commit: true } });
    expect(custom).toMatchObject({ forward: true, effect: { status: 502, body: '<html>bad gateway</html>', headers: { 'x-upstream': 'db' }, message: 'upstream said no' } });
    expect(custom.fault.transport).toBe('inprocess');
  });

  it('http_status 429 says when to come back unless the rule says not to', () => {
    const plain = one({ tool: 't', fault: 'http_status', params: { status: 429 } });
    expect(plain.effect).toMatchObject({ status: 429, headers: { 'retry-after': '2' } });
    // The ground truth names the Retry-After the client got.
    expect(plain.fault.params).toEqual({ status: 429, retry_after: 2 });
    const none = one({ tool: 't', fault: 'http_status', params: { status: 429, retry_after: null } });
    expect(none.effect).toMatchObject({ type: 'respond', status: 429 });
    expect((none.effect as { headers: Record<string, string> }).headers['retry-after']).toBeUndefined();
    const own = one({ tool: 't', fault: 'http_status', params: { status: 429, headers: { 'Retry-After': 'Wed, 21 Oct 2026 07:28:00 GMT' } } });
    expect(own.effect).toMatchObject({ headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' } });
    const unavailable = one({ tool: 't', fault: 'http_status', params: { status: 503 } });
    expect((unavailable.effect as { headers: Record<string, string> }).headers['retry-after']).toBeUndefined();
  });

  it('connection faults are drops; reset may commit first', () => {
    expect(one({ tool: 't', fault: 'connection_refused' })).toMatchObject({ forward: false, delayMs: 0, effect: { type: 'drop', code: 'ECONNREFUSED' } });
    expect(one({ tool: 't', fault: 'connection_reset', params: { commit: true, delay_ms: 40 } })).toMatchObject({ forward: true, delayMs: 40, effect: { type: 'drop', code: 'ECONNRESET' } });
    expect(one({ tool: 't', fault: 'dns_failure' })).toMatchObject({ forward: false, effect: { type: 'drop', code: 'ENOTFOUND' } });
  });

  it('timeouts, hangs and commit-then-drop', () => {
    expect(one({ tool: 't', fault: 'timeout', params: { delay_seconds: 35 } }).effect).toEqual({ type: 'timeout', afterMs: 35_000 });
    expect(one({ tool: 't', fault: 'timeout' }).effect).toEqual({ type: 'timeout', afterMs: null });
    expect(one({ tool: 't', fault: 'hang' })).toMatchObject({ forward: false, effect: { type: 'timeout', afterMs: null } });
    expect(one({ tool: 't', fault: 'commit_then_drop' })).toMatchObject({ forward: true, effect: { type: 'timeout', afterMs: null } });
  });

  it('lost_write: not forwarded as a real call, but run dry; it applies only to a call that succeeds', () => {
    const d = one({ tool: 't', fault: 'lost_write' });
    expect(d).toMatchObject({ kind: 'lost_write', delayMs: 0, forward: false, effect: { type: 'dry_run' } });
    expect(appliesOnlyOnSuccess(d)).toBe(true);
  });

  it('latency: fixed, and sampled reproducibly, recorded as delay_ms', () => {
    expect(one({ tool: 't', fault: 'latency', params: { ms: 1500 } })).toMatchObject({ delayMs: 1500, forward: true, effect: { type: 'pass' }, params: { ms: 1500, delay_ms: 1500 } });
    const sample = (seed: number, params: FaultRule & { fault: 'latency' }) => {
      const plan = createFaultPlan({ version: 1, seed, rules: [params] });
      return Array.from({ length: 50 }, () => plan.decide({ toolName: 't', args: {} })!.delayMs);
    };
    const uniform: FaultRule & { fault: 'latency' } = { tool: 't', fault: 'latency', params: { distribution: 'uniform', min_ms: 100, max_ms: 200 } };
    const u = sample(1, uniform);
    expect(u).toEqual(sample(1, uniform));
    expect(u).not.toEqual(sample(2, uniform));
    expect(Math.min(...u)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...u)).toBeLessThanOrEqual(200);
    const normal = sample(3, { tool: 't', fault: 'latency', params: { distribution: 'normal', mean_ms: 500, stddev_ms: 400, max_ms: 900 } });
    expect(Math.min(...normal)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...normal)).toBeLessThanOrEqual(900);
    expect(new Set(normal).size).toBeGreaterThan(10);
    const exponential = sample(4, { tool: 't', fault: 'latency', params: { distribution: 'exponential', mean_ms: 300 } });
    const mean = exponential.reduce((a, b) => a + b, 0) / exponential.length;
    expect(mean).toBeGreaterThan(150);
    expect(mean).toBeLessThan(600);
  });

  it('body faults hand proxies a renderer or a rewrite of the real output', () => {
    const malformed = one({ tool: 't', fault: 'malformed_json' });
    expect(malformed).toMatchObject({ forward: true, effect: { type: 'malformed' } });
    if (malformed.effect.type !== 'malformed') throw new Error('expected malformed');
    expect(malformed.effect.render({ temp: 18, city: 'Paris' })).toBe('{"temp":18,"c');
    expect(malformed.effect.render('{"temp":18}')).toBe('{"temp');
    // A cut that happens to parse is opened inside an object that never closes.
    expect(malformed.effect.render(123456)).toBe('{"data": 123');
    const fixed = one({ tool: 't', fault: 'malformed_json', params: { text: '<html>502</html>' } });
    if (fixed.effect.type !== 'malformed') throw new Error('expected malformed');
    expect(fixed.effect.render({ a: 1 })).toBe('<html>502</html>');
    const empty = one({ tool: 't', fault: 'empty' });
    if (empty.effect.type !== 'rewrite') throw new Error('expected rewrite');
    expect(empty.effect.rewrite({ results: [1, 2], total: 2 })).toEqual({ results: [], total: 2 });
  });

  it('auth_expiry: fine for after_calls calls of any matched tool, then a 401 that says the token expired', () => {
    const plan = createFaultPlan(planOf({ id: 'token', tool: '*', fault: 'auth_expiry', params: { after_calls: 2 } }));
    expect(plan.decide({ toolName: 'a', args: {} })).toBeUndefined();
    expect(plan.decide({ toolName: 'b', args: {} })).toBeUndefined();
    const d = plan.decide({ toolName: 'a', args: {} });
    expect(d).toMatchObject({
      kind: 'auth_expiry',
      forward: false,
      effect: {
        type: 'respond',
        status: 401,
        authType: 'credential_expired',
        headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token expired"' },
        body: { error: 'invalid_token', error_description: 'The access token expired' },
      },
    });
    expect(plan.decide({ toolName: 'b', args: {} })?.kind).toBe('auth_expiry');
  });

  it('rate_limit_burst: a token bucket on the plan clock, Retry-After from the refill rate', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const plan = createFaultPlan(planOf({ id: 'bucket', tool: '*', fault: 'rate_limit_burst', params: { capacity: 3, refill_per_sec: 0.5 } }), { clock });
    const call = () => {
      const d = plan.decide({ toolName: 'a', args: {} });
      return d === undefined ? 'ok' : d.effect.type === 'respond' ? `${d.effect.status} retry-after ${d.effect.headers['retry-after']}` : d.effect.type;
    };
    expect([call(), call(), call(), call()]).toEqual(['ok', 'ok', 'ok', '429 retry-after 2']);
    expect(plan.state().rules['bucket']).toEqual({ matched: { a: 4 }, injections: 1, tokens: 0 });
    await clock.advance(1000);
    expect(call()).toBe('429 retry-after 1');
    await clock.advance(1000);
    expect([call(), call()]).toEqual(['ok', '429 retry-after 2']);
    await clock.advance(60_000);
    expect([call(), call(), call(), call()]).toEqual(['ok', 'ok', 'ok', '429 retry-after 2']);
  });

  it('stale: replays what was seen for the same arguments, or ages the fresh output', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const plan = createFaultPlan(planOf({ id: 's', tool: 'get_stock', when: { sku: 'A' }, trigger: { after: 1 }, fault: 'stale', params: { age_ms: 60_000 } }), { clock });
    const rewrite = (d: FaultDecision | undefined, output: unknown) => {
      if (d?.effect.type !== 'rewrite') throw new Error('expected a rewrite');
      return d.effect.rewrite(output);
    };
    // A proxy reports every answer it relays; the plan keeps only what a stale rule could serve.
    expect(plan.decide({ toolName: 'get_stock', args: { sku: 'A' } })).toBeUndefined();
    plan.observe({ toolName: 'get_stock', args: { sku: 'A' }, output: { qty: 5, at: '2026-01-01T00:00:00Z' } });
    plan.observe({ toolName: 'get_stock', args: { sku: 'B' }, output: { qty: 1 } });
    // Nothing a minute old yet: the fresh output comes back with its timestamps a minute older.
    await clock.advance(30_000);
    const aged = plan.decide({ toolName: 'get_stock', args: { sku: 'A' } });
    expect(aged?.params).toEqual({ age_ms: 60_000, served: 'aged' });
    expect(rewrite(aged, { qty: 4, at: '2026-01-01T00:00:30Z' })).toEqual({ qty: 4, at: '2025-12-31T23:59:30Z' });
    await clock.advance(40_000);
    const replay = plan.decide({ toolName: 'get_stock', args: { sku: 'A' } });
    expect(replay?.params).toEqual({ age_ms: 60_000, served: 'replay', replayed_age_ms: 70_000 });
    expect(rewrite(replay, { qty: 3, at: '2026-01-01T00:01:10Z' })).toEqual({ qty: 5, at: '2026-01-01T00:00:00Z' });
  });

  it('stale with age_calls replays the output from that many calls back', () => {
    const plan = createFaultPlan(planOf({ tool: 'get_stock', fault: 'stale', params: { age_ms: 1, age_calls: 2 } }));
    const serve = (qty: number) => {
      const d = plan.decide({ toolName: 'get_stock', args: { sku: 'A' } });
      if (d?.effect.type !== 'rewrite') throw new Error('expected a rewrite');
      return [(d.effect.rewrite({ qty }) as { qty: number }).qty, d.params['served']];
    };
    expect([serve(10), serve(9), serve(8), serve(7)]).toEqual([
      [10, 'aged'],
      [9, 'aged'],
      [10, 'replay'],
      [9, 'replay'],
    ]);
  });
});

describe('state() and update()', () => {
  it('update swaps rules while running; counters follow rule ids', () => {
    const plan = createFaultPlan(planOf({ id: 'keep', tool: 't', trigger: { nth: [3] }, fault: 'empty' }, { id: 'drop', tool: 't', fault: 'hang', max_injections: 1 }));
    expect(plan.decide({ toolName: 't', args: {} })?.ruleId).toBe('drop');
    expect(plan.decide({ toolName: 't', args: {} })).toBeUndefined();
    plan.update(planOf({ id: 'keep', tool: 't', trigger: { nth: [3] }, fault: 'dns_failure' }, { id: 'new', tool: 't', trigger: { nth: [1] }, fault: 'hang' }));
    expect(plan.spec.rules.map((r) => r.id)).toEqual(['keep', 'new']);
    // `keep` has seen two calls, so this is its third; `new` starts counting now.
    const third = plan.decide({ toolName: 't', args: {} });
    expect(third).toMatchObject({ ruleId: 'keep', kind: 'dns_failure' });
    expect(plan.state()).toEqual({
      startedAt: expect.any(Number),
      calls: { t: 3 },
      rules: { keep: { matched: { t: 3 }, injections: 1 }, new: { matched: { t: 1 }, injections: 0 } },
    });
    // Re-adding a dropped id starts it afresh.
    plan.update(planOf({ id: 'drop', tool: 't', fault: 'hang', max_injections: 1 }));
    expect(plan.decide({ toolName: 't', args: {} })?.ruleId).toBe('drop');
  });

  it('a rule without an id keeps its counts only when the same rule stays at its place', () => {
    const plan = createFaultPlan(planOf({ tool: 'get_weather', fault: 'http_status', params: { status: 500 }, max_injections: 2 }));
    expect(firing(plan, 3, 'get_weather')).toEqual([1, 2]);
    // Another rule at index 0: it starts from zero, not from the old rule's two injections.
    plan.update(planOf({ tool: 'list_files', fault: 'http_status', params: { status: 503 }, max_injections: 2 }));
    expect(firing(plan, 3, 'list_files')).toEqual([1, 2]);
    expect(plan.state().rules['rule-0']).toEqual({ matched: { list_files: 3 }, injections: 2 });
    // The same rule sent again (an admin re-PUT of the plan) carries on.
    plan.update(planOf({ tool: 'list_files', fault: 'http_status', params: { status: 503 }, max_injections: 2 }));
    expect(firing(plan, 2, 'list_files')).toEqual([]);
  });

  it('raising max_injections continues from the count so far', () => {
    const plan = createFaultPlan(planOf({ id: 'r', tool: 't', fault: 'empty', max_injections: 1 }));
    expect(firing(plan, 3)).toEqual([1]);
    plan.update(planOf({ id: 'r', tool: 't', fault: 'empty', max_injections: 2 }));
    expect(firing(plan, 3)).toEqual([1]);
  });

  it('update validates, and leaves the running plan alone when the new one is bad', () => {
    const plan = createFaultPlan(planOf({ id: 'r', tool: 't', fault: 'empty' }));
    expect(() => plan.update({ version: 1, rules: [{ tool: 't', fault: 'nope' as 'empty' }] })).toThrow('fault plan: rules[0].fault: unknown fault kind "nope"');
    expect(plan.decide({ toolName: 't', args: {} })?.ruleId).toBe('r');
  });

  it('an empty plan injects nothing', () => {
    const plan = createFaultPlan({ version: 1, rules: [] });
    expect(firing(plan, 3)).toEqual([]);
    expect(plan.state().rules).toEqual({});
  });
});

describe('createFaultPlan: option defaults', () => {
  it('measures windows on the system clock, from startedAt when given', () => {
    const started = Date.now() - 120_000;
    const late = createFaultPlan(planOf({ tool: 't', trigger: { window: { until: 60_000 } }, fault: 'empty' }), { startedAt: started });
    expect(late.decide({ toolName: 't', args: {} })).toBeUndefined();
    expect(late.state().startedAt).toBe(started);
    const now = createFaultPlan(planOf({ tool: 't', trigger: { window: { until: 60_000 } }, fault: 'empty' }));
    expect(now.decide({ toolName: 't', args: {} })).toBeDefined();
  });
});
