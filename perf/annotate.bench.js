// Annotation throughput: `faultline annotate --input` (import -> trajectory -> every rule
// annotator, rare failures and the outcome backtrace, streaming) over OpenAI-format JSONL with 1M
// tool steps, against a plain readline + JSON.parse pass over the same file, in the same run.
//
// The file: perf/annotate-workload.js (deterministic: conversations of 2-12 tool calls, about one
// call in eight failing with an error body, retries, changed arguments, tool switches, loops).
// Generated once into <tmp>/faultline-perf-annotate/ and reused while its metadata matches.
//
// Contenders, interleaved over ROUNDS rounds, best round reported (wall and CPU time):
// - plain: readline + JSON.parse of every line (nothing kept);
// - annotateFile, judge none: the function behind `annotate --input --judge none` (all rules);
// - annotateFile, heuristic judge: the same with the default offline semantic judge;
// - annotateFileParallel, judge none / heuristic: the same work on worker threads
//   (src/annotate/parallel-annotate.ts: the main thread cuts the file into blocks of lines,
//   os.availableParallelism() workers annotate them, results in file order), which is what the
//   CLI runs for a large OpenAI or Anthropic file; CPU is the whole process's, workers included;
// - the CLI end to end: `node dist/cli/main.js annotate --input F --format openai --json
//   [--judge none]` spawned, stdout to /dev/null (under /usr/bin/time when present, for its
//   CPU time and peak RSS); for this file it takes the worker-thread path.
// Peak RSS over 1M and over 5M steps: annotateFile and annotateFileParallel (heuristic judge) in
// a child process that reports process.resourceUsage().maxRSS (workers included), and the CLI
// (--json --judge none) under GNU time.
//
// FAULTLINE_PERF_ANNOTATE_STEPS (default 1000000), FAULTLINE_PERF_ANNOTATE_RSS_STEPS (default
// "1000000,5000000"), FAULTLINE_PERF_ANNOTATE_ROUNDS (default 3). The 5M file (1.8 GB) is deleted
// after its run unless FAULTLINE_PERF_ANNOTATE_KEEP=1; the 1M one (0.37 GB) is kept for reruns.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { table } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'dist', 'cli', 'main.js');
const STEPS = Number(process.env.FAULTLINE_PERF_ANNOTATE_STEPS ?? 1_000_000);
const RSS_STEPS = (process.env.FAULTLINE_PERF_ANNOTATE_RSS_STEPS ?? '1000000,5000000').split(',').map(Number);
const ROUNDS = Number(process.env.FAULTLINE_PERF_ANNOTATE_ROUNDS ?? 3);
const KEEP = process.env.FAULTLINE_PERF_ANNOTATE_KEEP === '1';
const DIR = join(tmpdir(), 'faultline-perf-annotate');
/** Bump when annotate-workload.js changes, so cached files are rebuilt. */
const DATA_VERSION = 1;
const BYTES_PER_STEP = 370;
const log = (line) => process.stderr.write(`[annotate] ${line}\n`);

/** The cached workload file of `steps` tool steps, generated when missing or stale. */
async function workload(steps) {
  mkdirSync(DIR, { recursive: true });
  const path = join(DIR, `openai-${steps}.jsonl`);
  const meta = `${path}.json`;
  if (existsSync(path) && existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8'));
    if (m.version === DATA_VERSION && m.steps === steps && statSync(path).size === m.bytes) return { path, ...m };
  }
  const { bavail, bsize } = statfsSync(DIR);
  const need = steps * BYTES_PER_STEP * 1.2;
  if (bavail * bsize < need) throw new Error(`not enough room in ${DIR} for ${(need / 1e9).toFixed(1)} GB of workload`);
  log(`generating ${steps} steps into ${path}`);
  // Loaded only here: the RSS child must not load the generator (nor the library index it uses).
  const { writeOpenAiWorkload } = await import('./annotate-workload.js');
  const made = writeOpenAiWorkload(path, steps);
  const m = { version: DATA_VERSION, ...made };
  writeFileSync(meta, JSON.stringify(m));
  return { path, ...m };
}

async function plainPass(path) {
  let lines = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    if (line !== '') {
      JSON.parse(line);
      lines += 1;
    }
  }
  return lines;
}

async function parallelPass(path, judge) {
  const { annotateFileParallel } = await import('../dist/annotate/parallel-annotate.js');
  let labels = 0;
  // The --json lines are rendered (as the CLI asks), and only counted here.
  for await (const chunk of annotateFileParallel(path, { format: 'openai', judge, json: true })) for (const n of chunk.tally.counts.values()) labels += n;
  return labels;
}

async function annotatePass(path, judge) {
  const { annotateFile, NO_SEMANTIC_JUDGE } = await import('../dist/annotate/annotate-file.js');
  let labels = 0;
  for await (const result of annotateFile('openai', path, judge === 'none' ? { judge: NO_SEMANTIC_JUDGE } : {})) labels += result.stored.length;
  return labels;
}

/** The CLI, spawned; under GNU time when it exists, which reports its CPU time and peak RSS. */
function cliPass(path, judge) {
  const args = [CLI, 'annotate', '--input', path, '--format', 'openai', '--json', ...(judge === 'none' ? ['--judge', 'none'] : [])];
  const timed = existsSync('/usr/bin/time');
  const [cmd, argv] = timed ? ['/usr/bin/time', ['-f', 'TIME %U %S %M', process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`faultline annotate exited ${code}: ${err.trim().slice(-500)}`));
      const m = /TIME ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      resolve(m === null ? {} : { cpuMs: (Number(m[1]) + Number(m[2])) * 1000, maxRssMb: Number(m[3]) / 1024 });
    });
  });
}

async function timed(fn) {
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const value = await fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: value?.cpuMs ?? (cpu.user + cpu.system) / 1000, value };
}

/** Runs this file as a child over `path` and returns what it reports (`cli`: the CLI under GNU time). */
async function rssChild(path, mode) {
  if (mode === 'cli') {
    const start = Date.now();
    const r = await cliPass(path, 'none');
    return { trajectories: undefined, ms: Date.now() - start, maxRssKb: r.maxRssMb === undefined ? NaN : r.maxRssMb * 1024 };
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--rss-child', path, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`rss child exited ${code}`))));
  });
}

const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export async function run() {
  const file = await workload(STEPS);
  const loadBefore = loadAverage();
  const startedAt = new Date().toISOString();
  const mb = file.bytes / 1e6;
  const contenders = {
    'plain: readline + JSON.parse': () => plainPass(file.path),
    'annotateFile, --judge none (all rules)': () => annotatePass(file.path, 'none'),
    'annotateFile, heuristic judge (default)': () => annotatePass(file.path, 'heuristic'),
    'annotateFileParallel, --judge none': () => parallelPass(file.path, 'none'),
    'annotateFileParallel, heuristic judge': () => parallelPass(file.path, 'heuristic'),
    'CLI annotate --input --json --judge none': () => cliPass(file.path, 'none'),
    'CLI annotate --input --json (default)': () => cliPass(file.path, 'heuristic'),
  };
  const best = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of Object.entries(contenders)) {
      const r = await timed(fn);
      log(`round ${round + 1} ${name}: ${r.ms.toFixed(0)} ms wall, ${r.cpuMs.toFixed(0)} ms CPU`);
      const b = (best[name] ??= { ms: Infinity, cpuMs: Infinity });
      b.ms = Math.min(b.ms, r.ms);
      b.cpuMs = Math.min(b.cpuMs, r.cpuMs);
      if (r.value?.maxRssMb !== undefined) b.maxRssMb = r.value.maxRssMb;
    }
  }
  const loadAfter = loadAverage();
  const plain = best['plain: readline + JSON.parse'];
  const verdict = best['CLI annotate --input --json --judge none'];
  const verdictRatio = verdict.ms / plain.ms;
  const rows = Object.entries(best).map(([name, b]) => [
    name,
    `${(b.ms / 1000).toFixed(2)} s`,
    `${(b.ms / plain.ms).toFixed(2)}x`,
    `${(b.cpuMs / 1000).toFixed(2)} s`,
    `${(b.cpuMs / plain.cpuMs).toFixed(2)}x`,
    `${(mb / (b.ms / 1000)).toFixed(0)}`,
    b.maxRssMb === undefined ? '' : b.maxRssMb.toFixed(0),
  ]);

  const rssRows = [];
  for (const steps of RSS_STEPS) {
    const w = await workload(steps);
    const paths = { single: 'annotateFile (one thread), heuristic judge', parallel: 'annotateFileParallel (workers), heuristic judge', cli: 'CLI `annotate --input --json --judge none` (workers)' };
    for (const mode of ['single', 'parallel', 'cli']) {
      const r = await rssChild(w.path, mode);
      log(`rss child ${mode} ${steps} steps: ${JSON.stringify(r)}`);
      rssRows.push([`${steps / 1e6}M steps (${(w.bytes / 1e9).toFixed(2)} GB, ${w.conversations} conversations)`, paths[mode], r.trajectories ?? w.conversations, `${(r.ms / 1000).toFixed(1)} s`, (r.maxRssKb / 1024).toFixed(0)]);
    }
    if (!KEEP && steps !== STEPS) rmSync(w.path, { force: true }), rmSync(`${w.path}.json`, { force: true });
  }
  return {
    title: 'Annotation throughput',
    markdown: [
      `OpenAI-format JSONL, ${STEPS / 1e6}M tool steps in ${file.conversations} conversations (${mb.toFixed(0)} MB). Best of ${ROUNDS} interleaved rounds, started ${startedAt}; load average (1, 5, 15 min) ${loadBefore} before, ${loadAfter} after, on ${cpus().length} cores.`,
      '',
      table(['pass', 'wall', 'vs plain (wall)', 'CPU', 'vs plain (CPU)', 'MB/s (wall)', 'peak RSS MB'], rows),
      '',
      `Goal (CLI, all rule annotators, at most 2x the plain pass's wall time): ${verdictRatio <= 2 ? '**met**' : '**not met**'}, ${verdictRatio.toFixed(2)}x.`,
      '',
      'Peak RSS: the library paths in a child process (`process.resourceUsage().maxRSS`, worker threads included), the CLI under GNU time (`%M`):',
      '',
      table(['file', 'path', 'trajectories', 'time', 'peak RSS MB'], rssRows),
    ].join('\n'),
  };
}

// Child mode: annotate one file and report the process's peak RSS.
if (process.argv[2] === '--rss-child') {
  const { annotateFile } = await import('../dist/annotate/annotate-file.js');
  const { annotateFileParallel } = await import('../dist/annotate/parallel-annotate.js');
  const start = Date.now();
  let trajectories = 0;
  if (process.argv[4] === 'parallel') for await (const chunk of annotateFileParallel(process.argv[3], { format: 'openai', judge: 'heuristic', json: true })) trajectories += chunk.tally.trajectories;
  else for await (const result of annotateFile('openai', process.argv[3])) trajectories += result.stored.length >= 0 ? 1 : 0;
  process.stdout.write(JSON.stringify({ trajectories, ms: Date.now() - start, maxRssKb: process.resourceUsage().maxRSS }));
}
