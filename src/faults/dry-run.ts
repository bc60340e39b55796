/**
 * How a `lost_write` fault reaches the tool: the call goes through marked as a dry run, which the
 * tool answers exactly as it would answer the real call while applying nothing (Kubernetes'
 * server-side dry run is the same idea). In process the runtime sets `ToolContext.dryRun`; over
 * HTTP the proxy adds {@link DRY_RUN_HEADER}, over MCP the key {@link DRY_RUN_META} in `_meta`.
 * faultline's mock tools honour the marker; a tool that ignores it applies the call.
 */

/** The request header the HTTP fault proxy adds to a call it forwards as a dry run. A client's own is dropped. */
export const DRY_RUN_HEADER = 'x-faultline-dry-run';

/** The `_meta` key of a tools/call the MCP fault proxy forwards as a dry run. A client's own is dropped. */
export const DRY_RUN_META = 'faultline/dry_run';
