/** Trajectories (seed 000 section 3): the model, the builder from stored records, and the importers. */
export { DECISION_ACTIONS, OUTCOME_SOURCES, TRAJECTORY_SCHEMA_VERSION, TRAJECTORY_SOURCES } from '../core/trajectory-types.js';
export type {
  AgentDecision,
  AugmentationTag,
  ConversationTurn,
  CorrectAction,
  DecisionAction,
  DecisionCorrectness,
  Difficulty,
  FailureEvidence,
  FailureSummary,
  FinalOutcome,
  FissionInfo,
  LabelReview,
  OutcomeBasis,
  OutcomeSource,
  StepResponse,
  ToolDefinition,
  Trajectory,
  TrajectoryLabel,
  TrajectoryMetadata,
  TrajectorySource,
  TrajectoryStep,
} from '../core/trajectory-types.js';
export { trajectoryFromRecords, trajectoriesFromRecords, trajectoriesFromStore } from './from-records.js';
export type { FromRecordsOptions } from './from-records.js';
export { deriveDecision, deriveDecisions } from './decide.js';
export { paramsDelta } from '../core/params-delta.js';
export type { DecisionCall } from './decide.js';
export { assembleTrajectory, summarizeFailures } from './assemble.js';
export {
  anthropicTrajectory,
  failureOfResult,
  IMPORT_FORMATS,
  IMPORTERS,
  importAnthropic,
  importOpenAi,
  importOtel,
  importStepLog,
  importTauBench,
  JsonArrayShapeError,
  openAiTrajectory,
  readJsonArray,
  TAU_BENCH_RULES,
  tauBenchFailure,
  tauBenchTrajectory,
} from './importers/index.js';
export type { ImportFormat, ImportInput, ImportItem, ImportOptions, Importer, ResultFailure, TauBenchRule } from './importers/index.js';
export { importFile, ImportInputError, summarizeImport } from './import-file.js';
export { redactTrajectory } from './redact-trajectory.js';
export type { ImportFileOptions, ImportFileResult, ImportSummary, SkippedLine } from './import-file.js';
export { hasTrajectoryStore } from '../store/trajectory-row.js';
