/**
 * `faultline/faults`: fault plans (the runtime's `faults` option), and the HTTP and MCP fault
 * proxies that apply the same plans on the wire.
 */
export { createFaultPlan } from './faults/plan.js';
export type { FaultPlan, FaultPlanOptions, FaultPlanState, FaultRuleState, ObservedOutput } from './faults/plan.js';
export { loadFaultPlan, parseFaultPlan, validateFaultPlan } from './faults/plan-validate.js';
export { FAULT_KINDS, HTTP_FAULT_STATUSES } from './faults/plan-spec.js';
export type {
  AuthExpiryParams,
  ConnectionParams,
  ConnectionResetParams,
  FaultKind,
  FaultParamsByKind,
  FaultPlanSpec,
  FaultRule,
  FaultRuleBase,
  FaultTrigger,
  HttpFaultStatus,
  HttpStatusParams,
  LatencyParams,
  MalformedJsonParams,
  PartialParams,
  RateLimitBurstParams,
  RetypeTarget,
  SchemaDriftParams,
  SemanticDriftParams,
  StaleParams,
  TimeoutParams,
} from './faults/plan-spec.js';
export type { DropCode, FaultCall, FaultDecision, FaultEffect } from './faults/decision.js';
export { errnoError, toPlannedFault } from './faults/inprocess.js';
export type { FaultCallInfo, FaultInjector, PlannedFault } from './runtime/fault-injector.js';

export { startHttpFaultProxy, compileRoutes, loadRoutes, parseRoutes, FAULT_HEADER } from './faults/http-proxy/index.js';
export type { HttpFaultProxy, HttpFaultProxyOptions, HttpFaultProxyStats, ProxyRoute, RouteMatch, RouteTable } from './faults/http-proxy/index.js';

export { startMcpProxy, serveMcpOverHttp, isIdempotentTool, McpUpstreamError } from './faults/mcp-proxy/index.js';
export type { McpHttpOptions, McpHttpServer, McpProxy, McpProxyOptions, McpProxyStats, McpRestartOptions } from './faults/mcp-proxy/index.js';
