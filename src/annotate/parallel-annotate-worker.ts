/**
 * The worker thread of the parallel annotator (parallel-annotate.ts): reads the byte ranges of an
 * OpenAI or Anthropic file it is given, and for each line does what the single-threaded path of
 * `annotate --input` does, except the rare-failure index (first occurrence in file order, kept on
 * the main thread): parse, import, rules, semantic judge, backtrace, and the `--json` / `--out`
 * lines. It replies with the block's rendered lines and tally, the skipped lines, and the failure
 * signatures of its failed steps (computed here, so the main thread only looks them up).
 */
import { isAscii } from 'node:buffer';
import { openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { anthropicTrajectory } from '../trajectory/importers/anthropic.js';
import { importLine, LINE_END, type JsonLineConverter } from '../trajectory/importers/json-lines.js';
import { openAiTrajectory } from '../trajectory/importers/openai.js';
import { NO_SEMANTIC_JUDGE } from './annotate-file.js';
import { AnnotatedLines } from './annotated-lines.js';
import { annotateJudgedSync, heuristicSemanticJudge } from './judge/judged-annotation.js';
import type { FailureSignatureKey } from '../core/failure-signature.js';
import type { BlockReply, BlockRequest, BlockResult, FailureColumns, LinesPart, ParallelWorkerInit } from './parallel-annotate-protocol.js';
import { failureOccurrences, type FailureOccurrence } from './rare-failure.js';
import { RangeBuffer, readLineRange } from './read-line-range.js';

const init = workerData as ParallelWorkerInit;
const convert: JsonLineConverter = init.format === 'openai' ? openAiTrajectory : anthropicTrajectory;
const judge = init.judge === 'none' ? NO_SEMANTIC_JUDGE : heuristicSemanticJudge();
const fd = openSync(init.path, 'r');
const buffer = new RangeBuffer();

/** The block's lines as readline would give them (CRLF, LF or a lone CR end a line). */
function linesOf(bytes: Buffer): string[] {
  // Latin-1 decoding is a copy, and equals UTF-8's for ASCII, which most logs are.
  const text = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const lines = text.indexOf('\r') < 0 ? text.split('\n') : text.split(LINE_END);
  // A block ends with a line end, which leaves an empty string after it; the last block of a file
  // may not (readline yields its last line all the same, and no empty line after a final end).
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The failed steps of a run of trajectories, gathered into columns (see `FailureColumns`). */
class FailureGatherer {
  private readonly at: number[] = [];
  private readonly ids: string[] = [];
  private readonly counts: number[] = [];
  private readonly labelled: number[] = [];
  private readonly steps: number[] = [];
  private readonly times: number[] = [];
  private readonly signatureAt: number[] = [];
  private readonly signatures: FailureSignatureKey[] = [];
  private readonly signatureIndex = new Map<string, number>();

  add(at: number, trajectoryId: string, labelled: boolean, failures: readonly FailureOccurrence[]): void {
    this.at.push(at);
    this.ids.push(trajectoryId);
    this.counts.push(failures.length);
    this.labelled.push(labelled ? 1 : 0);
    for (const f of failures) {
      let index = this.signatureIndex.get(f.signature.signature);
      if (index === undefined) {
        index = this.signatures.push(f.signature) - 1;
        this.signatureIndex.set(f.signature.signature, index);
      }
      this.steps.push(f.step_index);
      this.times.push(f.timeMs);
      this.signatureAt.push(index);
    }
  }

  columns(): FailureColumns {
    return {
      at: Int32Array.from(this.at),
      ids: this.ids,
      counts: Int32Array.from(this.counts),
      labelled: Uint8Array.from(this.labelled),
      steps: Int32Array.from(this.steps),
      times: Float64Array.from(this.times),
      signatureAt: Int32Array.from(this.signatureAt),
      signatures: this.signatures,
    };
  }
}

function linesPart(rendered: AnnotatedLines, failed: FailureGatherer): LinesPart {
  const { tally } = rendered;
  return {
    kind: 'lines',
    json: rendered.json,
    jsonEnds: rendered.jsonEnds,
    out: rendered.out,
    outEnds: rendered.outEnds,
    trajectories: tally.trajectories,
    labelled: tally.labelled,
    marks: tally.marks,
    counts: [...tally.counts],
    outcomes: { ...tally.outcomes },
    failed: failed.columns(),
  };
}

function annotateBlock(request: BlockRequest): BlockResult {
  const bytes = readLineRange(fd, request.start, request.end, buffer);
  const firstOfFile = request.start === 0;
  const lines = bytes.length === 0 ? [] : linesOf(bytes);
  // JSON inside strings is parsed only where an annotator reads it (see DeferredJson).
  const options = { now: () => request.nowMs, deferJson: true, ...(init.domain === undefined ? {} : { domain: init.domain }) };
  const parts: BlockResult['parts'] = [];
  let rendered = new AnnotatedLines({ json: init.json, out: init.out });
  let failed = new FailureGatherer();
  for (let i = 0; i < lines.length; i++) {
    const item = importLine(lines[i]!, i + 1, convert, options, firstOfFile && i === 0);
    if (item === undefined) continue;
    if (item.kind === 'skipped') {
      if (rendered.length > 0) parts.push(linesPart(rendered, failed));
      parts.push({ kind: 'skipped', line: item.line, reason: item.reason });
      rendered = new AnnotatedLines({ json: init.json, out: init.out });
      failed = new FailureGatherer();
      continue;
    }
    const result = annotateJudgedSync(item.trajectory, judge);
    const t = result.trajectory;
    const failures = failureOccurrences(t);
    if (failures.length > 0) failed.add(rendered.length, t.trajectory_id, result.stored.length > 0, failures);
    rendered.add(t, result.stored, result.marks.length, init.out ? JSON.stringify(t) : undefined);
  }
  if (rendered.length > 0) parts.push(linesPart(rendered, failed));
  return { seq: request.seq, lines: lines.length, parts };
}

parentPort!.on('message', (request: BlockRequest) => {
  let reply: BlockReply;
  try {
    reply = annotateBlock(request);
  } catch (error) {
    reply = { seq: request.seq, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort!.postMessage(reply);
});
