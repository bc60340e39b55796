/**
 * faultline/bench: FailBench for evaluators. Write an agent against `Agent` / `AgentTask` /
 * `AgentOutcome` (or wrap a reference agent), load a suite, run it, score it, write the report;
 * `faultline bench --agent module:./my-agent.ts` runs the same agent from the command line. The
 * scoring rules are DESIGN.md's "FailBench scoring rules" (and `SCORING_RULES`).
 *
 * @example
 * import { createRobustAgent, loadSuite, runSuite, scoreSuite } from 'faultline/bench';
 * const suite = await runSuite({ scenarios: await loadSuite(), agents: [createRobustAgent()], feedback: 'raw', seed: 1 });
 * console.log(scoreSuite(suite)[0].score);
 */
export type {
  Agent,
  AgentOutcome,
  AgentTask,
  AgentTool,
  AgentToolResult,
  AssistedInfo,
  CallTrace,
  Diagnosis,
  Dimension,
  FeedbackMode,
  RawToolError,
  Scenario,
  ScenarioOracle,
  ScenarioResult,
  TaskSampling,
} from './failbench/types.js';
export { DIMENSIONS } from './failbench/types.js';

export { createNaiveAgent } from './failbench/agents/naive.js';
export { createFeedbackFollowingAgent } from './failbench/agents/follow-feedback.js';
export { createRobustAgent } from './failbench/agents/robust.js';
export type { RobustAgentOptions } from './failbench/agents/robust.js';
export { createSamplingAgent } from './failbench/agents/sampler.js';
export type { SamplingAgentOptions } from './failbench/agents/sampler.js';
export { FEEDBACK_RULES, NAIVE_RULES, ROBUST_RULES } from './failbench/agents/playbook.js';
export type { PlaybookRules } from './failbench/agents/playbook.js';
export { createOpenAIAgent } from './failbench/agents/openai.js';
export type { OpenAIAgentOptions } from './failbench/agents/openai.js';
export { createAnthropicAgent } from './failbench/agents/anthropic.js';
export type { AnthropicAgentOptions } from './failbench/agents/anthropic.js';
export { loadModuleAgent } from './failbench/agents/module-agent.js';

export { defaultSuiteDir, loadSuite } from './failbench/default-suite.js';
export { ScenarioError } from './failbench/scenario-loader.js';
export type { LoadScenariosOptions } from './failbench/scenario-loader.js';
export { runScenario, runSuite, SuiteStoppedError } from './failbench/runner.js';
export { CAPABILITIES, parseCapabilities } from './failbench/capabilities.js';
export type { Capability } from './failbench/capabilities.js';
export type { RunScenarioOptions, RunSuiteOptions, ScenarioSummary, SuiteMeta, SuiteResult, Transport } from './failbench/runner.js';

export { agentReport, MEASURES, NEEDLESS_CALL_COST, runCost, SCORE_WEIGHTS, scoreAgent, scoreSuite } from './failbench/score.js';
export type { AgentScore, Coverage } from './failbench/score.js';
export { scoreRun } from './failbench/run-verdict.js';
export type { DiagnosisAudit, Measure, RunEvidence, RunVerdict } from './failbench/run-verdict.js';
export { failability } from './failbench/failability.js';
export type { Failability } from './failbench/failability.js';
export { OVERALL_RULE, SCORING_RULES } from './failbench/scoring-rules.js';
export type { ScoringRule } from './failbench/scoring-rules.js';
export { readResults, writeReport } from './failbench/report/write-report.js';
export type { ResultsFile, WrittenReport } from './failbench/report/write-report.js';
export { compareRuns } from './failbench/compare.js';
export type { RunComparison } from './failbench/compare.js';
