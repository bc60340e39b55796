/** The read file domain's main step: reading a file. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject } from '../step-parts.js';

export const readFilePlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('read_file') && intent.paths[0] !== undefined && (verbs.has('read') || !verbs.has('write') || intent.paths.length > 1),
  plan(intent, _ctx, h) {
    const { base } = h;
    const path = intent.paths[0];
    return {
      key: 'main',
      tool: 'read_file',
      write: false,
      check: base,
      args: () => ({ path }),
      summary: (o) => {
        const f = asObject(o);
        const content = String(f?.['content'] ?? '').trim();
        return `${String(f?.['path'] ?? path)} (version ${String(f?.['version'] ?? '?')}): ${content.length > 300 ? `${content.slice(0, 300)}...` : content}`;
      },
    };
  },
};
