/** The sales domain's main step: a month of sales figures for a region. */
import { resolveMonth } from '../intent.js';
import type { DomainPlanner, Obj } from '../plan-step.js';
import { asObject, arrayAt } from '../step-parts.js';

function salesLine(o: Obj | undefined, args: Obj): string {
  const totals = asObject(o?.['totals']);
  if (o === undefined || totals === undefined) return `no sales figures for ${String(args['month'])}`;
  const through = o['complete'] === false && o['through'] !== undefined ? `, month to date through ${String(o['through'])}` : '';
  const rows = arrayAt(o, 'data');
  const span = rows.length === 0 ? 'no rows' : `periods ${String(rows[0]!['period'])} to ${String(rows[rows.length - 1]!['period'])}`;
  return `Sales, region ${String(o['region'])}, ${String(o['month'])}: revenue ${String(totals['revenue'])} CNY, ${String(totals['orders'])} orders, ${String(totals['units'])} units (${rows.length} ${String(o['granularity'])} rows, ${span}${through})`;
}

export const salesPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('query_sales_data') && (verbs.has('sales') || intent.month !== undefined),
  plan(intent, ctx, h) {
    const { base } = h;
    const month = resolveMonth(intent.month ?? { kind: 'relative', offset: 0 }, ctx.nowMs);
    return {
      key: 'main',
      tool: 'query_sales_data',
      write: false,
      check: base,
      args: () => ({ month, region: intent.region ?? 'all', granularity: intent.granularity ?? 'monthly' }),
      summary: (o, args) => salesLine(asObject(o), args),
    };
  },
};
