/**
 * The mock tool catalog and its HTTP server: stateful, deterministic tools that fail the way
 * real APIs do, for FailBench scenarios, examples and tests.
 */
export { createToolCatalog, CATALOG_TOOL_NAMES, DEFAULT_CATALOG_NOW } from './catalog.js';
export type { ToolCatalog, ToolCatalogOptions } from './catalog.js';
export type { CatalogSnapshot, CatalogState, DuplicateGroup, DuplicateReport, DuplicateSummary } from './catalog-state.js';
export type { Customer, Order, OrderItem, OrderStatus, Product } from './orders.js';
export type { Channel, Message } from './messaging.js';
export type { CalendarEvent, ListedEvent } from './calendar.js';
export type { Payment, PaymentStatus, Refund, RefundReason } from './payments.js';
export type { StoredFile } from './files.js';
export type { StoredDocument, SearchHit, SearchResult } from './documents.js';
export { findCity } from './weather.js';
export type { DailyWeather } from './weather.js';
export type { SalesReport, SalesRow } from './sales.js';
export { startMockToolServer, DEFAULT_TIMEOUT_CAP_MS } from './http-server.js';
export type { FaultDecider, InjectedFaultEntry, MockToolServer, MockToolServerOptions } from './http-server.js';
export { parseInjectHeader, INJECT_HEADER, COMMIT_HEADER } from '../faults/inject-error.js';
export { errorReply, STATUS_BY_TYPE } from './http-error-response.js';
export type { HttpReply } from './http-error-response.js';
export { anchoredClock } from './anchored-clock.js';
