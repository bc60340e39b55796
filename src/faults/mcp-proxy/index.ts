/**
 * The MCP fault proxy: put it between any MCP client and any MCP server, and every tools/call
 * goes through a fault plan and into the store as a record.
 */
export { DEFAULT_MAX_RESTARTS, startMcpProxy } from './proxy.js';
export type { McpProxy, McpProxyOptions, McpProxyStats, McpRestartOptions } from './proxy.js';
export { connectUpstream, describeExit, describeUpstream, McpUpstreamError, openUpstream, PROXY_CLIENT_INFO } from './upstream.js';
export type { McpUpstream, UpstreamConnection, UpstreamExit } from './upstream.js';
export { serveMcpOverHttp } from './http-downstream.js';
export type { McpHttpOptions, McpHttpServer } from './http-downstream.js';
export { generateAdminToken, startAdminServer } from './admin-server.js';
export type { AdminServer, AdminServerOptions } from './admin-server.js';
export { isIdempotentTool } from './tool-catalog.js';
export { JsonRpcError } from './rpc-error.js';
export type { RecordSink } from './tool-call.js';
