/**
 * The `tool` label values both metric exports (Prometheus in metrics.ts, OpenTelemetry in
 * integrations/otel.ts) use for names that must not become series of their own (DESIGN.md,
 * "Prometheus metrics").
 */

/**
 * The label of calls of a name that is not a tool (failure type `unknown_tool`), whatever the
 * name: a model inventing names must not be able to create series. Parenthesised, so no name
 * `defineTool` accepts can be mistaken for it.
 */
export const UNKNOWN_TOOL_LABEL = '(unknown)';
/** The label shared by the tools past `maxTools` distinct labels. */
export const OTHER_TOOLS_LABEL = '(other)';
/** The failure type of a call of a name that is not a tool. */
export const UNKNOWN_TOOL_TYPE = 'unknown_tool';
