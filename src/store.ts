/**
 * `faultline/store`: the stores (SQLite, in-memory; PostgreSQL is `faultline/postgres`), opening
 * one by spec, the Store interface and its capabilities, and the recorder that batches records into a store. The
 * SQLite driver loads on the first open.
 */
export { openStore, DEFAULT_SQLITE_PATH } from './store/open-store.js';
export type { OpenStoreOptions } from './store/open-store.js';
export { createMemoryStore } from './store/memory/memory-store.js';
export { createSqliteStore } from './store/sqlite/sqlite-store.js';
export type { SqliteStoreOptions } from './store/sqlite/sqlite-store.js';
export { hasTrajectoryStore } from './store/trajectory-row.js';
export { createRecorder } from './record/recorder.js';
export type { Recorder, RecorderOptions, RecorderStats, RecordingStats } from './record/recorder.js';
export type { RecordSink } from './core/record-sink.js';
export type {
  BatchEncoding,
  CorrectionEntry,
  CorrectionLimits,
  CorrectionMemoryStore,
  CorrectionQuery,
  FailureBreakdownRow,
  FailureSignature,
  HourlyPoint,
  NewCorrection,
  PruneOptions,
  RecordQuery,
  RecordReader,
  RecordRetention,
  RecordWriter,
  StatsFilter,
  StatsReader,
  Store,
  StoreHandle,
  StoreKind,
  TimeWindow,
  ToolStats,
  TrajectoryQuery,
  TrajectoryStore,
} from './core/store-types.js';
