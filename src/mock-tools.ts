/**
 * `faultline/mock-tools`: the stateful, deterministic mock tool catalog (8 domains) FailBench
 * runs on, its HTTP server (X-Inject-Error, fault plans) and its MCP server.
 */
export { createToolCatalog, CATALOG_TOOL_NAMES, DEFAULT_CATALOG_NOW, startMockToolServer, parseInjectHeader, INJECT_HEADER, COMMIT_HEADER } from './tools/index.js';
export type {
  CalendarEvent,
  CatalogSnapshot,
  CatalogState,
  Channel,
  Customer,
  DailyWeather,
  DuplicateGroup,
  DuplicateReport,
  DuplicateSummary,
  FaultDecider,
  InjectedFaultEntry,
  ListedEvent,
  Message,
  MockToolServer,
  MockToolServerOptions,
  Order,
  OrderItem,
  OrderStatus,
  Payment,
  PaymentStatus,
  Product,
  Refund,
  RefundReason,
  SalesReport,
  SalesRow,
  SearchHit,
  SearchResult,
  StoredDocument,
  StoredFile,
  ToolCatalog,
  ToolCatalogOptions,
} from './tools/index.js';
export { createMockToolMcpServer } from './tools/mcp-server.js';
export type { MockToolMcpServerOptions, MockToolWorld } from './tools/mcp-server.js';
