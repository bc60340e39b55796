/** The importers by format name, for the CLI and for callers that pick a format at run time. */
import { importAnthropic } from './anthropic.js';
import type { ImportFormat, Importer } from './import-types.js';
import { importOpenAi } from './openai.js';
import { importOtel } from './otel.js';
import { importStepLog } from './step-log.js';
import { importTauBench } from './tau-bench.js';

export const IMPORTERS: Readonly<Record<ImportFormat, Importer>> = {
  openai: importOpenAi,
  anthropic: importAnthropic,
  'tau-bench': importTauBench,
  'step-log': importStepLog,
  otel: importOtel,
};

export { IMPORT_FORMATS } from './import-types.js';
export type { ImportFormat, ImportInput, ImportItem, ImportOptions, Importer } from './import-types.js';
export { importAnthropic, anthropicTrajectory } from './anthropic.js';
export { importOpenAi, openAiTrajectory } from './openai.js';
export { importOtel } from './otel.js';
export { importStepLog } from './step-log.js';
export { importTauBench, tauBenchFailure, tauBenchReading, tauBenchTrajectory, TAU_BENCH_RULES } from './tau-bench.js';
export type { TauBenchRule } from './tau-bench.js';
export { JsonArrayShapeError, readJsonArray } from './json-array-stream.js';
export { failureOfResult, readBody, readResult } from './tool-result.js';
export type { ResultFailure, ResultReading } from './tool-result.js';
