/**
 * What a server faultline runs answers for an injected refused connection or failed DNS lookup.
 * The client's connection has already been accepted, so it cannot be refused, nor the client's
 * own lookup fail: the answer is the one a gateway gives when its upstream is refused or does not
 * resolve, 502 with the errno code in the JSON body. The HTTP proxy and mock-tools answer alike,
 * so an agent behind either sees the same failure.
 */
import { classifyError } from '../runtime/classify.js';
import type { DropCode } from './decision.js';

/** Marks the 502 that stands for an injected refused connection or failed DNS lookup. */
export const FAULT_HEADER = 'x-faultline-fault';

export interface GatewayAnswer {
  status: 502;
  /** `x-faultline-fault` for an injected failure, so a harness can tell it was not real. */
  headers: Record<string, string>;
  body: { error: { type: string; code: string; message: string } };
}

/**
 * The 502 for a connection to the upstream that failed with `code` (`ECONNREFUSED`, `ENOTFOUND`,
 * or any other errno); `faultKind` when the failure was injected.
 */
export function gatewayAnswer(code: string, message: string, faultKind?: string): GatewayAnswer {
  // The time matters only for a Retry-After, which an errno does not carry.
  const type = classifyError(Object.assign(new Error(message), { code }), 0).type;
  return { status: 502, headers: faultKind === undefined ? {} : { [FAULT_HEADER]: faultKind }, body: { error: { type, code, message } } };
}

/** The message node gives for a refused connection to `host` (`name:port`) or a lookup of `hostname` that failed. */
export function droppedConnectionMessage(code: Exclude<DropCode, 'ECONNRESET'>, host: string, hostname: string): string {
  return code === 'ENOTFOUND' ? `getaddrinfo ENOTFOUND ${hostname}` : `connect ECONNREFUSED ${host}`;
}
