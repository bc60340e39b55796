/** A call's context_snapshot: the runtime's context fields, then the call's (intent, session, agent, model, context), redacted. */
import type { FoundSecrets } from '../record/redact.js';
import type { Call, CallEnv } from './call.js';
import type { ExecuteOptions } from './types.js';

/** The secrets found in a session's shared context snapshot, to scrub from each of its records. */
const SHARED_SNAPSHOT_SECRETS = new WeakMap<object, FoundSecrets>();

function contextSnapshot(env: CallEnv, opts: ExecuteOptions, found?: FoundSecrets): Record<string, unknown> {
  const runtimeContext = env.context;
  if (runtimeContext === undefined && opts.intent === undefined && opts.sessionId === undefined && opts.agent === undefined && opts.model === undefined && opts.context === undefined) {
    return {};
  }
  const snapshot: Record<string, unknown> = {};
  if (runtimeContext !== undefined) Object.assign(snapshot, runtimeContext);
  if (opts.intent !== undefined) snapshot['intent'] = opts.intent;
  if (opts.sessionId !== undefined) snapshot['session_id'] = opts.sessionId;
  if (opts.agent !== undefined) snapshot['agent'] = opts.agent;
  if (opts.model !== undefined) snapshot['model'] = opts.model;
  if (opts.context !== undefined) Object.assign(snapshot, opts.context);
  return env.redactor === undefined ? snapshot : env.redactor.value(snapshot, found);
}

/** A session's snapshot, frozen because its calls' records share it; what was secret in it is kept beside it. */
export function sharedSnapshot(env: CallEnv, opts: ExecuteOptions): Readonly<Record<string, unknown>> {
  const found: FoundSecrets = [];
  const snapshot = Object.freeze(contextSnapshot(env, opts, found));
  if (found.length !== 0) SHARED_SNAPSHOT_SECRETS.set(snapshot, found);
  return snapshot;
}

/** The context of a call's record, and what was secret in it added to `found`. */
export function recordContext(env: CallEnv, call: Call, found: FoundSecrets): Record<string, unknown> {
  let snapshot: Record<string, unknown>;
  if (call.snapshot === undefined) {
    snapshot = contextSnapshot(env, call.options, found);
  } else {
    snapshot = call.snapshot;
    const shared = SHARED_SNAPSHOT_SECRETS.get(call.snapshot);
    if (shared !== undefined) found.push(...shared);
  }
  if (call.fault !== null || call.faultNotApplied === null) return snapshot;
  const notApplied = env.redactor === undefined ? call.faultNotApplied : env.redactor.value(call.faultNotApplied, found);
  return { ...snapshot, fault_not_applied: notApplied };
}
