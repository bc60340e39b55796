/**
 * `faultline/monitor`: alert rules over a store, Prometheus metrics (prom-client) and the local
 * dashboard.
 */
export { evaluateAlerts, loadAlertConfig, resolveAlertConfig, ALERT_RULES } from './monitor/alert-rules.js';
export type { Alert, AlertConfig, AlertRuleName, AlertSeverity, EvaluateAlertsOptions, ResolvedAlertConfig } from './monitor/alert-rules.js';
export { createMetrics, createStoreMetrics, METRIC_NAMES, OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL } from './monitor/metrics.js';
export type { FaultlineMetrics, MetricsHandler, MetricsOptions, StoreMetrics, StoreMetricsOptions } from './monitor/metrics.js';
export { createDashboard } from './monitor/dashboard/create-dashboard.js';
export type { Dashboard, DashboardOptions } from './monitor/dashboard/create-dashboard.js';
