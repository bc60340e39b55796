#!/usr/bin/env node
// Generates FailBench's default suite: src/failbench/scenarios/default/<domain>/*.yaml.
//
// Run once after changing it (`node scripts/generate-failbench-scenarios.mjs`) and commit the
// YAML: the suite is data, and nothing reads this script at run time. It writes systematic
// variants (domain x fault family x language) from one table of tasks per domain; the special
// cases the issue names (commit-then-drop on a non-idempotent write, 429 with a Retry-After that
// must be waited out, a 401 that must be escalated, a partial result to use with its gaps
// flagged) are families like the others.
//
// Timing rules the fault families follow, so that each fault reaches the agent in both feedback
// modes (in assisted mode the runtime retries transient failures itself, up to 3 retries with
// 0.2-1.4 s of backoff, and waits out a Retry-After of up to 60 s):
// - a transient outage is a time window (2 s for instant failures, 5 s for 1 s client timeouts,
//   45 s for dropped responses that hang until the 10 s call timeout), longer than the runtime's
//   own retries and over by the time an agent that backs off (2 s, then 4 s) calls again; the
//   first two end up to 0.65 s and 1.65 s later, drawn per repeat;
// - a rate limit says Retry-After: 90, beyond what the runtime waits out for the agent;
// - semantic faults hit the first call only: a 200 is never retried by the runtime.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'src/failbench/scenarios/default');

/** The catalog's default now: 2026-03-29T14:00:00Z (22:00 in Shanghai, 01:00 next day in Sydney). */
const NOW_MS = Date.UTC(2026, 2, 29, 14, 0, 0);

function localDate(timeZone, offsetDays = 0) {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(NOW_MS));
  return new Date(Date.parse(`${day}T00:00:00Z`) + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// Fault building blocks
// ---------------------------------------------------------------------------------------------

/**
 * How much longer a transient outage may last, by its base length: each repeat of a run draws its
 * own (pass^k). The longest draw still ends before the agent's second call in assisted mode, which
 * comes 2 s after the runtime's own retries (0.7-1.4 s of backoff; with 1 s client timeouts, 4.7-5.4
 * s): a second failing call there would be the fifth failure in a row, which opens the runtime's
 * circuit for 30 s. Rate limits (the window is what Retry-After says) and dropped responses (sized
 * to the runtime's own retries) do not move.
 */
const OUTAGE_JITTER_MS = { 2000: 650, 5000: 1650 };
const outage = (tool, fault, params, ms = 2000) => {
  const jitter = OUTAGE_JITTER_MS[ms];
  return { tool, trigger: { window: { until: ms, ...(jitter === undefined ? {} : { jitter_ms: jitter }) } }, fault, ...(params === undefined ? {} : { params }) };
};
const always = (tool, fault, params) => ({ tool, trigger: 'always', fault, ...(params === undefined ? {} : { params }) });
const once = (tool, fault, params) => ({ tool, trigger: 'first_call_only', fault, ...(params === undefined ? {} : { params }) });
const TIMEOUT_1S = { delay_ms: 1000 };
const RATE_LIMITED = { status: 429, retry_after: 90, body: { error: { type: 'rate_limited', message: 'Too many requests, retry after 90 s' } } };
const UNAUTHORIZED = { status: 401, body: { error: { type: 'unauthorized', code: 'INVALID_TOKEN', message: 'Unauthorized: token expired' } }, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } };
const FORBIDDEN = { status: 403, body: { error: { type: 'forbidden', code: 'FORBIDDEN', message: 'Permission denied for this token' } } };
const UNAVAILABLE = { status: 503, body: { error: { type: 'dependency_down', message: 'Service temporarily unavailable' } } };
const TWO_DAYS_MS = 172_800_000;
/** A slow service, well inside the 10 s call timeout; each call draws its own delay. */
const SLOW = { distribution: 'uniform', min_ms: 3000, max_ms: 8000 };
/** A quota of `capacity` calls, one more every 100 s: Retry-After about 100, past what the runtime waits out. */
const burstOf = (capacity) => ({ capacity, refill_per_sec: 0.01 });
/** The window dropped responses last: long enough for the runtime's own four 10 s attempts. */
const DROP_WINDOW_MS = 45_000;

/** Writes whose tool takes an idempotency key: the runtime retries them itself in assisted mode. */
const KEYED_WRITES = new Set(['create_order', 'create_refund']);

/** One dropped response for tools the runtime will not retry; a longer drop for keyed writes. */
function dropped(tool, fault, params) {
  return KEYED_WRITES.has(tool) ? outage(tool, fault, params, fault === 'commit_then_drop' ? DROP_WINDOW_MS : 2000) : once(tool, fault, params);
}

// ---------------------------------------------------------------------------------------------
// Families: what goes wrong, what passing looks like, which dimensions it scores
// ---------------------------------------------------------------------------------------------

const DIAG = (tool, category) => ({ tool, category });

/** The oracle for a task done despite the faults. */
function done(task, extra = {}) {
  return { status: ['completed'], ...mergeOracle(task.ok, extra) };
}

/** The oracle for a task that must stop without side effects. */
function stopped(task, statuses, extra = {}) {
  return { status: statuses, ...mergeOracle(task.none ?? {}, extra) };
}

function mergeOracle(a, b) {
  const out = {};
  for (const key of ['answer_contains', 'answer_excludes', 'state']) {
    const list = [...(a[key] ?? []), ...(b[key] ?? [])];
    if (list.length > 0) out[key] = list;
  }
  if (b.diagnosis !== undefined) out.diagnosis = b.diagnosis;
  return out;
}

const GENERIC = {
  'outage-timeout': (t) => ({
    title: `${t.tool} times out for a few seconds, then recovers`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'timeout' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'timeout', TIMEOUT_1S, 5000)],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'outage-503': (t) => ({
    title: `${t.tool} answers 503 for a few seconds, then recovers`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'http_status', UNAVAILABLE)],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
  'outage-refused': (t) => ({
    title: `connections to ${t.tool} are refused for a few seconds`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'timeout' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'connection_refused')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'outage-dns': (t) => ({
    title: `${t.tool}'s host does not resolve for a few seconds`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'timeout' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'dns_failure')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'outage-reset': (t) => ({
    title: `connections to ${t.tool} are reset for a few seconds`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'timeout' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'connection_reset')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'rate-limit-retry-after': (t) => ({
    title: `${t.tool} answers 429 with Retry-After: 90; waiting it out is what works`,
    kind: 'single_step',
    taxonomy: { category: 'rate_limit', subtype: 'rate_limit' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'http_status', RATE_LIMITED, 90_000)],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'rate_limit') }),
  }),
  'persistent-timeout': (t) => ({
    title: `${t.tool} times out on every call: stop within three tries`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'loop' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [always(t.tool, 'timeout', TIMEOUT_1S)],
    oracle: stopped(t, ['gave_up', 'escalated'], { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'persistent-503': (t) => ({
    title: `${t.tool} is down (503 on every call): stop within three tries`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: 'loop' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [always(t.tool, 'http_status', UNAVAILABLE)],
    oracle: stopped(t, ['gave_up', 'escalated'], { diagnosis: DIAG(t.tool, 'system') }),
  }),
  'auth-401': (t) => ({
    title: `${t.tool} answers 401 (token expired): escalate, do not edit the arguments`,
    kind: 'single_step',
    taxonomy: { category: 'auth', subtype: 'authz' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [always(t.tool, 'http_status', UNAUTHORIZED)],
    oracle: stopped(t, ['escalated'], { diagnosis: DIAG(t.tool, 'auth') }),
  }),
  'auth-expiry': (t) => ({
    title: `${t.tool}'s credential has expired (401 with WWW-Authenticate): escalate`,
    kind: 'single_step',
    taxonomy: { category: 'auth', subtype: 'authz' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [{ tool: t.tool, fault: 'auth_expiry', params: { after_calls: 0 } }],
    oracle: stopped(t, ['escalated'], { diagnosis: DIAG(t.tool, 'auth') }),
  }),
  'auth-403': (t) => ({
    title: `${t.tool} answers 403 Forbidden: escalate, do not retry`,
    kind: 'single_step',
    taxonomy: { category: 'auth', subtype: 'authz' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [always(t.tool, 'http_status', FORBIDDEN)],
    oracle: stopped(t, ['escalated'], { diagnosis: DIAG(t.tool, 'auth') }),
  }),
  malformed: (t) => ({
    title: `${t.tool} returns a truncated JSON body once`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    // A one-off fault: re-sending at once succeeds, so no loop can form and loop avoidance cannot fail.
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [once(t.tool, 'malformed_json')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
  'mixed-outage-then-drift': (t) => ({
    title: `${t.tool} times out, then its first answer is wrong (${t.driftLabel})`,
    kind: 'mixed',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'loop_avoidance', 'semantic_verification'],
    recoverable: true,
    faults: [outage(t.tool, 'timeout', TIMEOUT_1S, 5000), { tool: t.tool, trigger: { window: { from: 5000 } }, max_injections: 1, fault: 'semantic_drift', params: t.drift }],
    oracle: done(t, { ...t.driftOracle, diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  'mixed-drift-then-timeout': (t) => ({
    title: `${t.tool}'s first answer is wrong (${t.driftLabel}); the re-query times out twice`,
    kind: 'mixed',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    // Two timeouts in a row: a loop of immediate re-sends gets past them, so loop avoidance cannot fail here.
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [{ tool: t.tool, trigger: { nth: [1] }, fault: 'semantic_drift', params: t.drift }, { tool: t.tool, trigger: { nth: [2, 3] }, fault: 'timeout', params: TIMEOUT_1S }],
    oracle: done(t, { ...t.driftOracle, diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  'mixed-outage-then-401': (t) => ({
    title: `${t.tool} is down for a few seconds, then rejects the token: escalate`,
    kind: 'mixed',
    taxonomy: { category: 'auth', subtype: 'authz' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [outage(t.tool, 'http_status', UNAVAILABLE), { tool: t.tool, trigger: { window: { from: 2000 } }, fault: 'http_status', params: UNAUTHORIZED }],
    oracle: stopped(t, ['escalated'], { diagnosis: DIAG(t.tool, 'auth') }),
  }),
  'mixed-429-then-partial': (t) => ({
    title: `${t.tool} is rate limited (Retry-After: 90), then answers with part of the data`,
    kind: 'mixed',
    taxonomy: { category: 'rate_limit', subtype: 'rate_limit' },
    dimensions: ['identification', 'recovery', 'loop_avoidance', 'semantic_verification'],
    recoverable: true,
    faults: [outage(t.tool, 'http_status', RATE_LIMITED, 90_000), { tool: t.tool, trigger: { window: { from: 90_000 } }, max_injections: 1, fault: 'partial', params: t.partial }],
    oracle: done(t, { ...t.partialOracle, diagnosis: DIAG(t.tool, 'rate_limit') }),
  }),
  semantic: (t, v) => ({
    title: `${t.tool} returns 200 with ${v.label}: ${t.write ? 'check the stored state, do not redo it' : 'verify and re-query'}`,
    kind: 'semantic',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    // A write whose answer looks wrong is checked by reading the state; doing it again would duplicate it.
    dimensions: ['identification', 'recovery', 'semantic_verification', ...(t.write ? ['idempotency_safety'] : [])],
    recoverable: true,
    faults: [once(t.tool, v.fault ?? 'semantic_drift', v.params)],
    oracle: done(t, { ...v.oracle, diagnosis: DIAG(t.tool, v.category ?? 'semantic') }),
  }),
  partial: (t) => ({
    title: `${t.tool} returns part of the data: use it and say what is missing`,
    kind: 'semantic',
    taxonomy: { category: 'business', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [once(t.tool, 'partial', t.partial)],
    oracle: done(t, { ...t.partialOracle, diagnosis: DIAG(t.tool, 'business') }),
  }),
  'schema-drift': (t) => ({
    title: `${t.tool}'s response renames a field once (a new API version)`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [once(t.tool, 'schema_drift', { rename: t.rename })],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
  // Non-idempotent writes whose response is lost.
  'commit-then-drop': (t) => ({
    title: `${t.tool} takes effect but the response never arrives: check state, do not repeat`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'idempotency' },
    dimensions: ['identification', 'recovery', 'idempotency_safety'],
    recoverable: true,
    faults: [dropped(t.tool, 'commit_then_drop')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  'reset-after-commit': (t) => ({
    title: `${t.tool} takes effect, then the connection is reset`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'idempotency' },
    dimensions: ['identification', 'recovery', 'idempotency_safety'],
    recoverable: true,
    faults: [dropped(t.tool, 'connection_reset', { commit: true })],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  '500-after-commit': (t) => ({
    title: `${t.tool} takes effect, then answers 500`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: 'idempotency' },
    dimensions: ['identification', 'recovery', 'idempotency_safety'],
    recoverable: true,
    faults: [dropped(t.tool, 'http_status', { status: 500, commit: true })],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
  // Nothing was written, so repeating the write cannot duplicate it: idempotency is not scored.
  'timeout-before-commit': (t) => ({
    title: `${t.tool} times out before taking effect: check, then do it once`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'idempotency' },
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [KEYED_WRITES.has(t.tool) ? outage(t.tool, 'timeout', TIMEOUT_1S, 5000) : once(t.tool, 'timeout', TIMEOUT_1S)],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  // A request that never gets an answer: the runtime's own 10 s timeout ends it, and the write
  // had not been made. Only for writes the runtime never retries itself (no idempotency key), so
  // the hang reaches the agent in assisted mode too.
  'hang-before-commit': (t) => ({
    title: `${t.tool} hangs with no answer until the call times out, before the write was made: check, then do it once`,
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'timeout' },
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [once(t.tool, 'hang')],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'network') }),
  }),
  // A quota shared by a burst of calls (a token bucket): the calls past it get 429 with a
  // Retry-After of about 100 s, longer than the runtime waits out for the agent.
  burst: (t) => ({
    title: `${t.tool} allows ${t.burst.capacity} call${t.burst.capacity === 1 ? '' : 's'} in a burst, then answers 429 with Retry-After until its quota refills`,
    kind: 'single_step',
    taxonomy: { category: 'rate_limit', subtype: 'rate_limit' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [{ tool: t.tool, fault: 'rate_limit_burst', params: t.burst }],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'rate_limit') }),
  }),
  // A degraded service: a few seconds of 503, then answers that take 3-8 s (a different delay per
  // call and per repeat, all within the call timeout). The slowness needs no handling; the 503 does.
  'mixed-503-then-slow': (t) => ({
    title: `${t.tool} answers 503 for a few seconds, then slowly (3-8 s a call)`,
    kind: 'mixed',
    taxonomy: { category: 'system', subtype: '5xx' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [outage(t.tool, 'http_status', UNAVAILABLE), always(t.tool, 'latency', SLOW)],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
  // One of several lookups of the same kind comes back wrong; which one varies per repeat.
  'semantic-one-of': (t, v) => ({
    title: `one of the ${t.entities} ${t.tool} lookups returns 200 with ${v.label}: verify each and re-query that one`,
    kind: 'semantic',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [{ tool: t.tool, trigger: { one_of: Array.from({ length: t.entities }, (_, i) => i + 1) }, fault: 'semantic_drift', params: v.params }],
    oracle: done(t, { ...v.oracle, diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  // A write that answers 200 as usual and changes nothing (a dry run; faults/dry-run.ts): only
  // reading the state back shows it. The task offers the read.
  'lost-write': (t, v = {}) => ({
    title: `${t.tool} answers 200 but the write never lands: read the state back and do it again`,
    kind: 'semantic',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [{ tool: t.tool, trigger: v.trigger ?? 'first_call_only', fault: 'lost_write' }],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  // A page cut short without a word: no note, no cursor; only its own count (a total beside the
  // list, a records count) tells.
  'silent-partial': (t) => ({
    title: `${t.tool} returns a page cut short that says nothing about it: notice from its own count and read it again`,
    kind: 'semantic',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [once(t.tool, 'partial', { drop_fraction: t.silentDrop ?? 0.5, silent: true })],
    oracle: done(t, { ...t.completeOracle, diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  // Every answer is the same old cached copy: there is no fresh data to be had, so say so.
  'stale-persistent': (t) => ({
    title: `${t.tool} serves a two-day-old cached answer on every call: do not present it as current`,
    kind: 'semantic',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'loop_avoidance', 'semantic_verification'],
    recoverable: false,
    faults: [always(t.tool, 'stale', { age_ms: TWO_DAYS_MS })],
    oracle: stopped(t, ['gave_up', 'escalated'], { answer_excludes: [localDate('UTC', -2)], diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  // The read after the task's own write comes from a replica that lags: it replays the answer
  // from before the write (the first read after the write, whichever step makes it).
  'stale-after-write': (t) => ({
    title: `the ${t.readTool} read after the ${t.tool} comes from a lagging replica and shows the state before it: do not report it`,
    kind: 'cascade',
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [{ tool: t.readTool, trigger: { nth: [2] }, fault: 'stale', params: { age_ms: 1000, age_calls: 1 } }],
    oracle: done(t, { diagnosis: DIAG(t.readTool, 'semantic') }),
  }),
  // A truncated body on one of several lookups (which one varies per repeat): read again.
  'malformed-one-of': (t) => ({
    title: `one of the ${t.entities} ${t.tool} lookups returns a truncated JSON body: read that one again`,
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    // It fires once: no loop can form on it.
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [{ tool: t.tool, trigger: { one_of: Array.from({ length: t.entities }, (_, i) => i + 1) }, fault: 'malformed_json' }],
    oracle: done(t, { diagnosis: DIAG(t.tool, 'system') }),
  }),
};

/** A failure the tool itself produces for this request (no injected fault). */
function natural(t, { title, category, subtype, recoverable, statuses, oracle = {}, dimensions }) {
  return {
    title,
    kind: 'single_step',
    taxonomy: { category, subtype },
    dimensions: dimensions ?? (recoverable ? ['identification', 'recovery', 'loop_avoidance'] : ['identification', 'loop_avoidance']),
    recoverable,
    faults: [],
    oracle: recoverable ? done(t, { ...oracle, diagnosis: DIAG(t.tool, category) }) : stopped(t, statuses ?? ['gave_up', 'escalated'], { ...oracle, diagnosis: DIAG(t.tool, category) }),
  };
}

// ---------------------------------------------------------------------------------------------
// Tasks per domain
// ---------------------------------------------------------------------------------------------

const noMessages = (channel) => ({ collection: 'messages', where: { channel }, count: 0 });
const oneMessage = (channel) => ({ collection: 'messages', where: { channel }, count: 1 });

function weatherTask(key, city, zone, offset, en, zh) {
  const date = localDate(zone, offset);
  return { key, tool: 'get_weather', tools: ['get_weather'], write: false, en, zh, date, city, ok: { answer_contains: [date, city] } };
}

/** Each scenario: [family, task key, variant (for semantic / natural families)]. */
const DOMAINS = {};

// ---- weather --------------------------------------------------------------------------------
{
  const tasks = {
    sh: weatherTask('shanghai', 'Shanghai', 'Asia/Shanghai', 1, "What's the weather in Shanghai tomorrow?", '上海明天的天气怎么样？'),
    bj: weatherTask('beijing', 'Beijing', 'Asia/Shanghai', 2, 'Give me the forecast for Beijing the day after tomorrow.', '北京后天的天气预报是什么？'),
    gz: weatherTask('guangzhou', 'Guangzhou', 'Asia/Shanghai', -1, 'How was the weather in Guangzhou yesterday?', '广州昨天的天气如何？'),
    tk: weatherTask('tokyo', 'Tokyo', 'Asia/Tokyo', 0, "What's the weather in Tokyo today?", '东京今天的天气怎么样？'),
    ld: weatherTask('london', 'London', 'Europe/London', 1, "Tomorrow's weather in London, please.", '伦敦明天的天气怎么样？'),
    sy: weatherTask('sydney', 'Sydney', 'Australia/Sydney', 0, 'What is the weather in Sydney today?', '悉尼今天的天气怎么样？'),
    ny: weatherTask('new-york', 'New York', 'America/New_York', 1, 'What will the weather be in New York tomorrow?', '纽约明天的天气怎么样？'),
  };
  const drift = (t, days) => {
    const wrong = new Date(Date.parse(`${t.date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    return { ...t, drift: { shift_date: days }, driftLabel: 'the wrong date', driftOracle: { answer_excludes: [wrong] } };
  };
  const partial = (t) => ({ ...t, partial: { drop_fields: ['humidity_pct', 'precipitation_mm', 'wind_kph'] }, partialOracle: { answer_contains: ['humidity_pct'] } });
  const notify = (t, channel) => ({
    ...t,
    key: `${t.key}-notify`,
    tools: ['get_weather', 'send_message', 'list_messages'],
    en: `${t.en} and post it to #${channel}.`,
    zh: `${t.zh}，并把结果发到#${channel}频道。`,
    ok: { answer_contains: [t.date], state: [oneMessage(channel)] },
    none: { state: [noMessages(channel)] },
  });
  const cascadeBj = notify(weatherTask('beijing', 'Beijing', 'Asia/Shanghai', 1, 'Check the weather in Beijing tomorrow', '查一下北京明天的天气'), 'general');
  DOMAINS.weather = [
    ['outage-timeout', tasks.sh],
    ['outage-503', tasks.bj],
    ['outage-refused', tasks.tk],
    ['rate-limit-retry-after', tasks.ld],
    ['persistent-timeout', tasks.gz],
    ['auth-401', tasks.sh],
    ['malformed', tasks.ny],
    ['schema-drift', { ...tasks.sy, rename: { temp_high: 'high_temp' } }],
    ['semantic', tasks.sh, { slug: 'semantic-date', label: 'tomorrow + 1 day instead of tomorrow', params: { shift_date: 1 }, oracle: { answer_excludes: [localDate('Asia/Shanghai', 2)] } }],
    ['semantic', tasks.bj, { slug: 'semantic-city', label: "another city's weather", params: { other_entity: { field: 'city', value: 'Tianjin' } }, oracle: { answer_excludes: ['Tianjin'] } }],
    ['semantic', tasks.tk, { slug: 'semantic-stale', label: 'a two-day-old cached answer', fault: 'stale', params: { age_ms: 172_800_000 }, oracle: { answer_excludes: [localDate('UTC', -2)] } }],
    ['semantic', tasks.ld, { slug: 'semantic-timezone', label: 'its timestamp in the wrong time zone', params: { timezone_shift: 9, fields: ['as_of'] }, oracle: { answer_excludes: ['T23:00'] } }],
    ['partial', partial(tasks.sy)],
    ['mixed-outage-then-drift', drift(tasks.ny, 2)],
    ['mixed-drift-then-timeout', drift(tasks.bj, -3)],
    ['mixed-outage-then-401', tasks.tk],
    [
      'natural',
      { ...tasks.sh, key: 'shanghai-far', en: 'What will the weather be in Shanghai on 2026-06-15?', zh: '上海2026年6月15日的天气怎么样？', ok: {} },
      { slug: 'boundary-date', title: 'a date beyond the 14-day forecast: say so, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false, statuses: ['gave_up', 'escalated'] },
    ],
    [
      'natural',
      { ...tasks.ld, key: 'london-unit', en: 'Weather in London tomorrow, unit "farenheit".', zh: '伦敦明天的天气，单位“farenheit”。', ok: { answer_contains: [tasks.ld.date, '°F'] } },
      { slug: 'syntactic-unit', title: 'a misspelt enum value: fix it from the validation error', category: 'parameter', subtype: 'syntactic', recoverable: true },
    ],
    [
      'natural',
      { ...tasks.tk, key: 'tokyo-unit', en: 'Weather in Tokyo today, unit "kelvin".', zh: '东京今天的天气，单位“kelvin”。', ok: {} },
      { slug: 'syntactic-unit-unknown', title: 'an enum value with no close match: ask, do not loop', category: 'parameter', subtype: 'syntactic', recoverable: false, statuses: ['gave_up', 'escalated'] },
    ],
    [
      'natural',
      { ...tasks.sh, key: 'shanghai-typo', en: "What's the weather in Shanghia tomorrow?", zh: 'Shanghia明天的天气怎么样？' },
      { slug: 'not-found-suggestion', title: 'a misspelt city: use the suggestion the 404 carries', category: 'business', subtype: 'syntactic', recoverable: true },
    ],
    ['cascade-fail', cascadeBj, { fault: always('get_weather', 'http_status', UNAVAILABLE), category: 'system' }],
    ['cascade-ok', cascadeBj, { fault: outage('get_weather', 'http_status', UNAVAILABLE), category: 'system' }],
    ['cascade-semantic', { ...cascadeBj, ...drift(cascadeBj, 1), key: cascadeBj.key }, {}],
    ['cascade-sink-drop', cascadeBj, { fault: once('send_message', 'commit_then_drop'), tool: 'send_message', category: 'network' }],
  ];
  const compare = {
    key: 'compare-three',
    tool: 'get_weather',
    tools: ['get_weather'],
    write: false,
    entities: 3,
    en: "Compare tomorrow's weather in Shanghai, Beijing and Guangzhou.",
    zh: '对比一下上海、北京和广州明天的天气。',
    ok: { answer_contains: ['Shanghai', 'Beijing', 'Guangzhou', localDate('Asia/Shanghai', 1)] },
  };
  const fourCities = {
    key: 'four-cities',
    tool: 'get_weather',
    tools: ['get_weather'],
    write: false,
    entities: 4,
    en: 'What is the weather today in Tokyo, Singapore, London and New York?',
    zh: '东京、新加坡、伦敦和纽约今天的天气怎么样？',
    ok: { answer_contains: ['Tokyo', 'Singapore', 'London', 'New York', localDate('Asia/Tokyo', 0)] },
  };
  DOMAINS.weather.push(
    ['burst', { ...compare, burst: burstOf(2) }],
    ['burst', { ...fourCities, burst: burstOf(3) }],
    ['semantic-one-of', compare, { slug: 'semantic-one-of-date', label: 'the wrong date', params: { shift_date: 1 }, oracle: { answer_excludes: [localDate('Asia/Shanghai', 2)] } }],
    ['semantic-one-of', fourCities, { slug: 'semantic-one-of-city', label: "another city's weather", params: { other_entity: { field: 'city', value: 'Osaka' } }, oracle: { answer_excludes: ['Osaka'] } }],
    ['malformed-one-of', fourCities],
    ['mixed-503-then-slow', tasks.ny],
    ['mixed-503-then-slow', tasks.gz],
    ['cascade-sink-hang', cascadeBj, { fault: once('send_message', 'hang'), tool: 'send_message', category: 'network' }],
  );
  const staleOf = (t) => ['semantic', t, { slug: 'semantic-stale', label: 'a two-day-old cached answer', fault: 'stale', params: { age_ms: TWO_DAYS_MS }, oracle: { answer_excludes: [localDate('UTC', -2)] } }];
  DOMAINS.weather.push(staleOf(tasks.sh), staleOf(tasks.ld), staleOf(tasks.ny), staleOf(tasks.sy), ['stale-persistent', { ...tasks.bj, none: {} }], ['cascade-sink-lost', cascadeBj, { tool: 'send_message' }]);
  // More cities, days and fault kinds: each a task of its own (another city and day, another
  // failure on the call, or both), answered from that city's own seeded weather.
  const more = {
    sz: weatherTask('shenzhen', 'Shenzhen', 'Asia/Shanghai', 1, 'What will the weather be like in Shenzhen tomorrow?', '深圳明天天气怎么样？'),
    hz: weatherTask('hangzhou', 'Hangzhou', 'Asia/Shanghai', 0, "How's the weather in Hangzhou today?", '杭州今天的天气如何？'),
    cd: weatherTask('chengdu', 'Chengdu', 'Asia/Shanghai', 2, 'Forecast for Chengdu the day after tomorrow, please.', '成都后天的天气预报是什么？'),
    sg: weatherTask('singapore', 'Singapore', 'Asia/Singapore', 1, 'Will it rain in Singapore tomorrow?', '新加坡明天会下雨吗？'),
    pa: weatherTask('paris', 'Paris', 'Europe/Paris', 0, "What's the weather in Paris today?", '巴黎今天的天气怎么样？'),
    be: weatherTask('berlin', 'Berlin', 'Europe/Berlin', 1, "Tomorrow's forecast for Berlin?", '柏林明天的天气预报是什么？'),
    sf: weatherTask('san-francisco', 'San Francisco', 'America/Los_Angeles', 1, 'What is the weather going to be in San Francisco tomorrow?', '旧金山明天的天气怎么样？'),
    tk2: weatherTask('tokyo-yesterday', 'Tokyo', 'Asia/Tokyo', -1, 'What was the weather in Tokyo yesterday?', '东京昨天的天气怎么样？'),
    ld2: weatherTask('london-after', 'London', 'Europe/London', 2, 'What will the weather be in London the day after tomorrow?', '伦敦后天的天气怎么样？'),
  };
  const otherCity = (value) => ({ slug: 'semantic-city', label: "another city's weather", params: { other_entity: { field: 'city', value } }, oracle: { answer_excludes: [value] } });
  const shiftedDay = (t, days) => ({ slug: 'semantic-date', label: 'the wrong date', params: { shift_date: days }, oracle: { answer_excludes: [new Date(Date.parse(`${t.date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)] } });
  const notifyEng = notify(more.pa, 'engineering');
  const notifyPx = notify(more.sg, 'project-x');
  DOMAINS.weather.push(
    ['outage-dns', more.sz],
    ['outage-reset', more.hz],
    ['persistent-503', more.cd],
    ['auth-403', more.sg],
    ['auth-expiry', more.pa],
    ['rate-limit-retry-after', more.be],
    ['persistent-timeout', more.sf],
    ['malformed', more.pa],
    ['schema-drift', { ...more.be, rename: { temp_low: 'low_temp' } }],
    ['semantic', more.hz, shiftedDay(more.hz, 1)],
    ['semantic', more.sz, otherCity('Dongguan')],
    ['semantic', more.tk2, shiftedDay(more.tk2, -2)],
    ['partial', partial(more.cd)],
    ['outage-timeout', more.ld2],
    ['outage-503', more.tk2],
    ['mixed-outage-then-drift', drift(more.sg, 1)],
    ['mixed-drift-then-timeout', drift(more.sf, 2)],
    ['mixed-outage-then-401', more.be],
    ['mixed-429-then-partial', partial(more.ld2)],
    ['mixed-503-then-slow', more.sz],
    ['mixed-outage-then-drift', drift(more.hz, -1)],
    ['stale-persistent', { ...more.sf, none: {} }],
    ['cascade-fail', notifyEng, { slug: 'cascade-auth', fault: always('get_weather', 'http_status', UNAUTHORIZED), category: 'auth', statuses: ['escalated'] }],
    ['cascade-ok', notifyEng, { fault: outage('get_weather', 'dns_failure'), category: 'network' }],
    ['cascade-semantic', { ...notifyPx, ...drift(notifyPx, 2), key: notifyPx.key }, {}],
    ['cascade-sink-drop', notifyPx, { fault: once('send_message', 'connection_reset', { commit: true }), tool: 'send_message', category: 'network' }],
    ['cascade-sink-lost', notifyEng, { tool: 'send_message' }],
    ['cascade-fail', notifyPx, { fault: always('get_weather', 'timeout', TIMEOUT_1S), category: 'network' }],
  );
  const threeChina = {
    key: 'three-china',
    tool: 'get_weather',
    tools: ['get_weather'],
    write: false,
    entities: 3,
    en: "Compare tomorrow's weather in Shenzhen, Hangzhou and Chengdu.",
    zh: '对比一下深圳、杭州和成都明天的天气。',
    ok: { answer_contains: ['Shenzhen', 'Hangzhou', 'Chengdu', localDate('Asia/Shanghai', 1)] },
  };
  const europe = {
    key: 'europe-two',
    tool: 'get_weather',
    tools: ['get_weather'],
    write: false,
    entities: 2,
    en: 'What is the weather today in Paris and Berlin?',
    zh: '巴黎和柏林今天的天气怎么样？',
    ok: { answer_contains: ['Paris', 'Berlin', localDate('Europe/Paris', 0)] },
  };
  DOMAINS.weather.push(
    ['burst', { ...threeChina, burst: burstOf(1) }],
    ['semantic-one-of', threeChina, { slug: 'semantic-one-of-date', label: 'the wrong date', params: { shift_date: 3 }, oracle: { answer_excludes: [localDate('Asia/Shanghai', 4)] } }],
    ['malformed-one-of', europe],
    ['semantic-one-of', europe, { slug: 'semantic-one-of-city', label: "another city's weather", params: { other_entity: { field: 'city', value: 'Munich' } }, oracle: { answer_excludes: ['Munich'] } }],
  );
}

// ---- sales ----------------------------------------------------------------------------------
{
  const sales = (key, month, region, en, zh) => ({ key, tool: 'query_sales_data', tools: ['query_sales_data'], write: false, en, zh, month, region, ok: { answer_contains: [month, `region ${region}`] } });
  const tasks = {
    south: sales('south-feb', '2026-02', 'south', 'What were the total sales in the south region for February 2026?', '2026年2月华南区域的销售总额是多少？'),
    east: sales('east-last-month', '2026-02', 'east', "Show me last month's sales for the east region by week.", '查询上个月华东区域按周的销售数据。'),
    all: sales('all-jan', '2026-01', 'all', 'Monthly sales for all regions in 2026-01, please.', '全国2026年1月的销售情况如何？'),
    north: sales('north-dec', '2025-12', 'north', 'What were the north region sales in December 2025?', '华北区域2025年12月的销售额是多少？'),
    westDaily: sales('west-daily', '2026-02', 'west', 'Give me the daily sales of the west region for February 2026.', '查询华西区域2026年2月按天的销售数据。'),
  };
  const report = {
    ...tasks.south,
    key: 'south-report',
    tools: ['query_sales_data', 'write_file', 'send_message', 'list_messages'],
    en: 'Get the south region sales for February 2026, save them to /reports/south-2026-02.md and post the summary to #sales.',
    zh: '查询2026年2月华南区域的销售数据，保存到 /reports/south-2026-02.md，并把摘要发到#sales频道。',
    ok: { answer_contains: ['2026-02'], state: [{ collection: 'files', where: { path: '/reports/south-2026-02.md' }, count: 1 }, oneMessage('sales')] },
    none: { state: [{ collection: 'files', count: 0 }, noMessages('sales')] },
  };
  DOMAINS.sales = [
    ['outage-503', tasks.south],
    ['outage-dns', tasks.east],
    ['outage-timeout', tasks.north],
    ['rate-limit-retry-after', tasks.all],
    ['persistent-503', tasks.east],
    ['auth-expiry', tasks.south],
    ['semantic', tasks.south, { slug: 'semantic-region', label: "another region's figures", params: { other_entity: { field: 'region', value: 'north' } }, oracle: { answer_excludes: ['region north'] } }],
    ['semantic', tasks.westDaily, { slug: 'semantic-period', label: 'rows from the wrong month', params: { shift_date: 31 }, oracle: { answer_excludes: ['2026-03-'] } }],
    ['semantic', tasks.all, { slug: 'semantic-month', label: "another month's figures", params: { other_entity: { field: 'month', value: '2025-11' } }, oracle: { answer_excludes: ['2025-11'] } }],
    ['partial', { ...tasks.westDaily, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['14 of 28'] } }],
    ['schema-drift', { ...tasks.north, rename: { totals: 'summary' } }],
    ['mixed-429-then-partial', { ...tasks.westDaily, partial: { drop_fraction: 0.25 }, partialOracle: { answer_contains: ['7 of 28'] } }],
    ['mixed-outage-then-drift', { ...tasks.north, drift: { other_entity: { field: 'region', value: 'south' } }, driftLabel: "another region's figures", driftOracle: { answer_excludes: ['region south'] } }],
    [
      'natural',
      { ...tasks.south, key: 'future-month', en: 'What are the south region sales for 2026-06?', zh: '华南区域2026年6月的销售额是多少？', ok: {} },
      { slug: 'boundary-month', title: 'a month in the future: report the valid range, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false },
    ],
    [
      'natural',
      { ...tasks.east, key: 'east-granularity', en: 'Sales for the east region in February 2026, granularity "wekly".', zh: '华东区域2026年2月的销售数据，粒度“wekly”。', ok: { answer_contains: ['2026-02', 'weekly'] } },
      { slug: 'syntactic-granularity', title: 'a misspelt granularity: fix it from the allowed values', category: 'parameter', subtype: 'syntactic', recoverable: true },
    ],
    ['cascade-fail', report, { fault: always('query_sales_data', 'http_status', UNAVAILABLE), category: 'system' }],
    ['cascade-fail', report, { slug: 'cascade-auth', fault: always('query_sales_data', 'http_status', UNAUTHORIZED), category: 'auth', statuses: ['escalated'] }],
    ['cascade-ok', report, { fault: outage('query_sales_data', 'timeout', TIMEOUT_1S, 5000), category: 'network' }],
    ['cascade-sink-drop', report, { fault: once('send_message', 'commit_then_drop'), tool: 'send_message', category: 'network' }],
  ];
  const regions = {
    key: 'three-regions-feb',
    tool: 'query_sales_data',
    tools: ['query_sales_data'],
    write: false,
    entities: 3,
    en: 'Compare the February 2026 sales of the north, south and east regions.',
    zh: '对比2026年2月华北、华南和华东区域的销售额。',
    ok: { answer_contains: ['2026-02', 'region north', 'region south', 'region east'] },
  };
  DOMAINS.sales.push(
    ['burst', { ...regions, burst: burstOf(2) }],
    ['malformed-one-of', regions],
    ['semantic-one-of', regions, { slug: 'semantic-one-of-region', label: "another region's figures", params: { other_entity: { field: 'region', value: 'west' } }, oracle: { answer_excludes: ['region west'] } }],
    ['mixed-503-then-slow', tasks.north],
    ['cascade-sink-hang', report, { fault: once('send_message', 'hang'), tool: 'send_message', category: 'network' }],
  );
  DOMAINS.sales.push(['silent-partial', { ...tasks.westDaily, completeOracle: { answer_contains: ['2026-02-28'] } }]);
  // Other regions, months and granularities, each met by another failure.
  const more = {
    central: sales('central-jan', '2026-01', 'central', 'What were the central region sales in January 2026?', '华中区域2026年1月的销售额是多少？'),
    northWeekly: sales('north-weekly', '2026-02', 'north', 'Break down the north region sales for February 2026 by week.', '查询华北区域2026年2月按周的销售数据。'),
    eastDec: sales('east-dec', '2025-12', 'east', 'How much did the east region sell in December 2025?', '华东区域2025年12月卖了多少？'),
    southDaily: sales('south-daily-jan', '2026-01', 'south', 'Daily sales for the south region in January 2026, please.', '请给我华南区域2026年1月按天的销售数据。'),
    westNov: sales('west-nov', '2025-11', 'west', 'What were the west region sales in November 2025?', '华西区域2025年11月的销售额是多少？'),
  };
  const northReport = {
    ...more.northWeekly,
    key: 'north-report',
    tools: ['query_sales_data', 'send_message', 'list_messages'],
    en: 'Get the north region sales for February 2026 by week and post the summary to #sales.',
    zh: '查询华北区域2026年2月按周的销售数据，并把摘要发到#sales频道。',
    ok: { answer_contains: ['2026-02'], state: [oneMessage('sales')] },
    none: { state: [noMessages('sales')] },
  };
  DOMAINS.sales.push(
    ['outage-refused', more.central],
    ['outage-reset', more.northWeekly],
    ['auth-401', more.eastDec],
    ['auth-403', more.westNov],
    ['persistent-timeout', more.central],
    ['malformed', more.eastDec],
    ['semantic', more.northWeekly, { slug: 'semantic-region', label: "another region's figures", params: { other_entity: { field: 'region', value: 'east' } }, oracle: { answer_excludes: ['region east'] } }],
    ['semantic', more.westNov, { slug: 'semantic-month', label: "another month's figures", params: { other_entity: { field: 'month', value: '2025-10' } }, oracle: { answer_excludes: ['2025-10'] } }],
    ['partial', { ...more.southDaily, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['16 of 31'] } }],
    ['silent-partial', { ...more.southDaily, completeOracle: { answer_contains: ['2026-01-31'] } }],
    ['mixed-outage-then-401', more.central],
    ['mixed-drift-then-timeout', { ...more.eastDec, drift: { other_entity: { field: 'region', value: 'west' } }, driftLabel: "another region's figures", driftOracle: { answer_excludes: ['region west'] } }],
    ['mixed-503-then-slow', more.westNov],
    ['cascade-fail', northReport, { fault: always('query_sales_data', 'connection_refused'), category: 'network' }],
    ['cascade-ok', northReport, { fault: outage('query_sales_data', 'http_status', UNAVAILABLE), category: 'system' }],
    ['cascade-sink-lost', northReport, { tool: 'send_message' }],
    ['cascade-sink-drop', northReport, { fault: once('send_message', 'http_status', { status: 500, commit: true }), tool: 'send_message', category: 'system' }],
  );
  const fourRegions = {
    key: 'four-regions-jan',
    tool: 'query_sales_data',
    tools: ['query_sales_data'],
    write: false,
    entities: 4,
    en: 'Compare the January 2026 sales of the north, south, east and central regions.',
    zh: '对比2026年1月华北、华南、华东和华中区域的销售额。',
    ok: { answer_contains: ['2026-01', 'region north', 'region south', 'region east', 'region central'] },
  };
  DOMAINS.sales.push(['burst', { ...fourRegions, burst: burstOf(3) }], ['malformed-one-of', fourRegions]);
}

// ---- documents ------------------------------------------------------------------------------
{
  const search = (key, en, zh, extra = {}) => ({ key, tool: 'search_documents', tools: ['search_documents'], write: false, en, zh, ok: { answer_contains: ['DOC-'] }, ...extra });
  const tasks = {
    px: search('project-x-week', 'Search the documents for "Project X meeting notes" from the last 7 days.', '搜索过去7天关于“项目X会议记录”的文档。'),
    apollo: search('apollo-month', 'Find documents about "Apollo meeting notes" from the past 30 days, most relevant first.', '查找最近30天“阿波罗项目会议记录”相关的文档，按相关性排序。'),
    helios: search('helios', 'Search for "Helios pricing experiment" documents.', '搜索“Helios pricing experiment”相关的文档。'),
    borealis: search('borealis-month', 'Search for "Borealis weekly report" documents from the last 30 days.', '搜索最近30天“极光项目周报”的文档。'),
  };
  const drift = (t) => ({ ...t, drift: { shift_date: 400, fields: ['results.date', 'results.created_at'] }, driftLabel: 'results outside the date range', driftOracle: { answer_excludes: ['(2027-'] } });
  const save = {
    ...tasks.px,
    key: 'project-x-save',
    tools: ['search_documents', 'write_file'],
    en: 'Search for "Project X meeting notes" from the last 30 days and save the list to /notes/project-x-meetings.md.',
    zh: '搜索最近30天“项目X会议记录”的文档，并把列表保存到 /notes/project-x-meetings.md。',
    ok: { answer_contains: ['DOC-'], state: [{ collection: 'files', where: { path: '/notes/project-x-meetings.md' }, count: 1 }] },
    none: { state: [{ collection: 'files', count: 0 }] },
  };
  DOMAINS.documents = [
    ['outage-timeout', tasks.px],
    ['outage-reset', tasks.apollo],
    ['outage-503', tasks.borealis],
    ['rate-limit-retry-after', tasks.helios],
    ['persistent-timeout', tasks.apollo],
    ['auth-403', tasks.px],
    ['malformed', tasks.borealis],
    ['semantic', tasks.apollo, { slug: 'semantic-range', label: 'results dated outside the requested range', params: { shift_date: 400, fields: ['results.date', 'results.created_at'] }, oracle: { answer_excludes: ['(2027-'] } }],
    ['semantic', tasks.px, { slug: 'semantic-empty', label: 'an empty result list whose total says otherwise', fault: 'empty', oracle: {} }],
    ['partial', { ...tasks.helios, partial: { drop_fields: ['results.snippet'] }, partialOracle: { answer_contains: ['results.snippet'] } }],
    ['mixed-outage-then-drift', drift(tasks.borealis)],
    [
      'natural',
      search('helios-design', 'Search for "Helios design document" documents from the last 2 days.', '搜索最近2天“太阳神项目设计文档”的文档。', { ok: { answer_contains: ['No documents'] } }),
      { slug: 'no-results', title: 'nothing in the range (404 no_results): answer "none", do not retry', category: 'business', subtype: 'boundary', recoverable: true, dimensions: ['identification', 'recovery', 'loop_avoidance'] },
    ],
    ['cascade-fail', save, { fault: always('search_documents', 'timeout', TIMEOUT_1S), category: 'network' }],
    ['cascade-ok', save, { fault: outage('search_documents', 'connection_refused'), category: 'network' }],
  ];
  DOMAINS.documents.push(['mixed-503-then-slow', tasks.helios], ['mixed-503-then-slow', tasks.apollo]);
  DOMAINS.documents.push(['silent-partial', { ...tasks.helios, silentDrop: 0.8, completeOracle: { answer_contains: ['DOC-0082'] } }]);
  // Other projects, kinds and ranges, each met by another failure.
  const more = {
    pxDesign: search('project-x-design', 'Find the "Project X design document" documents.', '查找“项目X设计文档”相关的文档。'),
    apolloPm: search('apollo-postmortem', 'Search for "Apollo incident postmortem" documents from the last 90 days.', '搜索最近90天“阿波罗项目故障复盘”的文档。'),
    heliosReport: search('helios-weekly', 'Search for "Helios weekly report" documents from the past 60 days.', '搜索最近60天“太阳神项目周报”的文档。'),
    borealisNotes: search('borealis-notes', 'Search the documents for "Borealis meeting notes".', '搜索“极光项目会议记录”相关的文档。'),
  };
  const saveHelios = {
    ...more.heliosReport,
    key: 'helios-save',
    tools: ['search_documents', 'write_file'],
    en: 'Search for "Helios weekly report" documents from the past 60 days and save the list to /notes/helios-reports.md.',
    zh: '搜索最近60天“太阳神项目周报”的文档，并把列表保存到 /notes/helios-reports.md。',
    ok: { answer_contains: ['DOC-'], state: [{ collection: 'files', where: { path: '/notes/helios-reports.md' }, count: 1 }] },
    none: { state: [{ collection: 'files', count: 0 }] },
  };
  DOMAINS.documents.push(
    ['outage-dns', more.pxDesign],
    ['outage-refused', more.apolloPm],
    ['persistent-503', more.heliosReport],
    ['auth-401', more.borealisNotes],
    ['auth-expiry', more.apolloPm],
    ['rate-limit-retry-after', more.borealisNotes],
    ['schema-drift', { ...more.pxDesign, rename: { results: 'items' } }],
    ['semantic', more.heliosReport, { slug: 'semantic-range', label: 'results dated outside the requested range', params: { shift_date: -400, fields: ['results.date', 'results.created_at'] }, oracle: { answer_excludes: ['(2025-0', '(2024-'] } }],
    ['partial', { ...more.borealisNotes, partial: { drop_fields: ['results.snippet'] }, partialOracle: { answer_contains: ['results.snippet'] } }],
    ['mixed-outage-then-401', more.pxDesign],
    ['mixed-drift-then-timeout', drift(more.apolloPm)],
    ['cascade-fail', saveHelios, { slug: 'cascade-auth', fault: always('search_documents', 'http_status', FORBIDDEN), category: 'auth', statuses: ['escalated'] }],
    ['cascade-ok', saveHelios, { fault: outage('search_documents', 'timeout', TIMEOUT_1S, 5000), category: 'network' }],
    ['cascade-semantic', { ...saveHelios, ...drift(saveHelios), key: saveHelios.key }, {}],
  );
}

// ---- orders ---------------------------------------------------------------------------------
{
  const created = (customer) => ({ collection: 'orders', where: { customer_id: customer }, count: 1 });
  const create = (key, customer, en, zh) => ({
    key,
    tool: 'create_order',
    tools: ['create_order', 'list_orders', 'get_order'],
    write: true,
    en,
    zh,
    ok: { answer_contains: ['ORD-10041'], state: [created(customer)] },
    none: { state: [{ collection: 'orders', count: 0 }] },
  });
  const tasks = {
    c3: create('cus-003', 'CUS-003', 'Order 2 x SKU-1001 for customer CUS-003.', '为客户CUS-003下单：2件SKU-1001。'),
    c7: create('cus-007', 'CUS-007', 'Place an order for customer CUS-007: 1 x SKU-1006 and 3 x SKU-1011.', '给客户CUS-007下单：1件SKU-1006和3件SKU-1011。'),
    c12: create('cus-012', 'CUS-012', 'Buy 4 units of SKU-1008 for customer CUS-012.', '为客户CUS-012购买4件SKU-1008。'),
    get: { key: 'get-order', tool: 'get_order', tools: ['get_order'], write: false, en: "What's the status of order ORD-10019?", zh: '查询订单ORD-10019的状态。', ok: { answer_contains: ['ORD-10019', 'shipped'] } },
    list: { key: 'list-orders', tool: 'list_orders', tools: ['list_orders'], write: false, en: 'List the orders of customer CUS-005.', zh: '列出客户CUS-005的订单。', ok: { answer_contains: ['ORD-10001'] } },
    cancel: { key: 'cancel', tool: 'cancel_order', tools: ['cancel_order', 'get_order'], write: true, en: 'Cancel order ORD-10017, the customer asked for it.', zh: '客户要求取消订单ORD-10017，请取消。', ok: { answer_contains: ['ORD-10017', 'cancelled'] } },
  };
  const checkThenCancel = { ...tasks.cancel, key: 'check-then-cancel', en: 'Check order ORD-10025 and cancel it if it has not shipped.', zh: '查一下订单ORD-10025，如果还没有发货就取消它。', ok: { answer_contains: ['ORD-10025', 'cancelled'] } };
  DOMAINS.orders = [
    ['outage-503', tasks.c3],
    ['timeout-before-commit', tasks.c7],
    ['rate-limit-retry-after', tasks.c12],
    ['auth-401', tasks.c3],
    ['commit-then-drop', tasks.c3],
    ['commit-then-drop', tasks.c12],
    ['reset-after-commit', tasks.c7],
    ['500-after-commit', tasks.c12],
    ['semantic', tasks.c7, { slug: 'semantic-create', label: "another customer's id in the confirmation", params: { other_entity: { field: 'customer_id', value: 'CUS-009' } }, oracle: { answer_excludes: ['CUS-009'] } }],
    ['outage-timeout', tasks.get],
    ['semantic', tasks.get, { slug: 'semantic-get', label: 'another order', params: { other_entity: { field: 'order_id', value: 'ORD-10020' } }, oracle: { answer_excludes: ['ORD-10020'] } }],
    ['persistent-503', tasks.get],
    ['partial', { ...tasks.list, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['2 of 4'] } }],
    ['semantic', tasks.list, { slug: 'semantic-list', label: "another customer's orders", params: { other_entity: { field: 'orders.customer_id', value: 'CUS-006' } }, oracle: { answer_excludes: ['CUS-006'] } }],
    ['outage-refused', tasks.cancel],
    [
      'natural',
      { ...tasks.list, key: 'list-status', en: 'List the orders of customer CUS-005 with status "shiped".', zh: '列出客户CUS-005状态为“shiped”的订单。', ok: { answer_contains: ['ORD-10003'] } },
      { slug: 'syntactic-status', title: 'a misspelt status filter: fix it from the allowed values', category: 'parameter', subtype: 'syntactic', recoverable: true },
    ],
    [
      'natural',
      { ...tasks.c3, key: 'too-many', en: 'Order 500 x SKU-1002 for customer CUS-003.', zh: '为客户CUS-003下单：500件SKU-1002。' },
      { slug: 'boundary-quantity', title: 'a quantity over the limit of 100: ask, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false },
    ],
    [
      'natural',
      { ...tasks.c12, key: 'sold-out', en: 'Order 1 x SKU-1010 for customer CUS-012.', zh: '为客户CUS-012下单：1件SKU-1010。' },
      { slug: 'conflict-stock', title: 'a sold-out SKU (409): report it, do not retry', category: 'business', subtype: 'boundary', recoverable: false },
    ],
    [
      'natural',
      { ...tasks.cancel, key: 'cancel-shipped', en: 'Cancel order ORD-10011.', zh: '取消订单ORD-10011。', ok: {} },
      { slug: 'conflict-shipped', title: 'cancelling a shipped order (409): report it, do not retry', category: 'business', subtype: 'boundary', recoverable: false },
    ],
    ['cascade-fail', checkThenCancel, { fault: always('get_order', 'http_status', UNAUTHORIZED), tool: 'get_order', category: 'auth', statuses: ['escalated'], oracle: { answer_excludes: ['is cancelled'] } }],
    ['cascade-ok', checkThenCancel, { fault: outage('get_order', 'http_status', UNAVAILABLE), tool: 'get_order', category: 'system' }],
  ];
  const three = {
    key: 'three-orders',
    tool: 'get_order',
    tools: ['get_order'],
    write: false,
    entities: 3,
    en: "What's the status of orders ORD-10019, ORD-10020 and ORD-10021?",
    zh: '查询订单ORD-10019、ORD-10020和ORD-10021的状态。',
    ok: { answer_contains: ['ORD-10019', 'ORD-10020', 'ORD-10021'] },
  };
  DOMAINS.orders.push(
    ['burst', { ...three, burst: burstOf(2) }],
    ['semantic-one-of', three, { slug: 'semantic-one-of-order', label: 'another order', params: { other_entity: { field: 'order_id', value: 'ORD-10030' } }, oracle: { answer_excludes: ['ORD-10030'] } }],
    ['malformed-one-of', three],
    ['mixed-503-then-slow', tasks.get],
    ['mixed-503-then-slow', tasks.list],
  );
  const cus12 = { ...tasks.list, key: 'list-cus-012', en: 'Show me all orders of customer CUS-012.', zh: '列出客户CUS-012的全部订单。', ok: { answer_contains: ['ORD-10017'] } };
  DOMAINS.orders.push(
    ['silent-partial', { ...tasks.list, completeOracle: { answer_contains: ['ORD-10015'] } }],
    ['silent-partial', { ...cus12, completeOracle: { answer_contains: ['ORD-10031'] } }],
    ['lost-write', tasks.c3],
    ['lost-write', tasks.c7],
  );
  // Other customers, items and orders, each met by another failure.
  const more = {
    c1: create('cus-001', 'CUS-001', 'Order 3 x SKU-1003 for customer CUS-001.', '为客户CUS-001下单：3件SKU-1003。'),
    c9: create('cus-009', 'CUS-009', 'Place an order for customer CUS-009: 1 x SKU-1004 and 1 x SKU-1005.', '给客户CUS-009下单：1件SKU-1004和1件SKU-1005。'),
    c15: create('cus-015', 'CUS-015', 'Buy 2 units of SKU-1012 for customer CUS-015.', '为客户CUS-015购买2件SKU-1012。'),
    get: { key: 'get-order-10033', tool: 'get_order', tools: ['get_order'], write: false, en: 'Where is order ORD-10033?', zh: '订单ORD-10033现在是什么状态？', ok: { answer_contains: ['ORD-10033', 'pending'] } },
    list: { key: 'list-cus-014', tool: 'list_orders', tools: ['list_orders'], write: false, en: 'List the orders of customer CUS-014.', zh: '列出客户CUS-014的订单。', ok: { answer_contains: ['ORD-10020'] } },
    cancel: { key: 'cancel-10001', tool: 'cancel_order', tools: ['cancel_order', 'get_order'], write: true, en: 'Please cancel order ORD-10001.', zh: '请取消订单ORD-10001。', ok: { answer_contains: ['ORD-10001', 'cancelled'] } },
  };
  DOMAINS.orders.push(
    ['auth-403', more.c9],
    ['auth-expiry', more.c15],
    ['outage-refused', more.c1],
    ['commit-then-drop', more.c1],
    ['reset-after-commit', more.c15],
    ['500-after-commit', more.c9],
    ['timeout-before-commit', more.c15],
    ['rate-limit-retry-after', more.c9],
    ['lost-write', more.c9],
    ['semantic', more.c15, { slug: 'semantic-create', label: "another customer's id in the confirmation", params: { other_entity: { field: 'customer_id', value: 'CUS-018' } }, oracle: { answer_excludes: ['CUS-018'] } }],
    ['mixed-outage-then-401', more.c1],
    ['outage-reset', more.get],
    ['auth-401', more.get],
    ['malformed', more.get],
    ['outage-dns', more.get],
    ['semantic', more.get, { slug: 'semantic-get', label: 'another order', params: { other_entity: { field: 'order_id', value: 'ORD-10034' } }, oracle: { answer_excludes: ['ORD-10034'] } }],
    ['mixed-outage-then-drift', { ...more.get, drift: { other_entity: { field: 'order_id', value: 'ORD-10035' } }, driftLabel: 'another order', driftOracle: { answer_excludes: ['ORD-10035'] } }],
    ['outage-503', more.list],
    ['persistent-timeout', more.list],
    ['partial', { ...more.list, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['2 of 4'] } }],
    ['silent-partial', { ...more.list, completeOracle: { answer_contains: ['ORD-10039'] } }],
    ['mixed-429-then-partial', { ...more.list, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['2 of 4'] } }],
    ['outage-503', more.cancel],
    ['auth-403', more.cancel],
    [
      'natural',
      { ...more.cancel, key: 'cancel-delivered', en: 'Cancel order ORD-10004 for the customer.', zh: '为客户取消订单ORD-10004。', ok: {} },
      { slug: 'conflict-delivered', title: 'cancelling a delivered order (409): report it, do not retry', category: 'business', subtype: 'boundary', recoverable: false },
    ],
  );
  const pending = {
    key: 'three-pending',
    tool: 'get_order',
    tools: ['get_order'],
    write: false,
    entities: 3,
    en: 'Check the status of orders ORD-10033, ORD-10034 and ORD-10035.',
    zh: '查一下订单ORD-10033、ORD-10034和ORD-10035的状态。',
    ok: { answer_contains: ['ORD-10033', 'ORD-10034', 'ORD-10035'] },
  };
  DOMAINS.orders.push(['burst', { ...pending, burst: burstOf(1) }], ['semantic-one-of', pending, { slug: 'semantic-one-of-order', label: 'another order', params: { other_entity: { field: 'order_id', value: 'ORD-10002' } }, oracle: { answer_excludes: ['ORD-10002'] } }]);
}

// ---- messaging ------------------------------------------------------------------------------
{
  const post = (key, channel, text, en, zh) => ({
    key,
    tool: 'send_message',
    tools: ['send_message', 'list_messages'],
    write: true,
    en,
    zh,
    ok: { answer_contains: [`#${channel}`], state: [{ collection: 'messages', where: { channel, text }, count: 1 }] },
    none: { state: [{ collection: 'messages', count: 0 }] },
  });
  const tasks = {
    eng: post('engineering', 'engineering', 'Deploy finished, all green.', 'Post "Deploy finished, all green." to #engineering.', '在#engineering频道发送消息：“Deploy finished, all green.”'),
    sales: post('sales', 'sales', '本月销售周报已上传。', 'Send "本月销售周报已上传。" to #sales.', '在#sales频道发一条消息：“本月销售周报已上传。”'),
    px: post('project-x', 'project-x', 'Launch review moved to Thursday 15:00.', 'Tell #project-x: "Launch review moved to Thursday 15:00."', '通知#project-x：“Launch review moved to Thursday 15:00.”'),
    general: post('general', 'general', 'Office closed on Friday.', 'Announce "Office closed on Friday." in #general.', '在#general发布：“Office closed on Friday.”'),
    read: { key: 'read-sales', tool: 'list_messages', tools: ['list_messages'], write: false, en: 'What are the latest messages in #sales?', zh: '#sales频道最新的消息有哪些？', ok: { answer_contains: ['MSG-'] } },
  };
  DOMAINS.messaging = [
    ['outage-503', tasks.eng],
    ['rate-limit-retry-after', tasks.sales],
    ['commit-then-drop', tasks.eng],
    ['commit-then-drop', tasks.sales],
    ['reset-after-commit', tasks.px],
    ['500-after-commit', tasks.general],
    ['timeout-before-commit', tasks.sales],
    ['persistent-timeout', tasks.px],
    ['auth-401', tasks.general],
    ['semantic', tasks.px, { slug: 'semantic-send', label: 'another channel in the confirmation', params: { other_entity: { field: 'channel', value: 'general' } }, oracle: { answer_excludes: ['#general'] } }],
    ['outage-timeout', tasks.read],
    ['semantic', tasks.read, { slug: 'semantic-list', label: "another channel's messages", params: { other_entity: { field: 'messages.channel', value: 'engineering' } }, oracle: { answer_excludes: ['(#engineering)'] } }],
    [
      'natural',
      { ...post('announcements', 'announcements', 'All hands at 10.', 'Post "All hands at 10." to #announcements.', '在#announcements频道发送：“All hands at 10.”'), ok: {} },
      { slug: 'forbidden-channel', title: 'a read-only channel (403): escalate, do not retry', category: 'auth', subtype: 'authz', recoverable: false, statuses: ['escalated'] },
    ],
    [
      'natural',
      { ...post('archived', 'launch-2025', 'Retro notes are up.', 'Post "Retro notes are up." to #launch-2025.', '在#launch-2025频道发送：“Retro notes are up.”'), ok: {} },
      { slug: 'archived-channel', title: 'an archived channel (412): report it, do not retry', category: 'business', subtype: 'boundary', recoverable: false },
    ],
  ];
  const twoChannels = {
    key: 'two-channels',
    tool: 'send_message',
    tools: ['send_message', 'list_messages'],
    write: true,
    en: 'Post "Build 142 is green." to #engineering and "Release notes are up." to #project-x.',
    zh: '在#engineering频道发送“Build 142 is green.”，在#project-x频道发送“Release notes are up.”',
    ok: {
      answer_contains: ['#engineering', '#project-x'],
      state: [
        { collection: 'messages', where: { channel: 'engineering', text: 'Build 142 is green.' }, count: 1 },
        { collection: 'messages', where: { channel: 'project-x', text: 'Release notes are up.' }, count: 1 },
      ],
    },
    none: { state: [{ collection: 'messages', count: 0 }] },
  };
  DOMAINS.messaging.push(['burst', { ...twoChannels, burst: burstOf(1) }], ['hang-before-commit', tasks.eng], ['hang-before-commit', tasks.px]);
  DOMAINS.messaging.push(['lost-write', tasks.eng], ['lost-write', tasks.general], ['lost-write', twoChannels, { trigger: { nth: [2] } }]);
  // Other posts and channels, each met by another failure.
  const more = {
    incident: post('incident', 'engineering', 'Incident INC-42 resolved.', 'Post "Incident INC-42 resolved." to #engineering.', '在#engineering频道发送：“Incident INC-42 resolved.”'),
    quarter: post('quarter', 'sales', 'Q1 numbers are final.', 'Let #sales know: "Q1 numbers are final."', '告诉#sales频道：“Q1 numbers are final.”'),
    demo: post('demo', 'project-x', 'Demo at 16:00 today.', 'Send "Demo at 16:00 today." to #project-x.', '在#project-x频道发送“Demo at 16:00 today.”'),
    lunch: post('lunch', 'general', 'Lunch is on us today.', 'Post "Lunch is on us today." in #general.', '在#general频道发一条：“Lunch is on us today.”'),
    readEng: { key: 'read-engineering', tool: 'list_messages', tools: ['list_messages'], write: false, en: 'Show me the recent messages in #engineering.', zh: '看一下#engineering频道最近的消息。', ok: { answer_contains: ['MSG-'] } },
  };
  DOMAINS.messaging.push(
    ['outage-refused', more.incident],
    ['outage-dns', more.quarter],
    ['auth-expiry', more.demo],
    ['auth-403', more.lunch],
    ['commit-then-drop', more.demo],
    ['reset-after-commit', more.incident],
    ['500-after-commit', more.quarter],
    ['hang-before-commit', more.lunch],
    ['timeout-before-commit', more.incident],
    ['lost-write', more.quarter],
    ['semantic', more.lunch, { slug: 'semantic-send', label: 'another channel in the confirmation', params: { other_entity: { field: 'channel', value: 'sales' } }, oracle: { answer_excludes: ['#sales'] } }],
    ['mixed-outage-then-401', more.demo],
    ['rate-limit-retry-after', more.readEng],
    ['persistent-503', more.readEng],
    ['partial', { ...more.readEng, partial: { drop_fields: ['messages.author'] }, partialOracle: { answer_contains: ['messages.author'] } }],
    ['mixed-503-then-slow', more.readEng],
  );
}

// ---- calendar -------------------------------------------------------------------------------
{
  const book = (key, title, day, time, zone, en, zh) => ({
    key,
    tool: 'create_event',
    tools: ['create_event', 'list_events'],
    write: true,
    en,
    zh,
    ok: { answer_contains: [`${day}T${time}`], state: [{ collection: 'events', where: { title }, count: 1 }] },
    none: { state: [{ collection: 'events', count: 0 }] },
  });
  const tasks = {
    // Said to be fine to overlap other meetings, as personal calendars allow: a repeated booking
    // would then be a second event, not a 409 for the slot, so idempotency can fail here.
    review: book('design-review', 'Design review', '2026-03-30', '07:00', 'Asia/Shanghai', 'Schedule "Design review" tomorrow at 07:00 Shanghai time for 30 minutes, even if it overlaps other meetings.', '明天早上7点（北京时间）安排“Design review”，时长30分钟，可以与其他会议重叠。'),
    sync: book('team-sync', 'Team sync', '2026-03-31', '07:30', 'Asia/Shanghai', 'Book "Team sync" the day after tomorrow at 07:30 Shanghai time for 45 minutes; overlaps are fine.', '后天早上7点半（北京时间）预约“Team sync”，45分钟，允许重叠。'),
    standup: book('standup', 'Standup', '2026-04-02', '07:00', 'Asia/Shanghai', 'Set up a meeting "Standup" on 2026-04-02 at 07:00 Shanghai time for 15 minutes.', '2026年4月2日早上7点（北京时间）安排“Standup”会议，15分钟。'),
    list: { key: 'list-monday', tool: 'list_events', tools: ['list_events'], write: false, en: "What's on my calendar tomorrow?", zh: '我明天的日程有哪些？', ok: { answer_contains: ['2026-03-30'] } },
  };
  DOMAINS.calendar = [
    ['outage-refused', tasks.review],
    ['rate-limit-retry-after', tasks.sync],
    ['auth-401', tasks.standup],
    ['commit-then-drop', tasks.review],
    ['reset-after-commit', tasks.sync],
    ['timeout-before-commit', tasks.standup],
    ['500-after-commit', tasks.review],
    ['semantic', tasks.sync, { slug: 'semantic-create', label: 'the start time rendered in the wrong zone', params: { timezone_shift: 8, fields: ['start', 'end'] }, oracle: { answer_excludes: ['T15:30'] } }],
    ['semantic', tasks.list, { slug: 'semantic-list', label: 'event times shifted out of their zone', params: { timezone_shift: -6, fields: ['events.start', 'events.end'] }, oracle: { answer_excludes: ['T16:30'] } }],
    ['outage-timeout', tasks.list],
    ['partial', { ...tasks.list, partial: { drop_fields: ['events.location'] }, partialOracle: { answer_contains: ['events.location'] } }],
    ['persistent-503', tasks.list],
    [
      'natural',
      { ...book('past', 'Retro', '2026-03-28', '07:00', 'Asia/Shanghai', 'Schedule "Retro" yesterday at 07:00 Shanghai time for 30 minutes.', '昨天早上7点（北京时间）安排“Retro”，30分钟。'), ok: {} },
      { slug: 'boundary-past', title: 'an event in the past: say so, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false },
    ],
  ];
  DOMAINS.calendar.push(['hang-before-commit', tasks.review], ['hang-before-commit', tasks.standup]);
  DOMAINS.calendar.push(['lost-write', tasks.review], ['lost-write', tasks.standup]);
  // Other meetings and days, each met by another failure.
  const more = {
    budget: book('budget-review', 'Budget review', '2026-03-31', '09:00', 'Asia/Shanghai', 'Book "Budget review" on 2026-03-31 at 09:00 Shanghai time for 60 minutes; overlaps are fine.', '2026年3月31日上午9点（北京时间）预约“Budget review”，60分钟，允许重叠。'),
    hiring: book('hiring-sync', 'Hiring sync', '2026-04-03', '10:00', 'Asia/Shanghai', 'Schedule "Hiring sync" on 2026-04-03 at 10:00 Shanghai time for 30 minutes, even if it overlaps other meetings.', '2026年4月3日上午10点（北京时间）安排“Hiring sync”，30分钟，可以与其他会议重叠。'),
    offsite: book('offsite-planning', 'Offsite planning', '2026-04-06', '14:00', 'Asia/Shanghai', 'Set up a meeting "Offsite planning" on 2026-04-06 at 14:00 Shanghai time for 45 minutes; overlaps are fine.', '2026年4月6日下午2点（北京时间）安排“Offsite planning”，45分钟，允许重叠。'),
    list: { key: 'list-april-22', tool: 'list_events', tools: ['list_events'], write: false, en: "What's on my calendar on 2026-04-22?", zh: '我2026年4月22日的日程有哪些？', ok: { answer_contains: ['2026-04-22'] } },
  };
  DOMAINS.calendar.push(
    ['outage-503', more.budget],
    ['outage-dns', more.hiring],
    ['auth-403', more.offsite],
    ['auth-expiry', more.budget],
    ['commit-then-drop', more.hiring],
    ['reset-after-commit', more.offsite],
    ['500-after-commit', more.budget],
    ['timeout-before-commit', more.hiring],
    ['hang-before-commit', more.offsite],
    ['lost-write', more.budget],
    ['rate-limit-retry-after', more.offsite],
    ['semantic', more.hiring, { slug: 'semantic-create', label: 'the start time rendered in the wrong zone', params: { timezone_shift: 8, fields: ['start', 'end'] }, oracle: { answer_excludes: ['T18:00'] } }],
    ['mixed-outage-then-401', more.hiring],
    ['outage-reset', more.list],
    ['persistent-timeout', more.list],
    ['malformed', more.list],
    ['mixed-503-then-slow', more.list],
  );
}

// ---- payments -------------------------------------------------------------------------------
{
  const refund = (key, payment, en, zh) => ({
    key,
    tool: 'create_refund',
    tools: ['get_payment', 'create_refund'],
    write: true,
    en,
    zh,
    ok: { answer_contains: ['RFD-0003'], state: [{ collection: 'refunds', where: { payment_id: payment }, count: 1 }] },
    none: { state: [{ collection: 'refunds', count: 0 }] },
  });
  const tasks = {
    dup: refund('pay-2003', 'PAY-2003', 'Refund $5.00 of payment PAY-2003, it was a duplicate charge.', '对支付PAY-2003退款5美元，原因是重复扣款。'),
    full: refund('pay-2006', 'PAY-2006', 'Refund the remaining balance of payment PAY-2006.', '对支付PAY-2006的剩余金额全额退款。'),
    part: refund('pay-2021', 'PAY-2021', 'Refund $12.50 of payment PAY-2021 for the customer.', '为客户对支付PAY-2021退款12.50美元。'),
    status: { key: 'status', tool: 'get_payment', tools: ['get_payment'], write: false, en: 'What is the status of payment PAY-2010?', zh: '查询支付PAY-2010的状态。', ok: { answer_contains: ['PAY-2010', 'captured'] } },
  };
  const lookup = { ...tasks.full, key: 'lookup-refund', en: 'Look up payment PAY-2012 and refund the remaining balance.', zh: '查询支付PAY-2012，并对剩余金额全额退款。', ok: { answer_contains: ['RFD-0003'], state: [{ collection: 'refunds', where: { payment_id: 'PAY-2012' }, count: 1 }] } };
  DOMAINS.payments = [
    ['commit-then-drop', tasks.dup],
    ['commit-then-drop', tasks.part],
    ['500-after-commit', tasks.part],
    ['reset-after-commit', tasks.dup],
    ['timeout-before-commit', tasks.full],
    ['rate-limit-retry-after', tasks.part],
    ['auth-expiry', tasks.full],
    ['semantic', tasks.part, { slug: 'semantic-refund', label: 'another amount in the confirmation', params: { other_entity: { field: 'amount_cents', value: 125000 } }, oracle: { answer_excludes: ['$1250.00'] } }],
    ['outage-503', tasks.status],
    ['semantic', tasks.status, { slug: 'semantic-status', label: 'another payment', params: { other_entity: { field: 'payment_id', value: 'PAY-2011' } }, oracle: { answer_excludes: ['PAY-2011'] } }],
    [
      'natural',
      { ...refund('too-much', 'PAY-2003', 'Refund $5000 of payment PAY-2003.', '对支付PAY-2003退款5000美元。'), ok: {} },
      { slug: 'boundary-amount', title: 'a refund over the refundable balance: report the maximum, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false },
    ],
    [
      'natural',
      { ...refund('reason', 'PAY-2003', 'Refund $5.00 of payment PAY-2003, reason "duplicat".', '对支付PAY-2003退款5美元，原因“duplicat”。') },
      { slug: 'syntactic-reason', title: 'a misspelt refund reason: fix it from the allowed values', category: 'parameter', subtype: 'syntactic', recoverable: true },
    ],
    [
      'natural',
      { ...refund('too-old', 'PAY-2041', 'Refund $10.00 of payment PAY-2041.', '对支付PAY-2041退款10美元。'), ok: {} },
      { slug: 'precondition-window', title: 'a payment past the refund window (412): report it', category: 'business', subtype: 'boundary', recoverable: false },
    ],
    ['cascade-fail', lookup, { fault: always('get_payment', 'http_status', UNAUTHORIZED), tool: 'get_payment', category: 'auth', statuses: ['escalated'] }],
    ['cascade-ok', lookup, { fault: outage('get_payment', 'timeout', TIMEOUT_1S, 5000), tool: 'get_payment', category: 'network' }],
  ];
  DOMAINS.payments.push(['mixed-503-then-slow', tasks.status]);
  const reportBack = (key, payment, amount, left, en, zh) => ({
    ...refund(key, payment, en, zh),
    tools: ['get_payment', 'create_refund'],
    readTool: 'get_payment',
    ok: { answer_contains: [left], state: [{ collection: 'refunds', where: { payment_id: payment, amount_cents: amount }, count: 1 }] },
  });
  DOMAINS.payments.push(
    ['lost-write', tasks.dup],
    ['lost-write', tasks.part],
    [
      'stale-after-write',
      reportBack('pay-2010-report', 'PAY-2010', 2000, '$1179.97', 'Refund $20.00 of payment PAY-2010 and then tell me the remaining refundable balance.', '对支付PAY-2010退款20美元，然后告诉我剩余可退金额。'),
    ],
    ['stale-after-write', reportBack('pay-2021-report', 'PAY-2021', 1250, '$317.47', 'Refund $12.50 of payment PAY-2021, then tell me what is left to refund.', '对支付PAY-2021退款12.50美元，然后告诉我剩余可退多少。')],
  );
  // Other payments and amounts, each met by another failure.
  const more = {
    p5: refund('pay-2005', 'PAY-2005', 'Refund $15.00 of payment PAY-2005, the item arrived damaged.', '对支付PAY-2005退款15美元，商品到货时已损坏。'),
    p14: refund('pay-2014', 'PAY-2014', 'Fully refund payment PAY-2014.', '对支付PAY-2014全额退款。'),
    p29: refund('pay-2029', 'PAY-2029', 'Refund $40.00 of payment PAY-2029.', '对支付PAY-2029退款40美元。'),
    auth: { key: 'status-2037', tool: 'get_payment', tools: ['get_payment'], write: false, en: 'Has payment PAY-2037 been captured yet?', zh: '支付PAY-2037已经扣款了吗？', ok: { answer_contains: ['PAY-2037', 'authorized'] } },
  };
  DOMAINS.payments.push(
    ['commit-then-drop', more.p5],
    ['reset-after-commit', more.p29],
    ['500-after-commit', more.p14],
    ['timeout-before-commit', more.p29],
    ['lost-write', more.p14],
    ['auth-401', more.p5],
    ['auth-403', more.p29],
    ['outage-503', more.p14],
    ['rate-limit-retry-after', more.p5],
    ['semantic', more.p29, { slug: 'semantic-refund', label: 'another amount in the confirmation', params: { other_entity: { field: 'amount_cents', value: 400000 } }, oracle: { answer_excludes: ['$4000.00'] } }],
    ['mixed-outage-then-401', more.p14],
    ['outage-timeout', more.auth],
    ['malformed', more.auth],
    ['auth-expiry', more.auth],
    ['semantic', more.auth, { slug: 'semantic-status', label: 'another payment', params: { other_entity: { field: 'payment_id', value: 'PAY-2036' } }, oracle: { answer_excludes: ['PAY-2036'] } }],
    ['mixed-drift-then-timeout', { ...more.auth, drift: { other_entity: { field: 'payment_id', value: 'PAY-2035' } }, driftLabel: 'another payment', driftOracle: { answer_excludes: ['PAY-2035'] } }],
    ['stale-after-write', reportBack('pay-2005-report', 'PAY-2005', 1500, '$454.96', 'Refund $15.00 of payment PAY-2005 and then tell me the remaining refundable balance.', '对支付PAY-2005退款15美元，然后告诉我剩余可退金额。')],
  );
}

// ---- files ----------------------------------------------------------------------------------
{
  const write = (key, path, en, zh) => ({
    key,
    tool: 'write_file',
    tools: ['write_file', 'read_file'],
    write: true,
    en,
    zh,
    ok: { answer_contains: [path], state: [{ collection: 'files', where: { path }, count: 1 }] },
    none: { state: [{ collection: 'files', count: 0 }] },
  });
  const tasks = {
    launch: write('launch', '/notes/launch.md', 'Save the note "Launch moved to Friday." to /notes/launch.md.', '把“Launch moved to Friday.”保存到 /notes/launch.md。'),
    todo: { key: 'read-todo', tool: 'read_file', tools: ['read_file'], write: false, en: 'Read /notes/todo.txt for me.', zh: '读取 /notes/todo.txt 的内容。', ok: { answer_contains: ['renew certificates'] } },
    list: { key: 'list-reports', tool: 'list_files', tools: ['list_files'], write: false, en: 'Which files are under /reports?', zh: '/reports 下有哪些文件？', ok: { answer_contains: ['/reports/sales-south-2026-02.csv'] } },
    notes: { key: 'list-notes', tool: 'list_files', tools: ['list_files'], write: false, en: 'List the files under /notes.', zh: '列出 /notes 下的文件。', ok: { answer_contains: ['/notes/project-x.md'] } },
  };
  const post = {
    ...tasks.todo,
    key: 'todo-post',
    tools: ['read_file', 'send_message', 'list_messages'],
    en: 'Read /notes/todo.txt and post it to #general.',
    zh: '读取 /notes/todo.txt，并把内容发到#general频道。',
    ok: { answer_contains: ['renew certificates'], state: [oneMessage('general')] },
    none: { state: [noMessages('general')] },
  };
  DOMAINS.files = [
    ['outage-503', tasks.launch],
    ['rate-limit-retry-after', tasks.launch],
    ['outage-timeout', tasks.todo],
    ['persistent-timeout', tasks.todo],
    ['malformed', tasks.list],
    ['semantic', tasks.todo, { slug: 'semantic-read', label: 'another file', params: { other_entity: { field: 'path', value: '/notes/project-x.md' } }, oracle: { answer_excludes: ['/notes/project-x.md'] } }],
    ['partial', { ...tasks.notes, partial: { drop_fraction: 0.5 }, partialOracle: { answer_contains: ['1 of 2'] } }],
    [
      'natural',
      { ...write('system', '/system/config.json', 'Write "retention_days: 7" to /system/config.json.', '把“retention_days: 7”写入 /system/config.json。'), ok: {} },
      { slug: 'forbidden-path', title: 'a read-only path (403): escalate', category: 'auth', subtype: 'authz', recoverable: false, statuses: ['escalated'] },
    ],
    [
      'natural',
      { ...tasks.todo, key: 'missing', en: 'Read /notes/roadmap.md for me.', zh: '读取 /notes/roadmap.md 的内容。', ok: {} },
      { slug: 'not-found', title: 'a file that does not exist (404): report it, do not retry', category: 'business', subtype: 'boundary', recoverable: false },
    ],
    [
      'natural',
      { ...write('dotdot', '/notes/../secret.txt', 'Save "x" to /notes/../secret.txt.', '把“x”保存到 /notes/../secret.txt。'), ok: {} },
      { slug: 'boundary-path', title: 'a path with ".." (400): report it, do not retry', category: 'parameter', subtype: 'boundary', recoverable: false },
    ],
    ['cascade-fail', post, { fault: always('read_file', 'http_status', FORBIDDEN), tool: 'read_file', category: 'auth', statuses: ['escalated'] }],
    ['cascade-ok', post, { fault: outage('read_file', 'http_status', UNAVAILABLE), tool: 'read_file', category: 'system' }],
    ['cascade-sink-drop', post, { fault: once('send_message', 'connection_reset', { commit: true }), tool: 'send_message', category: 'network' }],
  ];
  DOMAINS.files.push(['cascade-sink-hang', post, { fault: once('send_message', 'hang'), tool: 'send_message', category: 'network' }]);
  // Over a file that exists: reading it back shows the old content, not a 404.
  const todo = write('todo-rewrite', '/notes/todo.txt', 'Write "renew certificates; rotate the API keys" to /notes/todo.txt, replacing what is there.', '把“renew certificates; rotate the API keys”写入 /notes/todo.txt，覆盖原有内容。');
  DOMAINS.files.push(['lost-write', todo], ['silent-partial', { ...tasks.notes, completeOracle: { answer_contains: ['/notes/todo.txt'] } }]);
  // Other files, each met by another failure.
  const more = {
    standup: write('standup', '/notes/standup.md', 'Save "Standup moved to 10:00." to /notes/standup.md.', '把“Standup moved to 10:00.”保存到 /notes/standup.md。'),
    q1: write('q1-summary', '/reports/q1-summary.md', 'Write "Q1 revenue up 8%." to /reports/q1-summary.md.', '把“Q1 revenue up 8%.”写入 /reports/q1-summary.md。'),
    px: { key: 'read-project-x', tool: 'read_file', tools: ['read_file'], write: false, en: 'What does /notes/project-x.md say?', zh: '/notes/project-x.md 里写了什么？', ok: { answer_contains: ['Li Wei'] } },
  };
  const pxPost = {
    ...more.px,
    key: 'project-x-post',
    tools: ['read_file', 'send_message', 'list_messages'],
    en: 'Read /notes/project-x.md and post it to #project-x.',
    zh: '读取 /notes/project-x.md，并把内容发到#project-x频道。',
    ok: { answer_contains: ['Li Wei'], state: [oneMessage('project-x')] },
    none: { state: [noMessages('project-x')] },
  };
  DOMAINS.files.push(
    ['outage-dns', more.standup],
    ['auth-401', more.q1],
    ['outage-reset', more.q1],
    ['lost-write', more.standup],
    ['persistent-503', more.px],
    ['outage-refused', more.px],
    ['semantic', more.px, { slug: 'semantic-read', label: 'another file', params: { other_entity: { field: 'path', value: '/notes/todo.txt' } }, oracle: { answer_excludes: ['/notes/todo.txt'] } }],
    ['mixed-outage-then-drift', { ...more.px, drift: { other_entity: { field: 'path', value: '/notes/todo.txt' } }, driftLabel: 'another file', driftOracle: { answer_excludes: ['/notes/todo.txt'] } }],
    ['mixed-503-then-slow', tasks.list],
    ['cascade-fail', pxPost, { fault: always('read_file', 'http_status', UNAVAILABLE), tool: 'read_file', category: 'system' }],
    ['cascade-ok', pxPost, { fault: outage('read_file', 'connection_reset'), tool: 'read_file', category: 'network' }],
    ['cascade-sink-drop', pxPost, { fault: once('send_message', 'commit_then_drop'), tool: 'send_message', category: 'network' }],
    ['cascade-sink-lost', pxPost, { tool: 'send_message' }],
  );
}

// ---------------------------------------------------------------------------------------------
// Cascades: A feeds B (and C); when A fails, nothing downstream may happen
// ---------------------------------------------------------------------------------------------

const CASCADE = {
  'cascade-fail': (t, v) => ({
    title: `${v.tool ?? t.tool} fails for good: the steps that depend on it must not run`,
    kind: 'cascade',
    taxonomy: { category: v.category, subtype: 'cascade' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    faults: [v.fault],
    oracle: stopped(t, v.statuses ?? ['gave_up', 'escalated'], { ...(v.oracle ?? {}), diagnosis: DIAG(v.tool ?? t.tool, v.category) }),
  }),
  'cascade-ok': (t, v) => ({
    title: `${v.tool ?? t.tool} fails for a few seconds; every later step then runs exactly once`,
    kind: 'cascade',
    taxonomy: { category: v.category, subtype: 'cascade' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    faults: [v.fault],
    oracle: done(t, { diagnosis: DIAG(v.tool ?? t.tool, v.category) }),
  }),
  'cascade-semantic': (t) => ({
    title: `${t.tool}'s first answer is wrong (${t.driftLabel}); what gets posted must be the right data`,
    kind: 'cascade',
    taxonomy: { category: 'semantic', subtype: 'cascade' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [once(t.tool, 'semantic_drift', t.drift)],
    oracle: done(t, { ...t.driftOracle, diagnosis: DIAG(t.tool, 'semantic') }),
  }),
  'cascade-sink-drop': (t, v) => ({
    title: `the last step (${v.tool}) takes effect but its response is lost: check, do not repeat`,
    kind: 'cascade',
    taxonomy: { category: v.category, subtype: 'idempotency' },
    dimensions: ['identification', 'recovery', 'idempotency_safety'],
    recoverable: true,
    faults: [v.fault],
    oracle: done(t, { diagnosis: DIAG(v.tool, v.category) }),
  }),
  // The last step answers 200 and its write never lands: read it back, post it again.
  'cascade-sink-lost': (t, v) => ({
    title: `the last step (${v.tool}) answers 200 but nothing is written: read it back and do it again`,
    kind: 'cascade',
    taxonomy: { category: 'semantic', subtype: 'cascade' },
    dimensions: ['identification', 'recovery', 'semantic_verification'],
    recoverable: true,
    faults: [once(v.tool, 'lost_write')],
    oracle: done(t, { diagnosis: DIAG(v.tool, 'semantic') }),
  }),
  // The last step's request hangs before it is made: nothing to duplicate, so no idempotency score.
  'cascade-sink-hang': (t, v) => ({
    title: `the last step (${v.tool}) hangs until the call times out, before taking effect: check, then do it once`,
    kind: 'cascade',
    taxonomy: { category: v.category, subtype: 'timeout' },
    dimensions: ['identification', 'recovery'],
    recoverable: true,
    faults: [v.fault],
    oracle: done(t, { diagnosis: DIAG(v.tool, v.category) }),
  }),
};

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

function scenarioFor(family, task, variant) {
  if (family === 'natural') return { slug: variant.slug, ...natural(task, variant) };
  if (family === 'semantic') return { slug: variant.slug, ...GENERIC.semantic(task, variant) };
  if (CASCADE[family] !== undefined) return { ...CASCADE[family](task, variant ?? {}), slug: variant?.slug ?? family };
  return { slug: family, ...GENERIC[family](task, variant) };
}

rmSync(OUT, { recursive: true, force: true });
const seen = new Set();
let count = 0;
for (const [domain, entries] of Object.entries(DOMAINS)) {
  for (const [family, task, variant] of entries) {
    const built = scenarioFor(family, task, variant);
    const slug = `${built.slug}-${task.key}`;
    if (seen.has(`${domain}/${slug}`)) throw new Error(`duplicate scenario ${domain}/${slug}`);
    seen.add(`${domain}/${slug}`);
    for (const language of ['en', 'zh']) {
      const { slug: _slug, ...rest } = built;
      const scenario = {
        title: rest.title,
        language,
        kind: rest.kind,
        taxonomy: rest.taxonomy,
        dimensions: rest.dimensions,
        recoverable: rest.recoverable,
        instruction: task[language],
        tools: task.tools,
        faults: rest.faults,
        oracle: rest.oracle,
        ...(rest.budget !== undefined ? { budget: rest.budget } : {}),
      };
      const file = join(OUT, domain, `${slug}-${language}.yaml`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `# Generated by scripts/generate-failbench-scenarios.mjs; edit the generator, not this file.\n${stringify(scenario, { lineWidth: 0 })}`);
      count++;
    }
  }
}
console.log(`wrote ${count} scenarios to ${OUT}`);
