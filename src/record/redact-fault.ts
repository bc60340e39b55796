/**
 * The injected fault as a record keeps it. Its params are the plan author's own values (an
 * http_status body, message and headers, a drift mapping, what a stale fault served) and can hold
 * a secret like any other recorded value, so they go through the record's redactor. The kind,
 * rule id and transport name the fault and are kept as they are: FailBench's fault ledger matches
 * a proxy's records to the plan's decisions by rule id.
 */
import type { FoundSecrets, Redactor } from './redact.js';
import type { InjectedFault } from '../core/record-types.js';

/** `fault` with its params redacted (what was secret in them added to `found`); the same object when nothing needed changing (or `redactor` is undefined: redaction is off). */
export function redactFault(fault: InjectedFault | null, redactor: Redactor | undefined, found?: FoundSecrets): InjectedFault | null {
  if (fault === null || redactor === undefined || fault.params === undefined) return fault;
  const params = redactor.value(fault.params, found);
  return params === fault.params ? fault : { ...fault, params };
}
