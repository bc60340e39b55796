/**
 * `--format grpo`: FISSION groups (DESIGN.md, "FailBench") for GRPO, one JSONL row per group. The
 * members are the trajectories `faultline bench --fission K` stored with `metadata.fission`; K
 * continuations of one run that share every step up to and including an injected fault.
 *
 * ```
 * { "group_id": "grp_…", "scenario_id": "orders/…", "source": "faultline", "agent": "sampler", "seed": 1,
 *   "prompt": [                                            // the shared prefix, SFT chat shape
 *     { "role": "user", "content": <task_description> },
 *     { "role": "assistant", "content": null,
 *       "tool_calls": [{ "id": "call_<step_index>", "type": "function",
 *                        "function": { "name": <tool_name>, "arguments": <input_params as JSON text> } }] },
 *     { "role": "tool", "tool_call_id": "call_<step_index>", "content": <response as JSON text> },
 *     …one assistant + tool pair per prefix step; the last tool turn is the fault's result… ],
 *   "completions": [                                       // K of them, in branch order
 *     [ …assistant + tool pairs for the steps after the prefix…,
 *       { "role": "assistant", "content": <the continuation's final answer> } ], … ],
 *   "rewards": [ <K numbers in [0, 1]> ],                  // rewards[i] belongs to completions[i]
 *   "fault_type": "http_status",                           // the injected fault's kind at the branch point
 *   "tool_idempotent": false,                              // the faulted tool's idempotency
 *   "dimension": "idempotency_safety",                     // what the scenario is about (see below)
 *   "dimensions": ["idempotency_safety", "recovery"],
 *   "continuations": [ { "trajectory_id", "branch", "sample_seed", "status", "oracle_passed", "scores" }, … K ],
 *   "tools": [{ "type": "function", "function": { "name": <tool_name>, "parameters": <JSON Schema> } }] }
 * ```
 *
 * - `dimension`: the first of idempotency_safety, semantic_verification, recovery, loop_avoidance,
 *   identification that the scenario scores (`focusDimension` in src/failbench/fission.ts).
 * - Rewards come from the scenario oracle (src/failbench/fission-reward.ts):
 *   0.5 × [oracle passed] + 0.5 × (dimensions passed / dimensions scored); 0 for a crashed run.
 * - Completions hold the tool turns the environment answered as well as the model's own turns:
 *   a trainer masks the `tool` turns out of the loss, as for multi-turn SFT.
 * - The prompt must be identical across the group (it is by construction: the runs replay the
 *   same prefix); a group where it is not, or that lacks members, is skipped and counted.
 * - `tools` are inferred from the arguments seen in every member, as in the SFT format.
 * - Split: by group (`group_id`), never by member, so no continuation of a group lands on the
 *   other side. The card counts groups as examples and continuations as trajectories, plus
 *   groups per dimension and per fault type.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { callMessage, promptMessages, toolMessage, toolsOf, type OpenAiMessage, type OpenAiTool } from './chat.js';
import type { DatasetCard, DatasetCardBuilder } from './dataset-card.js';
import type { ExportDatasetOptions } from './export-dataset.js';
import { splitOf } from './split.js';

export interface GrpoContinuation {
  trajectory_id: string;
  branch: number;
  sample_seed: number;
  status: string;
  oracle_passed: boolean;
  scores: Record<string, boolean>;
}

export interface GrpoRow {
  group_id: string;
  scenario_id: string;
  source: string;
  agent: string;
  seed: number;
  prompt: OpenAiMessage[];
  completions: OpenAiMessage[][];
  rewards: number[];
  fault_type: string;
  tool_idempotent: boolean;
  dimension: string;
  dimensions: string[];
  continuations: GrpoContinuation[];
  tools: OpenAiTool[];
}

const MESSAGE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['role', 'content'],
  properties: {
    role: { enum: ['system', 'user', 'assistant', 'tool'] },
    content: { type: ['string', 'null'] },
    tool_call_id: { type: 'string' },
    tool_calls: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'type', 'function'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          type: { const: 'function' },
          function: { type: 'object', required: ['name', 'arguments'], additionalProperties: false, properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
        },
      },
    },
  },
} as const;

/** The JSON Schema of one `--format grpo` row: the exact shape documented above. */
export const GRPO_ROW_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['group_id', 'scenario_id', 'source', 'agent', 'seed', 'prompt', 'completions', 'rewards', 'fault_type', 'tool_idempotent', 'dimension', 'dimensions', 'continuations', 'tools'],
  properties: {
    group_id: { type: 'string', minLength: 1 },
    scenario_id: { type: 'string', minLength: 1 },
    source: { type: 'string' },
    agent: { type: 'string' },
    seed: { type: 'integer' },
    prompt: { type: 'array', minItems: 2, items: MESSAGE_SCHEMA },
    completions: { type: 'array', minItems: 2, items: { type: 'array', minItems: 1, items: MESSAGE_SCHEMA } },
    rewards: { type: 'array', minItems: 2, items: { type: 'number', minimum: 0, maximum: 1 } },
    fault_type: { type: 'string', minLength: 1 },
    tool_idempotent: { type: 'boolean' },
    dimension: { type: 'string', minLength: 1 },
    dimensions: { type: 'array', minItems: 1, items: { type: 'string' } },
    continuations: {
      type: 'array',
      minItems: 2,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['trajectory_id', 'branch', 'sample_seed', 'status', 'oracle_passed', 'scores'],
        properties: {
          trajectory_id: { type: 'string' },
          branch: { type: 'integer', minimum: 0 },
          sample_seed: { type: 'integer' },
          status: { type: 'string' },
          oracle_passed: { type: 'boolean' },
          scores: { type: 'object', additionalProperties: { type: 'boolean' } },
        },
      },
    },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'function'],
        properties: {
          type: { const: 'function' },
          function: { type: 'object', additionalProperties: false, required: ['name', 'parameters'], properties: { name: { type: 'string' }, parameters: { type: 'object' } } },
        },
      },
    },
  },
} as const;

/** The row of one complete group (members in any order), or why it has none. */
export function grpoRow(members: readonly Trajectory[]): { row: GrpoRow } | { skipped: string } {
  const sorted = [...members].sort((a, b) => (a.metadata.fission?.branch ?? 0) - (b.metadata.fission?.branch ?? 0));
  const first = sorted[0]?.metadata.fission;
  if (first === undefined) return { skipped: 'not a fission continuation' };
  if (sorted.length !== first.k || sorted.some((t, i) => t.metadata.fission?.group_id !== first.group_id || t.metadata.fission.branch !== i)) {
    return { skipped: 'incomplete fission group' };
  }
  if (sorted.some((t) => t.task_description === null || t.task_description === '')) return { skipped: 'no task description' };
  const prompts = sorted.map((t) => promptMessages(t, t.metadata.fission!.prefix_steps));
  const prompt = prompts[0]!;
  const promptText = JSON.stringify(prompt);
  if (prompts.some((p) => JSON.stringify(p) !== promptText)) return { skipped: 'prefix differs within its fission group' };
  const completions = sorted.map((t): OpenAiMessage[] => {
    const after = t.steps.filter((s) => s.step_index > t.metadata.fission!.prefix_steps);
    return [...after.flatMap((s) => [callMessage(s), toolMessage(s)]), { role: 'assistant', content: t.metadata.fission!.answer }];
  });
  return {
    row: {
      group_id: first.group_id,
      scenario_id: first.scenario_id,
      source: sorted[0]!.metadata.source,
      agent: first.agent,
      seed: first.seed,
      prompt,
      completions,
      rewards: sorted.map((t) => t.metadata.fission!.reward),
      fault_type: first.fault_type,
      tool_idempotent: first.tool_idempotent,
      dimension: first.dimension,
      dimensions: [...first.dimensions],
      continuations: sorted.map((t) => {
        const f = t.metadata.fission!;
        return { trajectory_id: t.trajectory_id, branch: f.branch, sample_seed: f.sample_seed, status: f.status, oracle_passed: f.oracle_passed, scores: { ...f.scores } };
      }),
      tools: toolsOf(sorted.flatMap((t) => t.steps)),
    },
  };
}

/** How the grpo card describes its split. */
export const GRPO_SPLIT_RULE = 'validation when the first 48 bits of sha256("<seed>:<group_id>") / 2^48 < val_fraction; a group is never split';

const bump = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};
const sortedCounts = (counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));

/**
 * Streams trajectories into groups and writes one row per group. Members may arrive in any order;
 * a group is written once all K are in, so only incomplete groups stay in memory. Stores page by
 * trajectory id, and fission ids sort by group, so that is one group at a time.
 */
export async function exportGrpo(options: ExportDatasetOptions, card: DatasetCardBuilder, seed: number, valFraction: number): Promise<DatasetCard> {
  const pending = new Map<string, Trajectory[]>();
  const byDimension: Record<string, number> = {};
  const byFaultType: Record<string, number> = {};
  for await (const trajectory of options.trajectories) {
    const fission = trajectory.metadata.fission;
    if (fission === undefined) {
      card.skip('not a fission continuation', trajectory);
      continue;
    }
    const members = pending.get(fission.group_id) ?? [];
    members.push(trajectory);
    pending.set(fission.group_id, members);
    if (members.length < fission.k) continue;
    pending.delete(fission.group_id);
    const built = grpoRow(members);
    if ('skipped' in built) {
      for (const m of members) card.skip(built.skipped, m);
      continue;
    }
    const split = splitOf(built.row.group_id, seed, valFraction);
    await options.write(split, JSON.stringify(built.row));
    members.forEach((m, i) => card.add(m, split, i === 0 ? 1 : 0));
    bump(byDimension, built.row.dimension);
    bump(byFaultType, built.row.fault_type);
  }
  for (const members of pending.values()) for (const m of members) card.skip('incomplete fission group', m);
  return { ...card.card(), split_rule: GRPO_SPLIT_RULE, by_dimension: sortedCounts(byDimension), by_fault_type: sortedCounts(byFaultType) };
}
