/**
 * The worker thread of the parallel annotator (parallel-annotate.ts): takes blocks of whole JSON
 * lines of an OpenAI or Anthropic file, and for each line does what the single-threaded
 * `annotateFile` does, except the rare-failure index (first occurrence in file order, kept on the
 * main thread): parse, import, rules, semantic judge, backtrace. Replies with one compact result
 * per trajectory or skipped line, numbered within the block.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { anthropicTrajectory } from '../trajectory/importers/anthropic.js';
import { importLine, LINE_END, type JsonLineConverter } from '../trajectory/importers/json-lines.js';
import { openAiTrajectory } from '../trajectory/importers/openai.js';
import { NO_SEMANTIC_JUDGE } from './annotate-file.js';
import { annotateJudged, heuristicSemanticJudge } from './judge/judged-annotation.js';
import type { BlockReply, BlockRequest, BlockItem, ParallelWorkerInit, RareStep } from './parallel-annotate-protocol.js';
import type { TrajectoryStep } from '../trajectory/types.js';

const init = workerData as ParallelWorkerInit;
const convert: JsonLineConverter = init.format === 'openai' ? openAiTrajectory : anthropicTrajectory;
const judge = init.judge === 'none' ? NO_SEMANTIC_JUDGE : heuristicSemanticJudge();
const decoder = new TextDecoder();

/** What the main thread's rare-failure index reads of a failed step (see `stepSignature`). */
function rareStep(step: TrajectoryStep): RareStep {
  return {
    step_index: step.step_index,
    status: step.status,
    tool_name: step.tool_name,
    failure_stage: step.failure_stage,
    failure_kind: step.failure_kind,
    ...(step.started_at === undefined ? {} : { started_at: step.started_at }),
    response: {
      ...(step.response.error_code === undefined ? {} : { error_code: step.response.error_code }),
      ...(step.response.message === undefined ? {} : { message: step.response.message }),
    },
  };
}

async function annotateBlock(request: BlockRequest): Promise<BlockReply> {
  const lines = decoder.decode(request.bytes).split(LINE_END);
  // A block ends with a line end, which leaves an empty string after it; the last block of a file
  // may not (readline yields its last line all the same, and no empty line after a final end).
  if (lines[lines.length - 1] === '') lines.pop();
  const options = { now: () => request.nowMs, ...(init.domain === undefined ? {} : { domain: init.domain }) };
  const items: BlockItem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const item = importLine(lines[i]!, i + 1, convert, options, request.firstOfFile && i === 0);
    if (item === undefined) continue;
    if (item.kind === 'skipped') {
      items.push({ kind: 'skipped', line: item.line, reason: item.reason });
      continue;
    }
    const result = await annotateJudged(item.trajectory, judge);
    const t = result.trajectory;
    const failed: RareStep[] = [];
    for (const step of t.steps) if (step.status !== null && step.status !== 'success') failed.push(rareStep(step));
    items.push({
      kind: 'trajectory',
      trajectory_id: t.trajectory_id,
      source_id: t.source_id,
      created_at: t.created_at,
      stored: result.stored,
      marks: result.marks.length,
      failed,
      ...(init.trajectoryJson ? { json: JSON.stringify(t) } : {}),
    });
  }
  return { seq: request.seq, lines: lines.length, items };
}

parentPort!.on('message', (request: BlockRequest) => {
  annotateBlock(request).then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) => parentPort!.postMessage({ seq: request.seq, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
