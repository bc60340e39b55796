/**
 * Saved bench runs for the tests that read them back (`bench compare`, the dashboard's runs
 * pages): a real suite over two small scenarios, scored and written as `bench` writes a run.
 */
import { join } from 'node:path';
import { hammerAgent, outageScenario, patientAgent, rateLimitScenario } from './bench.test-helpers.js';
import { writeReport } from './report/write-report.js';
import { runSuite } from './runner.js';
import { scoreSuite } from './score.js';
import type { Agent, FeedbackMode } from './types.js';

export interface SavedRunOptions {
  runId: string;
  /** Default: one agent that waits out Retry-After and one that hammers. */
  agents?: () => Agent[];
  feedback?: FeedbackMode;
  seed?: number;
}

/** Runs the suite and writes its report files to `<runsDir>/<runId>/`; returns that directory. */
export async function saveRun(runsDir: string, options: SavedRunOptions): Promise<string> {
  const suite = await runSuite({
    scenarios: [outageScenario(), rateLimitScenario()],
    agents: options.agents?.() ?? [patientAgent(), hammerAgent()],
    feedback: options.feedback ?? 'raw',
    seed: options.seed ?? 1,
    runId: options.runId,
    version: 'test',
  });
  const dir = join(runsDir, options.runId);
  await writeReport(dir, suite, scoreSuite(suite));
  return dir;
}
