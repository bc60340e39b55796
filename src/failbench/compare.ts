/**
 * Two saved bench runs side by side: per agent and dimension, the change in pass rate with a
 * 95% interval for the difference (Newcombe's hybrid score method), so that a change can be
 * told apart from the noise of a few dozen scenarios.
 */
import { ConfigError } from '../core/errors.js';
import type { ResultsFile } from './report/write-report.js';
import type { AgentScore } from './score.js';
import { DIMENSIONS, type Dimension } from './types.js';
import { newcombeDifference } from '../stats/wilson.js';

export interface DimensionDelta {
  a: { rate: number; n: number };
  b: { rate: number; n: number };
  /** b - a. */
  delta: number;
  ci95: [number, number];
}

/** The `bench compare --json` shape, one per agent pair. */
export interface RunComparison {
  run_a: string;
  run_b: string;
  agent_a: string;
  agent_b: string;
  dimensions: Record<Dimension, DimensionDelta>;
  score: { a: number; b: number; delta: number };
}

function pairs(a: readonly AgentScore[], b: readonly AgentScore[]): [AgentScore, AgentScore][] {
  const byName = new Map(b.map((s) => [s.agent, s]));
  const shared = a.filter((s) => byName.has(s.agent)).map((s): [AgentScore, AgentScore] => [s, byName.get(s.agent)!]);
  if (shared.length > 0) return shared;
  // One agent each, under different names (naive vs robust, or two models): compare them directly.
  if (a.length === 1 && b.length === 1) return [[a[0]!, b[0]!]];
  throw new ConfigError(`the runs share no agent (${a.map((s) => s.agent).join(', ')} vs ${b.map((s) => s.agent).join(', ')})`, 'run');
}

/** Compares run B against run A, per agent the two have in common. */
export function compareRuns(a: ResultsFile, b: ResultsFile): RunComparison[] {
  return pairs(a.scores, b.scores).map(([sa, sb]) => {
    const dimensions = {} as Record<Dimension, DimensionDelta>;
    for (const d of DIMENSIONS) {
      const x = sa.dimensions[d];
      const y = sb.dimensions[d];
      // Rates are passed/n, so the counts come back exactly.
      const diff = newcombeDifference({ successes: Math.round(x.rate * x.n), n: x.n }, { successes: Math.round(y.rate * y.n), n: y.n });
      dimensions[d] = { a: { rate: x.rate, n: x.n }, b: { rate: y.rate, n: y.n }, delta: diff.delta, ci95: diff.ci95 };
    }
    return {
      run_a: a.suite.meta.runId,
      run_b: b.suite.meta.runId,
      agent_a: sa.agent,
      agent_b: sb.agent,
      dimensions,
      score: { a: sa.score, b: sb.score, delta: sb.score - sa.score },
    };
  });
}

/**
 * What differs between two runs besides the agents: a change in scores over other scenarios, or
 * under other feedback, transport or seed, is not the agent's. Empty when they match.
 */
export function runDifferences(a: ResultsFile, b: ResultsFile): string[] {
  const differences: string[] = [];
  const idsA = new Set(a.suite.scenarios.map((s) => s.id));
  const idsB = b.suite.scenarios.map((s) => s.id);
  const shared = idsB.filter((id) => idsA.has(id)).length;
  if (shared !== idsA.size || shared !== idsB.length) differences.push(`scenarios (A ${idsA.size}, B ${idsB.length}, ${shared} in common)`);
  const ma = a.suite.meta;
  const mb = b.suite.meta;
  for (const key of ['feedback', 'transport', 'seed', 'repeat'] as const) {
    if (ma[key] !== mb[key]) differences.push(`${key} (A ${String(ma[key])}, B ${String(mb[key])})`);
  }
  return differences;
}
