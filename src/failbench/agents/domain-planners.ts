/**
 * The main step of a plan, planned per domain from a table: each domain's planner is its own
 * module under `planners/`, and planning looks the domain of an instruction up instead of
 * branching on it.
 */
import type { Intent } from './intent.js';
import type { DomainPlanner, PlanContext, PlanHelpers, Step } from './plan-step.js';
import { cancelOrderPlanner } from './planners/cancel-order.js';
import { createOrderPlanner } from './planners/create-order.js';
import { getOrderPlanner } from './planners/get-order.js';
import { getPaymentPlanner } from './planners/get-payment.js';
import { listEventsPlanner } from './planners/list-events.js';
import { listFilesPlanner } from './planners/list-files.js';
import { listMessagesPlanner } from './planners/list-messages.js';
import { listOrdersPlanner } from './planners/list-orders.js';
import { readFilePlanner } from './planners/read-file.js';
import { refundPlanner } from './planners/refund.js';
import { salesPlanner } from './planners/sales.js';
import { scheduleEventPlanner } from './planners/schedule-event.js';
import { searchDocumentsPlanner } from './planners/search-documents.js';
import { sendMessagePlanner } from './planners/send-message.js';
import { weatherPlanner } from './planners/weather.js';
import { writeFilePlanner } from './planners/write-file.js';

/** What a plan's main step can be about. */
export type Domain = 'refund' | 'cancel_order' | 'create_order' | 'schedule_event' | 'weather' | 'sales' | 'search_documents' | 'list_events' | 'read_file' | 'write_file' | 'list_files' | 'get_order' | 'list_orders' | 'get_payment' | 'send_message' | 'list_messages';

export const DOMAIN_PLANNERS: Readonly<Record<Domain, DomainPlanner>> = {
  refund: refundPlanner,
  cancel_order: cancelOrderPlanner,
  create_order: createOrderPlanner,
  schedule_event: scheduleEventPlanner,
  weather: weatherPlanner,
  sales: salesPlanner,
  search_documents: searchDocumentsPlanner,
  list_events: listEventsPlanner,
  read_file: readFilePlanner,
  write_file: writeFilePlanner,
  list_files: listFilesPlanner,
  get_order: getOrderPlanner,
  list_orders: listOrdersPlanner,
  get_payment: getPaymentPlanner,
  send_message: sendMessagePlanner,
  list_messages: listMessagesPlanner,
};

/**
 * The order domains are asked in; the first to claim an instruction plans it. Claims overlap (a
 * refund names the payment a read could fetch; a channel named beside a search is where the
 * result goes, not the task), so this order is part of how an instruction is read.
 */
export const DOMAIN_PRECEDENCE: readonly Domain[] = [
  'refund',
  'cancel_order',
  'create_order',
  'schedule_event',
  'weather',
  'sales',
  'search_documents',
  'list_events',
  'read_file',
  'write_file',
  'list_files',
  'get_order',
  'list_orders',
  'get_payment',
  'send_message',
  'list_messages',
];

/** The domain an instruction is about with the tools at hand, or undefined when none claims it. */
export function domainOf(intent: Intent, h: PlanHelpers): Domain | undefined {
  return DOMAIN_PRECEDENCE.find((domain) => DOMAIN_PLANNERS[domain].claims(intent, h));
}

/** The main step of the instruction, with its domain; undefined when it is not understood or there is no step to take. */
export function planMainStep(intent: Intent, ctx: PlanContext, h: PlanHelpers): { domain: Domain; step: Step } | undefined {
  const domain = domainOf(intent, h);
  if (domain === undefined) return undefined;
  const step = DOMAIN_PLANNERS[domain].plan(intent, ctx, h);
  return step === undefined ? undefined : { domain, step };
}
