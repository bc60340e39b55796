/** The write file domain's main step: writing quoted text to a file. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, fileConfirm } from '../step-parts.js';

export const writeFilePlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('write_file') && verbs.has('write') && intent.paths[0] !== undefined && intent.quoted[0] !== undefined,
  plan(intent, _ctx, h) {
    const { has, base } = h;
    const quoted = intent.quoted;
    const path = intent.paths[0];
    const content = quoted[0];
    return {
      key: 'main',
      tool: 'write_file',
      write: true,
      check: base,
      args: () => ({ path, content: `${content}\n` }),
      ...fileConfirm(has),
      summary: (o) => `Saved ${path} (version ${String(asObject(o)?.['version'] ?? '?')})`,
    };
  },
};
