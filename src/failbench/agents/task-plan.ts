/**
 * From an instruction's intent to the tool calls that carry it out. A plan is a list of steps:
 * a main source of data or action, then the sinks the instruction names (save it to a file,
 * post it to a channel). Each step knows how to build its arguments from earlier results, how
 * to check its answer, and, for writes, how to look up whether it already happened.
 */
import type { CheckContext } from './check-result.js';
import { DOMAIN_PLANNERS, planMainStep, type Domain } from './domain-planners.js';
import { localDate, type Intent, type Language } from './intent.js';
import type { PlanContext, PlanHelpers, Step, StepOutputs } from './plan-step.js';
import { asObject, fileConfirm, messageStep } from './step-parts.js';

export type { Confirmation, PlanContext, Step, StepOutputs } from './plan-step.js';

export interface Plan {
  language: Language;
  steps: Step[];
}

/** The text a sink step writes or posts: what the source steps found (all of them, or nothing). */
function reportText(sources: readonly Step[], prior: StepOutputs): string | undefined {
  const lines: string[] = [];
  for (const source of sources) {
    const done = prior.get(source.key);
    if (done === undefined) return undefined;
    lines.push(source.summary(done.output, done.args));
  }
  return lines.join('\n');
}

/**
 * One intent per entity when the instruction names several of the kind its main step reads
 * ("the weather in Shanghai, Beijing and Tokyo", "orders ORD-10019 and ORD-10020", "north and
 * south sales"): each becomes a step of its own.
 */
function perEntity(intent: Intent, has: (tool: string) => boolean): Intent[] {
  const verbs = new Set(intent.verbs);
  if (intent.cities.length > 1 && has('get_weather')) return intent.cities.map((city) => ({ ...intent, city, cities: [city] }));
  if (intent.regions.length > 1 && has('query_sales_data') && intent.literals['region'] === undefined) return intent.regions.map((region) => ({ ...intent, region, regions: [region] }));
  if (intent.orderIds.length > 1 && has('get_order') && !verbs.has('cancel')) return intent.orderIds.map((orderId) => ({ ...intent, orderId, orderIds: [orderId] }));
  return [intent];
}

/** Builds the plan for an intent with the tools at hand; undefined when the task is not understood. */
export function buildPlan(intent: Intent, ctx: PlanContext): Plan | undefined {
  const has = (tool: string) => ctx.tools.has(tool);
  const verbs = new Set(intent.verbs);
  const utcToday = localDate(ctx.nowMs, 'UTC');
  const steps: Step[] = [];
  const base: CheckContext = { nowMs: ctx.nowMs };
  const startIso = new Date(ctx.nowMs).toISOString();

  // "Post "A" to #x and "B" to #y": one post per channel, each with its own text.
  if (intent.channels.length > 1 && intent.quoted.length === intent.channels.length && has('send_message') && !intent.verbs.some((v) => v !== 'post')) {
    intent.channels.forEach((channel, i) => {
      const text = intent.quoted[i]!;
      steps.push(messageStep(i === 0 ? 'main' : `main-${i + 1}`, channel, () => text, base, startIso, has));
    });
    return { language: intent.language, steps };
  }

  const helpers: PlanHelpers = { has, verbs, utcToday, base, startIso, steps };
  const sources: Step[] = [];
  const domains: Domain[] = [];
  for (const [i, one] of perEntity(intent, has).entries()) {
    const planned = planMainStep(one, ctx, helpers);
    if (planned === undefined) return undefined;
    if (i > 0) planned.step.key = `main-${i + 1}`;
    sources.push(planned.step);
    domains.push(planned.domain);
  }
  const main = sources[0]!;
  steps.push(...sources);

  const mainWrites = main.write;
  const writeTarget = intent.paths.length > 0 && has('write_file') && verbs.has('write') && main.tool !== 'write_file' ? intent.paths[intent.paths.length - 1] : undefined;
  if (writeTarget !== undefined && !(main.tool === 'read_file' && intent.paths.length < 2)) {
    steps.push({
      key: 'report',
      tool: 'write_file',
      write: true,
      check: base,
      args: (prior) => {
        const text = reportText(sources, prior);
        return text === undefined ? undefined : { path: writeTarget, content: `${text}\n` };
      },
      ...fileConfirm(has),
      summary: (o) => `Saved ${String(asObject(o)?.['path'] ?? writeTarget)} (version ${String(asObject(o)?.['version'] ?? '?')})`,
    });
  }
  const after = intent.reportAfter ? DOMAIN_PLANNERS[domains[0]!].reportAfter?.(intent, main, helpers) : undefined;
  if (after !== undefined) steps.push(after);
  if (intent.channel !== undefined && has('send_message') && main.tool !== 'send_message' && !mainWrites) {
    const channel = intent.channel;
    steps.push(messageStep('notify', channel, (prior) => reportText(sources, prior), base, startIso, has));
  }
  return { language: intent.language, steps };
}
