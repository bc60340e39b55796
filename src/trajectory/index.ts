/** Trajectories (seed 000 section 3): the model, the builder from stored records, and the importers. */
export * from '../core/trajectory-types.js';
export { trajectoryFromRecords, trajectoriesFromRecords, trajectoriesFromStore } from './from-records.js';
export type { FromRecordsOptions } from './from-records.js';
export { deriveDecision, deriveDecisions } from './decide.js';
export { paramsDelta } from '../core/params-delta.js';
export type { DecisionCall } from './decide.js';
export { assembleTrajectory, summarizeFailures } from './assemble.js';
export * from './importers/index.js';
export { importFile, ImportInputError, summarizeImport } from './import-file.js';
export { redactTrajectory } from './redact-trajectory.js';
export type { ImportFileOptions, ImportFileResult, ImportSummary, SkippedLine } from './import-file.js';
export { hasTrajectoryStore } from '../store/trajectory-row.js';
