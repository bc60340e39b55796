/**
 * The HTTP fault proxy: put it in front of tools you cannot wrap, point agents at it, and every
 * request becomes a recorded tool call, with faults from a fault plan or the X-Inject-Error header.
 */
export { startHttpFaultProxy, DEFAULT_HOLD_CAP_MS, DEFAULT_MAX_ARGS_BYTES, DEFAULT_MAX_REWRITE_BYTES, FAULT_HEADER } from './http-proxy.js';
export type { HttpFaultProxy, HttpFaultProxyOptions, HttpFaultProxyStats } from './http-proxy.js';
export { compileRoutes, loadRoutes, normalizePath, parseRoutes } from './routes.js';
export type { ProxyRoute, RouteMatch, RouteTable } from './routes.js';
export { ADMIN_PREFIX } from './admin-api.js';
export { buildExchangeRecord } from './exchange-record.js';
export type { ExchangeOutcome, ProxyExchange } from './exchange-record.js';
