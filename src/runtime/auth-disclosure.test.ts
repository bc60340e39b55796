import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { failureForModel } from '../integrations/model-facing-result.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';
import { AuthError, HttpError } from './tool-errors.js';

// What upstreams really say on a 401 or 403: principals, scopes, internal paths and hosts.
const LEAKY = [
  'internal-billing.prod.corp.local',
  '/srv/api/v2/tenants/8812/invoices',
  'billing:invoices.write',
  'svc-ledger@corp.internal',
  '10.12.0.7',
];
const FORBIDDEN_TEXT = `principal svc-ledger@corp.internal lacks scope billing:invoices.write for POST /srv/api/v2/tenants/8812/invoices on internal-billing.prod.corp.local (10.12.0.7)`;

function tools() {
  return [
    defineTool({
      name: 'create_invoice',
      description: '403 with a chatty upstream',
      input: { type: 'object', properties: {} },
      execute: () => {
        throw new HttpError(403, FORBIDDEN_TEXT, { 'www-authenticate': 'Bearer scope="billing:invoices.write"' }, { error: { message: FORBIDDEN_TEXT, required_scope: 'billing:invoices.write', path: '/srv/api/v2/tenants/8812/invoices' } });
      },
    }),
    defineTool({
      name: 'read_ledger',
      description: '401 from a typed error',
      input: { type: 'object', properties: {} },
      execute: () => {
        throw new AuthError('unauthorized', `token for svc-ledger@corp.internal rejected by internal-billing.prod.corp.local at /srv/api/v2/tenants/8812/invoices`, { status: 401 });
      },
    }),
  ];
}

describe('auth failures leak nothing to the agent', () => {
  for (const [tool, status, words] of [
    ['create_invoice', 403, 'permission was denied'],
    ['read_ledger', 401, 'the credentials were rejected'],
  ] as const) {
    const code = tool === 'read_ledger' ? 'UNAUTHORIZED' : `HTTP_${status}`;
    it(`${status}: what the model reads names the tool, the status and the code, and none of the upstream's paths, hosts, principals or scopes`, async () => {
      const rt = createRuntime({ tools: tools(), clock: createVirtualClock() });
      const r = await rt.execute(tool, {});
      if (r.ok) throw new Error('expected a failure');
      expect(r.error.category).toBe('auth');
      expect(r.error.message).toBe(`${tool}: ${words} (HTTP ${status}, ${code}); the upstream's details are withheld from the agent and kept in the record for the operators`);
      expect(r.error.body).toBeUndefined();
      expect(r.feedback.action).toBe('escalate_to_user');
      const seen = JSON.stringify(failureForModel(r));
      for (const piece of LEAKY) expect(seen).not.toContain(piece);
      expect(seen).toContain(tool);
      // Operators still see what the upstream said.
      expect(r.record.error_message).toContain('/srv/api/v2/tenants/8812/invoices');
    });
  }

  it('passes the upstream message and body on when the runtime is told to', async () => {
    const rt = createRuntime({ tools: tools(), clock: createVirtualClock(), discloseAuthDetails: true });
    const r = await rt.execute('create_invoice', {});
    if (r.ok) throw new Error('expected a failure');
    expect(r.error.message).toContain('billing:invoices.write');
    expect(r.error.body).toMatchObject({ error: { required_scope: 'billing:invoices.write' } });
  });
});
