/** The list files domain's main step: the files under a prefix. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, arrayAt } from '../step-parts.js';

export const listFilesPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('list_files') && (verbs.has('files_list') || intent.paths[0] !== undefined),
  plan(intent, _ctx, h) {
    const { base } = h;
    const prefix = intent.paths[0] ?? '/';
    return {
      key: 'main',
      tool: 'list_files',
      write: false,
      check: base,
      args: () => ({ prefix: prefix.endsWith('/') ? prefix : `${prefix}/`, limit: 100 }),
      summary: (o) => {
        const files = arrayAt(asObject(o), 'files');
        return `${files.length} files under ${prefix}: ${files.map((f) => String(f['path'])).join(', ')}`;
      },
    };
  },
};
