/**
 * Fault injection: one plan model (plan-spec.ts) for the in-process injector and the HTTP and
 * MCP proxies. Load or write a plan, create it with `createFaultPlan`, and pass it to
 * `createRuntime({ faults })`, or call `decide()` from a proxy.
 */
export { createFaultPlan } from './plan.js';
export type { FaultPlan, FaultPlanOptions, FaultPlanState, FaultRuleState, ObservedOutput } from './plan.js';
export { loadFaultPlan, parseFaultPlan, validateFaultPlan } from './plan-validate.js';
export { FAULT_KINDS, HTTP_FAULT_STATUSES } from './plan-spec.js';
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
} from './plan-spec.js';
export type { DropCode, FaultCall, FaultDecision, FaultEffect } from './decision.js';
export { errnoError, toPlannedFault } from './inprocess.js';
export { malformedText } from './output-rewrites.js';
export type { FaultCallInfo, FaultInjector, PlannedFault } from '../runtime/fault-injector.js';
