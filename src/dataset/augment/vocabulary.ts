/**
 * The words augmentation draws from: synonyms for the words tool and field names are made of
 * (rename), the eight mock-catalog domains and tau-bench's airline with their tools and fields (domain), and pools of
 * entity names that can stand in for one another (perturb). Plain data, so a variant is fixed
 * by the seed alone.
 */

/** Alternatives for words found in tool and field names; a name's other words are kept. */
export const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  get: ['fetch', 'retrieve', 'lookup', 'read'],
  fetch: ['get', 'retrieve', 'load'],
  read: ['load', 'open', 'get'],
  list: ['enumerate', 'browse', 'index'],
  query: ['fetch', 'lookup', 'pull'],
  search: ['find', 'lookup', 'scan'],
  find: ['search', 'locate', 'scan'],
  create: ['add', 'make', 'open', 'register'],
  add: ['create', 'insert', 'register'],
  send: ['post', 'deliver', 'dispatch'],
  post: ['send', 'publish', 'submit'],
  write: ['save', 'store', 'put'],
  update: ['modify', 'edit', 'change'],
  delete: ['remove', 'drop', 'erase'],
  remove: ['delete', 'drop', 'discard'],
  cancel: ['void', 'revoke', 'abort'],
  book: ['reserve', 'schedule', 'hold'],
  check: ['verify', 'inspect', 'probe'],
  weather: ['forecast', 'climate', 'conditions'],
  forecast: ['outlook', 'prediction', 'projection'],
  sales: ['revenue', 'turnover', 'bookings'],
  data: ['records', 'figures', 'stats'],
  order: ['purchase', 'booking', 'request'],
  orders: ['purchases', 'bookings', 'requests'],
  message: ['note', 'post', 'chat'],
  messages: ['notes', 'posts', 'chats'],
  event: ['appointment', 'meeting', 'slot'],
  events: ['appointments', 'meetings', 'slots'],
  payment: ['charge', 'transaction', 'remittance'],
  refund: ['reimbursement', 'chargeback', 'repayment'],
  file: ['document', 'blob', 'asset'],
  files: ['documents', 'blobs', 'assets'],
  document: ['record', 'page', 'article'],
  documents: ['records', 'pages', 'articles'],
  flight: ['trip', 'journey', 'route'],
  flights: ['trips', 'journeys', 'routes'],
  reservation: ['booking', 'hold', 'ticket'],
  user: ['account', 'member', 'customer'],
  customer: ['client', 'buyer', 'account'],
  details: ['info', 'summary', 'profile'],
  city: ['town', 'location', 'place'],
  location: ['place', 'site', 'position'],
  date: ['day', 'when', 'on_date'],
  month: ['period', 'billing_month', 'cycle'],
  start: ['begin', 'from', 'since'],
  end: ['finish', 'until', 'to'],
  time: ['moment', 'timestamp', 'at'],
  id: ['identifier', 'ref', 'key'],
  name: ['label', 'title', 'handle'],
  limit: ['max_results', 'cap', 'page_size'],
  count: ['total', 'number', 'amount'],
  amount: ['sum', 'value', 'total'],
  currency: ['money_unit', 'denomination', 'ccy'],
  unit: ['units', 'scale', 'measure'],
  channel: ['room', 'topic', 'stream'],
  text: ['body', 'content', 'message_text'],
  content: ['body', 'payload', 'text'],
  path: ['location', 'filename', 'route'],
  query_text: ['search_text', 'phrase', 'terms'],
  region: ['area', 'territory', 'zone'],
  product: ['item', 'sku', 'article'],
  quantity: ['qty', 'units', 'count'],
  status: ['state', 'stage', 'condition'],
  reason: ['cause', 'why', 'motive'],
  title: ['subject', 'heading', 'name'],
  days: ['day_count', 'span', 'horizon'],
};

/** What a tool does, by the verb of its name: a domain offers one tool per role. */
export type ToolRole = 'read' | 'list' | 'search' | 'create' | 'cancel';

export const ROLE_VERBS: Readonly<Record<ToolRole, readonly string[]>> = {
  read: ['get', 'fetch', 'read', 'lookup', 'check', 'show', 'retrieve', 'view', 'describe'],
  list: ['list', 'query', 'browse', 'count'],
  search: ['search', 'find'],
  create: ['create', 'add', 'send', 'write', 'book', 'post', 'make', 'submit', 'pay', 'insert', 'update', 'set', 'reserve'],
  cancel: ['cancel', 'delete', 'remove', 'refund', 'void', 'revoke'],
};

/** What a field holds, by its first value: a domain offers fields per kind. */
export type FieldKind = 'text' | 'date' | 'number' | 'enum' | 'id' | 'other';

export interface DomainProfile {
  name: string;
  /** The noun that names the domain in prose ("weather"), replaced by the target's in texts. */
  noun: string;
  /** Words in tool names that point at this domain. */
  keywords: readonly string[];
  tools: Readonly<Record<ToolRole, string>>;
  fields: Readonly<Record<FieldKind, readonly string[]>>;
}

/**
 * The mock catalog's eight domains (src/tools) and tau-bench's airline, each with a tool per
 * role and fields per kind.
 */
export const DOMAINS: readonly DomainProfile[] = [
  {
    name: 'weather', noun: 'weather', keywords: ['weather', 'forecast', 'temperature', 'climate'],
    tools: { read: 'get_weather', list: 'get_forecast', search: 'search_stations', create: 'create_weather_alert', cancel: 'delete_weather_alert' },
    fields: { text: ['city', 'station'], date: ['date', 'until'], number: ['days', 'hours'], enum: ['unit', 'detail'], id: ['station_id', 'alert_id'], other: ['options', 'extras'] },
  },
  {
    name: 'sales', noun: 'sales', keywords: ['sales', 'revenue', 'deal', 'deals', 'report'],
    tools: { read: 'get_sales_report', list: 'query_sales_data', search: 'search_deals', create: 'create_sales_target', cancel: 'delete_sales_target' },
    fields: { text: ['region', 'product'], date: ['month', 'start_date'], number: ['top_n', 'threshold'], enum: ['metric', 'granularity'], id: ['report_id', 'deal_id'], other: ['filters', 'breakdown'] },
  },
  {
    name: 'documents', noun: 'documents', keywords: ['document', 'documents', 'doc', 'docs', 'wiki'],
    tools: { read: 'get_document', list: 'list_documents', search: 'search_documents', create: 'create_document', cancel: 'archive_document' },
    fields: { text: ['query', 'title'], date: ['updated_after', 'updated_before'], number: ['top_k', 'max_chars'], enum: ['language', 'sort'], id: ['document_id', 'project_id'], other: ['filters', 'metadata'] },
  },
  {
    name: 'orders', noun: 'orders', keywords: ['order', 'orders', 'purchase', 'product', 'cart'],
    tools: { read: 'get_order', list: 'list_orders', search: 'search_orders', create: 'create_order', cancel: 'cancel_order' },
    fields: { text: ['customer', 'product'], date: ['since', 'delivery_date'], number: ['quantity', 'limit'], enum: ['status', 'shipping'], id: ['order_id', 'customer_id'], other: ['items', 'address'] },
  },
  {
    name: 'messaging', noun: 'messages', keywords: ['message', 'messages', 'chat', 'channel', 'email', 'notify'],
    tools: { read: 'get_message', list: 'list_messages', search: 'search_messages', create: 'send_message', cancel: 'delete_message' },
    fields: { text: ['channel', 'text'], date: ['since', 'until'], number: ['limit', 'max_length'], enum: ['priority', 'format'], id: ['message_id', 'thread_id'], other: ['attachments', 'mentions'] },
  },
  {
    name: 'calendar', noun: 'calendar', keywords: ['event', 'events', 'calendar', 'meeting', 'schedule'],
    tools: { read: 'get_event', list: 'list_events', search: 'search_events', create: 'create_event', cancel: 'cancel_event' },
    fields: { text: ['title', 'location'], date: ['start', 'end'], number: ['duration_minutes', 'reminder_minutes'], enum: ['visibility', 'recurrence'], id: ['event_id', 'calendar_id'], other: ['attendees', 'options'] },
  },
  {
    name: 'payments', noun: 'payments', keywords: ['payment', 'payments', 'refund', 'charge', 'invoice'],
    tools: { read: 'get_payment', list: 'list_payments', search: 'search_payments', create: 'create_refund', cancel: 'cancel_payment' },
    fields: { text: ['customer', 'reason'], date: ['created_after', 'created_before'], number: ['amount', 'limit'], enum: ['currency', 'method'], id: ['payment_id', 'refund_id'], other: ['metadata', 'billing'] },
  },
  {
    name: 'airline', noun: 'flight', keywords: ['flight', 'flights', 'reservation', 'reservations', 'airline', 'baggage', 'passenger', 'passengers', 'cabin'],
    tools: { read: 'get_reservation_details', list: 'list_flights', search: 'search_direct_flight', create: 'book_reservation', cancel: 'cancel_reservation' },
    fields: { text: ['origin', 'destination'], date: ['date', 'departure_date'], number: ['total_baggages', 'nonfree_baggages'], enum: ['cabin', 'flight_type'], id: ['reservation_id', 'user_id'], other: ['passengers', 'payment_methods'] },
  },
  {
    name: 'files', noun: 'files', keywords: ['file', 'files', 'folder', 'directory', 'upload'],
    tools: { read: 'read_file', list: 'list_files', search: 'search_files', create: 'write_file', cancel: 'delete_file' },
    fields: { text: ['path', 'content'], date: ['modified_after', 'modified_before'], number: ['max_bytes', 'depth'], enum: ['encoding', 'mode'], id: ['file_id', 'folder_id'], other: ['options', 'permissions'] },
  },
];

/** Entity names that stand in for one another, one pool per kind of entity. */
export const ENTITY_POOLS: readonly (readonly string[])[] = [
  ['Paris', 'London', 'Tokyo', 'Berlin', 'Shanghai', 'Beijing', 'Sydney', 'Rome', 'Madrid', 'Singapore', 'Toronto', 'Chicago', 'Seoul', 'Mumbai', 'Lisbon', 'Vienna', 'Oslo', 'Dublin'],
  ['Alice', 'Bob', 'Carol', 'David', 'Erin', 'Frank', 'Grace', 'Heidi', 'Ivan', 'Judy', 'Mallory', 'Niaj', 'Olivia', 'Peggy', 'Rupert', 'Sybil', 'Trent', 'Victor', 'Wendy'],
  ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Martinez', 'Lopez', 'Wilson', 'Anderson', 'Taylor', 'Moore'],
  ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne'],
];
