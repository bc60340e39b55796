/**
 * The in-process transport: a FaultDecision becomes what a real client library would do to the
 * tool call. Failures are thrown in the shapes real clients throw (an HttpError with its status
 * and headers, a Node-style errno error, the DOMException `AbortSignal.timeout` raises), never as
 * ready-made classifications, so the runtime's own classification is what gets exercised.
 */
import type { ToolContext } from '../runtime/define-tool.js';
import { AuthError, HttpError } from '../runtime/tool-errors.js';
import { appliesOnlyOnSuccess, type DropCode, type FaultDecision, type FaultEffect } from './decision.js';
import type { PlannedFault } from '../runtime/fault-injector.js';

const ERRNO: Record<DropCode, { errno: number; syscall: string; message: string }> = {
  ECONNREFUSED: { errno: -111, syscall: 'connect', message: 'connect ECONNREFUSED' },
  ECONNRESET: { errno: -104, syscall: 'read', message: 'read ECONNRESET' },
  ENOTFOUND: { errno: -3008, syscall: 'getaddrinfo', message: 'getaddrinfo ENOTFOUND' },
};

/** An error shaped like Node's socket and DNS errors (`code`, `errno`, `syscall`). */
export function errnoError(code: DropCode): Error {
  const { errno, syscall, message } = ERRNO[code];
  return Object.assign(new Error(message), { code, errno, syscall });
}

/** What `fetch(url, { signal: AbortSignal.timeout(ms) })` rejects with when the time is up. */
function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

function responseError(effect: Extract<FaultEffect, { type: 'respond' }>): Error {
  if (effect.authType === 'credential_expired') {
    // A client that understands WWW-Authenticate (OAuth SDKs do) reports an expired token as such.
    return new AuthError('credential_expired', effect.message, { status: effect.status, code: `HTTP_${effect.status}`, details: { www_authenticate: effect.headers['www-authenticate'], body: effect.body } });
  }
  return new HttpError(effect.status, effect.message, effect.headers, effect.body);
}

/**
 * Resolves when the call is aborted (the runtime's timeout, or the caller cancelling), by
 * rejecting with the abort reason. No timer is armed, so a hung call leaves nothing pending on
 * a virtual clock once the runtime gives up on it.
 */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

async function applyEffect(decision: FaultDecision, ctx: ToolContext, runTool: (options?: { dryRun?: boolean }) => Promise<unknown>): Promise<unknown> {
  if (decision.delayMs > 0) await ctx.clock.sleep(decision.delayMs, ctx.signal);
  const effect = decision.effect;
  const output = decision.forward ? await runTool() : undefined;
  switch (effect.type) {
    case 'pass':
      return decision.forward ? output : runTool();
    case 'respond':
      throw responseError(effect);
    case 'drop':
      throw errnoError(effect.code);
    case 'timeout':
      if (effect.afterMs === null) return untilAborted(ctx.signal);
      await ctx.clock.sleep(effect.afterMs, ctx.signal);
      throw timeoutError();
    case 'malformed':
      return effect.render(decision.forward ? output : await runTool());
    case 'rewrite':
      return effect.rewrite(decision.forward ? output : await runTool());
    case 'dry_run':
      return runTool({ dryRun: true });
  }
}

/**
 * The runtime-facing form of a decision: `replace` for everything that changes how or whether
 * the tool answers, `transform` alone for pure output rewrites with no delay.
 */
export function toPlannedFault(decision: FaultDecision): PlannedFault {
  const effect = decision.effect;
  const rewrites = effect.type === 'rewrite' || effect.type === 'malformed';
  const onlyOnSuccess = appliesOnlyOnSuccess(decision);
  if (decision.delayMs === 0 && decision.forward && rewrites) {
    const rewrite = effect.type === 'rewrite' ? effect.rewrite : effect.render;
    return { fault: decision.fault, transform: (output) => rewrite(output), onlyOnSuccess };
  }
  return { fault: decision.fault, replace: (ctx, runTool) => applyEffect(decision, ctx, runTool), onlyOnSuccess };
}
