/** The search documents domain's main step: a document search, over the last days when asked. */
import { addDays } from '../intent.js';
import type { DomainPlanner, Obj } from '../plan-step.js';
import { asObject, arrayAt } from '../step-parts.js';

function searchLine(o: Obj | undefined, args: Obj): string {
  const results = arrayAt(o, 'results');
  if (o === undefined || results.length === 0) return `No documents match "${String(args['query'])}"${args['date_from'] === undefined ? '' : ` between ${String(args['date_from'])} and ${String(args['date_to'])}`}`;
  const top = results.slice(0, 3).map((r) => `${String(r['id'])} "${String(r['title'])}" (${String(r['date'] ?? String(r['created_at']).slice(0, 10))})`);
  return `${String(o['total'])} documents match "${String(args['query'])}"; top: ${top.join('; ')}`;
}

export const searchDocumentsPlanner: DomainPlanner = {
  claims: (intent, { has }) => has('search_documents') && intent.quoted[0] !== undefined,
  plan(intent, _ctx, h) {
    const { utcToday, base } = h;
    const quoted = intent.quoted;
    const query = quoted[0];
    const range = intent.lastDays === undefined ? {} : { date_from: addDays(utcToday, -intent.lastDays), date_to: utcToday };
    return {
      key: 'main',
      tool: 'search_documents',
      write: false,
      check: base,
      args: () => ({ query, ...range, sort_by: intent.sortBy ?? 'relevance', limit: 10 }),
      summary: (o, args) => searchLine(asObject(o), args),
    };
  },
};
